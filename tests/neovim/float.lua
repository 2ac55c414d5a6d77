-- :RutterInstructions on a Go file of the monorepo: the float, its window and buffer.
local H = dofile(vim.env.RUTTER_NVIM_HARNESS)
H.run(function(R)
  require("rutter").setup({})
  local buf = H.edit("services/api/internal/parser/input.go")
  local source_win = vim.api.nvim_get_current_win()
  -- Right after :edit, before the server is even started: the command waits for it.
  R.attached_at_command = #vim.lsp.get_clients({ bufnr = buf, name = "rutter" })
  local f = H.float_after("RutterInstructions", "the float")
  local client = H.attached(buf)
  R.root_dir = client.root_dir
  R.folder_names = vim.tbl_map(function(folder)
    return folder.name
  end, client.workspace_folders or {})
  R.offset_encoding = client.offset_encoding
  R.float = H.float_data(f)
  R.focused = vim.api.nvim_get_current_win() == f.win
  R.win_config = vim.api.nvim_win_get_config(f.win)
  R.win_config.win = nil
  R.buffer = {
    buftype = vim.bo[f.buf].buftype,
    modifiable = vim.bo[f.buf].modifiable,
    filetype = vim.bo[f.buf].filetype,
    clients = #vim.lsp.get_clients({ bufnr = f.buf }),
  }
  R.source_win_unchanged = vim.api.nvim_win_get_buf(source_win) == buf
end)
