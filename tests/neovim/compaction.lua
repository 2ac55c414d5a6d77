-- :RutterCompact as a user drives it: the focus asked, the summary opened read-only in a
-- split, then the same thread compacted again with nothing new: the typed error shown.
local H = dofile(vim.env.RUTTER_NVIM_HARNESS)
local api = vim.api

local events = {}
api.nvim_create_autocmd("User", {
  pattern = "RutterCompaction",
  callback = function(args)
    events[#events + 1] = args.data or {}
  end,
})

local function after(fn)
  local before = #events
  fn()
  local found
  H.wait("RutterCompaction", function()
    if #events > before then
      found = events[#events]
      return true
    end
  end)
  return found
end

local prompts, inputs = {}, {}
vim.ui.input = function(opts, on_confirm)
  prompts[#prompts + 1] = opts.prompt
  on_confirm(table.remove(inputs, 1))
end

H.run(function(R)
  require("rutter").setup({})
  local main = H.edit("svc/main.go")
  H.attached(main)

  inputs = { "the lexer" }
  local done = after(function()
    vim.cmd("RutterCompact")
  end)
  R.prompts = prompts
  R.result = done.result
  local buf = api.nvim_get_current_buf()
  R.view = {
    name = api.nvim_buf_get_name(buf),
    lines = api.nvim_buf_get_lines(buf, 0, -1, false),
    modifiable = vim.bo[buf].modifiable,
    buftype = vim.bo[buf].buftype,
    split = api.nvim_win_get_config(0).relative == "" and #api.nvim_tabpage_list_wins(0) == 2,
  }
  vim.cmd("close")

  local again = after(function()
    vim.cmd("RutterCompact again")
  end)
  R.error = again.error
  R.last_error = require("rutter.compaction").last_error
end)
