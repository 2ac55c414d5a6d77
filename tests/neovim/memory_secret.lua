-- A memory holding a secret, saved from Neovim: the server refuses it, the plugin asks
-- (vim.ui.select) whether to store it redacted; "Keep editing" saves nothing, "Store with the
-- secrets redacted" stores it and shows the stored (redacted) text in the buffer.
local H = dofile(vim.env.RUTTER_NVIM_HARNESS)
local api = vim.api

local events = {}
api.nvim_create_autocmd("User", {
  pattern = "RutterMemory",
  callback = function(args)
    local data = args.data or {}
    events[#events + 1] = { action = data.action, error = data.error, result = data.result }
  end,
})

local function next_event(action, fn)
  local before = #events
  fn()
  local found
  H.wait("a " .. action .. " outcome", function()
    for index = before + 1, #events do
      if events[index].action == action then
        found = events[index]
        return true
      end
    end
  end)
  return found
end

H.run(function(R)
  require("rutter").setup({})
  local source = H.edit("services/api/internal/parser/input.go")
  H.attached(source)
  next_event("list", function()
    vim.cmd("RutterMemory")
  end)
  H.press("A")
  H.wait("the draft buffer", function()
    return vim.api.nvim_buf_get_name(0):find("rutter://memory/new", 1, true) ~= nil
  end)
  local draft = api.nvim_get_current_buf()
  api.nvim_buf_set_lines(draft, 0, -1, false, {
    "Deploy token",
    "",
    "deploy with " .. vim.env.RUTTER_NVIM_TOKEN .. " from the CI box",
  })

  local asked = {}
  local answers = { "Keep editing", "Store with the secrets redacted" }
  vim.ui.select = function(items, opts, on_choice)
    asked[#asked + 1] = { prompt = opts.prompt, items = items, kind = opts.kind }
    local wanted = table.remove(answers, 1)
    for index, item in ipairs(items) do
      if item == wanted then
        return on_choice(item, index)
      end
    end
    on_choice(nil, nil)
  end

  R.kept = next_event("create", function()
    vim.cmd("write")
  end)
  R.kept_modified = vim.bo[draft].modified
  R.created = next_event("create", function()
    vim.cmd("write")
  end)
  R.asked = asked
  R.buffer_lines = api.nvim_buf_get_lines(draft, 0, -1, false)
  R.buffer_name = api.nvim_buf_get_name(draft)
  R.modified = vim.bo[draft].modified
end)
