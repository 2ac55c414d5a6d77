-- Without file watchers (watch_files = false, server started as `python -m rutter_lsp.server`):
-- an external rewrite shows after :RutterInstructionsRefresh; a `:w` in Neovim updates the
-- open float by itself (didSave → rutter/instructionsChanged → the plugin's handler).
local H = dofile(vim.env.RUTTER_NVIM_HARNESS)
local token = assert(vim.env.RUTTER_NVIM_TOKEN)

H.run(function(R)
  require("rutter").setup({
    watch_files = false,
    cmd = { vim.env.RUTTER_NVIM_PYTHON, "-m", "rutter_lsp.server" },
  })
  local buf = H.edit("services/api/internal/parser/input.go")
  local client = H.attached(buf)
  R.cmd = client.config.cmd
  R.advertised = client.capabilities.workspace.didChangeWatchedFiles.dynamicRegistration
  local f = H.float_after("RutterInstructions", "the float")
  R.before = H.float_data(f)

  -- 1. External rewrite: nothing tells Neovim; the refresh command re-asks the server.
  H.write_disk(
    "services/api/internal/parser/AGENTS.md",
    "# Parser\n\nBenchmark with the CI key " .. token .. " before merging.\n"
  )
  vim.wait(1500, function()
    return false
  end)
  R.unchanged_without_watchers = vim.deep_equal(H.float().lines, R.before.lines)
  R.registrations = client.registrations["workspace/didChangeWatchedFiles"] or vim.NIL
  R.watched = require("rutter.watch").watched(client.id)
  R.after_refresh = H.float_data(H.float_after("RutterInstructionsRefresh", "the refreshed float", function(now)
    return H.contains(now.lines, "services/api/internal/parser/AGENTS.md — github_token x1")
  end))

  -- 2. `:w` of a now-blank AGENTS.override.md from the window the float came from.
  vim.cmd.wincmd("p")
  R.editing_from = vim.api.nvim_buf_get_name(0)
  local override = H.edit("services/api/AGENTS.override.md")
  H.attached(override)
  local changes = #H.changes()
  vim.api.nvim_buf_set_lines(override, 0, -1, false, { "   " })
  vim.cmd.write()
  H.wait("the float to follow the saved override", function()
    local now = H.float()
    return now and #H.changes() > changes and H.contains(now.lines, "services/api/AGENTS.override.md — blank override")
  end)
  R.after_save = H.float_data()
  R.float_still_open = H.float() ~= nil
end)
