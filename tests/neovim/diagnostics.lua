-- Diagnostics on broken and secret-bearing instruction files, and the float's typed error.
local H = dofile(vim.env.RUTTER_NVIM_HARNESS)

local FILES = {
  broken = "services/web/.prayu/rules/broken.md",
  symlink = "tools/AGENTS.md",
  secret = "docs/CLAUDE.md",
  root_claude = "CLAUDE.md",
  superseded = "services/api/AGENTS.md",
  ignored = ".prayu/rules/drafts/wip.md",
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
  R.symlink_buffer_name = vim.api.nvim_buf_get_name(bufs.symlink)
  R.broken_lenses = H.lenses(bufs.broken)

  -- What a user sees with the default `vim.diagnostic.open_float()`.
  vim.api.nvim_set_current_buf(bufs.broken)
  local float_buf, float_win = vim.diagnostic.open_float({ bufnr = bufs.broken, scope = "buffer" })
  R.diagnostic_float = vim.api.nvim_buf_get_lines(assert(float_buf), 0, -1, false)
  vim.api.nvim_win_close(float_win, true)

  -- A file below the broken rule: discovery fails closed, the float says why.
  local app = H.edit("services/web/src/app.ts")
  H.attached(app)
  R.error_float = H.float_data(H.float_after("RutterInstructions", "the error float"))
end)
