-- Keys in the float: <CR> on a row opens that file in the window the float came from; q closes.
local H = dofile(vim.env.RUTTER_NVIM_HARNESS)
H.run(function(R)
  require("rutter").setup({})
  local source = H.edit("services/api/internal/parser/input.go")
  H.attached(source)
  local source_win = vim.api.nvim_get_current_win()
  local windows = #vim.api.nvim_list_wins()

  -- <CR> on the row of a source.
  local f = H.float_after("RutterInstructions", "the float")
  local row = assert(H.row_of(f, "services/api/.claude/CLAUDE.md"))
  vim.api.nvim_win_set_cursor(f.win, { row, 0 })
  H.press("<CR>")
  R.after_enter = {
    buffer = vim.api.nvim_buf_get_name(0),
    in_source_win = vim.api.nvim_get_current_win() == source_win,
    float_open = H.float() ~= nil,
    float_win_valid = vim.api.nvim_win_is_valid(f.win),
    windows = #vim.api.nvim_list_wins(),
  }

  -- The opened instruction file gets its own stack; <CR> on an ignored entry opens it too.
  H.attached(0)
  f = H.float_after("RutterInstructions", "the float of the opened file")
  R.second_target = f.target
  row = assert(H.row_of(f, ".prayu/rules/drafts/wip.md"))
  vim.api.nvim_win_set_cursor(f.win, { row, 0 })
  H.press("<CR>")
  R.after_ignored_enter = vim.api.nvim_buf_get_name(0)

  -- <CR> on a line without a file keeps the float open; q closes it.
  f = H.float_after("RutterInstructions", "the float again")
  vim.api.nvim_win_set_cursor(f.win, { #f.lines, 0 }) -- the key help line
  H.press("<CR>")
  R.open_after_plain_enter = H.float() ~= nil
  H.press("q")
  R.after_q = {
    float_open = H.float() ~= nil,
    float_win_valid = vim.api.nvim_win_is_valid(f.win),
    float_buf_valid = vim.api.nvim_buf_is_valid(f.buf),
    buffer = vim.api.nvim_buf_get_name(0),
    windows = #vim.api.nvim_list_wins(),
  }
  R.windows_before = windows
end)
