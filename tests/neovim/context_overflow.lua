-- :RutterContext as a user drives it when the required context does not fit the budget: the
-- overflow shown with its figures, the fixes offered through vim.ui.select; "Raise budget…"
-- (vim.ui.input) assembles again with the budget typed; "Remove pins…" offers the required
-- pins, removes the chosen one and assembles again, offering the fixes again while it still
-- overflows.
local H = dofile(vim.env.RUTTER_NVIM_HARNESS)
local api = vim.api

local events = {}
api.nvim_create_autocmd("User", {
  pattern = "RutterContext",
  callback = function(args)
    events[#events + 1] = args.data or {}
  end,
})

--- Run `fn`, then wait for the next RutterContext event with a result; return what came.
local function until_result(fn)
  local before = #events
  fn()
  local found
  H.wait("the assembled context", function()
    for index = before + 1, #events do
      if events[index].result ~= nil then
        found = events[index]
        return true
      end
    end
  end)
  local errors = {}
  for index = before + 1, #events do
    if events[index].error ~= nil then
      errors[#errors + 1] = events[index].error
    end
  end
  return found, errors
end

local asked, answers, prompts, inputs = {}, {}, {}, {}
vim.ui.select = function(items, opts, on_choice)
  local titles = {}
  for _, item in ipairs(items) do
    titles[#titles + 1] = opts.format_item and opts.format_item(item) or tostring(item)
  end
  asked[#asked + 1] = { prompt = opts.prompt, items = titles }
  local wanted = table.remove(answers, 1)
  for index, title in ipairs(titles) do
    if wanted and title:find(wanted, 1, true) then
      return on_choice(items[index], index)
    end
  end
  on_choice(nil, nil)
end
vim.ui.input = function(opts, on_confirm)
  prompts[#prompts + 1] = { prompt = opts.prompt, default = opts.default }
  on_confirm(table.remove(inputs, 1))
end
local errors_shown = {}
local notify = vim.notify
vim.notify = function(message, level, opts)
  if level == vim.log.levels.ERROR then
    errors_shown[#errors_shown + 1] = message
  end
  return notify(message, level, opts)
end

H.run(function(R)
  require("rutter").setup({})
  local main = H.edit("svc/main.go")
  H.attached(main)

  -- 1. Raise budget…: assembled again with 60000.
  answers = { "Raise budget…" }
  inputs = { "60000" }
  local raised, errors = until_result(function()
    vim.cmd("RutterContext")
  end)
  R.first_error = errors[1]
  R.first_shown = errors_shown[1]
  R.raised_budget = raised.result.budget.background
  R.raised_view = api.nvim_buf_get_lines(api.nvim_get_current_buf(), 0, 2, false)
  R.raised_name = api.nvim_buf_get_name(api.nvim_get_current_buf())
  vim.cmd("close")

  -- 2. Remove pins…, twice: after one pin the context still overflows, after two it fits.
  api.nvim_set_current_win(vim.fn.bufwinid(main))
  answers = { "Remove pins…", "pin_", "Remove pins…", "pin_" }
  local fitted, again = until_result(function()
    vim.cmd("RutterContext")
  end)
  R.removed_errors = #again
  R.fitted_budget = fitted.result.budget.background
  R.asked = asked
  R.prompts = prompts
end)
