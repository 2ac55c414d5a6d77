-- What each agent would do with an instruction file, as Neovim shows the server's diagnostics.
local H = dofile(vim.env.RUTTER_NVIM_HARNESS)

local FILES = {
  cut = "services/api/AGENTS.override.md",
  claude = "AGENTS.md",
  glob = ".github/instructions/rust.instructions.md",
}

H.run(function(R)
  require("rutter").setup({})
  local bufs = {}
  for key, rel in pairs(FILES) do
    bufs[key] = H.edit(rel)
    H.attached(bufs[key])
  end
  R.diagnostics = {}
  for key, buf in pairs(bufs) do
    H.wait("diagnostics on " .. FILES[key], function()
      return #vim.diagnostic.get(buf) > 0
    end)
    R.diagnostics[key] = H.diagnostics(buf)
  end
  vim.api.nvim_set_current_buf(bufs.cut)
  local float_buf, float_win = vim.diagnostic.open_float({ bufnr = bufs.cut, scope = "buffer" })
  R.float = vim.api.nvim_buf_get_lines(assert(float_buf), 0, -1, false)
  vim.api.nvim_win_close(float_win, true)
end)
