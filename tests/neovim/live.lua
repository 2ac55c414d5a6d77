-- Live updates: files rewritten and created on disk behind Neovim's back (as an agent or a
-- `git checkout` would) reach the open float through the plugin's watchers
-- (workspace/didChangeWatchedFiles) and the server's `rutter/instructionsChanged`; no command
-- is run.
local H = dofile(vim.env.RUTTER_NVIM_HARNESS)
local token = assert(vim.env.RUTTER_NVIM_TOKEN)

H.run(function(R)
  require("rutter").setup({})
  local buf = H.edit("services/api/internal/parser/input.go")
  local client = H.attached(buf)
  R.advertised = client.capabilities.workspace.didChangeWatchedFiles.dynamicRegistration
  local watch = require("rutter.watch")
  H.wait("the plugin's watchers", function()
    return #watch.watched(client.id) > 0
  end)
  R.watched = watch.watched(client.id)

  local f = H.float_after("RutterInstructions", "the float")
  R.before = H.float_data(f)
  local updates = #H.updates()

  -- 1. An AGENTS.md of the stack is rewritten with a secret in it.
  H.write_disk(
    "services/api/internal/parser/AGENTS.md",
    "# Parser\n\nBenchmark with the CI key " .. token .. " before merging.\n"
  )
  H.wait("the float to show the rewritten AGENTS.md", function()
    local now = H.float()
    return now and H.contains(now.lines, "services/api/internal/parser/AGENTS.md — github_token x1")
  end)
  R.after_rewrite = H.float_data()
  R.updates_after_rewrite = #H.updates() - updates
  R.still_focused = vim.api.nvim_get_current_win() == f.win

  -- 2. A new instruction file appears between two levels.
  H.write_disk("services/api/internal/CLAUDE.md", "# Internal packages\n\nNo exported globals.\n")
  H.wait("the float to show the new CLAUDE.md", function()
    local now = H.float()
    return now and H.contains(now.lines, "services/api/internal/CLAUDE.md")
  end)
  R.after_create = H.float_data()
  R.watched_after = watch.watched(client.id)
end)
