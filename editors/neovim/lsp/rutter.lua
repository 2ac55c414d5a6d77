-- rutter language server: which project instructions (AGENTS.md, CLAUDE.md, .claude/CLAUDE.md,
-- .prayu/…) apply to the file in front of you, and why.
--
-- Neovim 0.11: put this plugin on 'runtimepath' and call `vim.lsp.enable("rutter")`
-- (or `require("rutter").setup()`). Override any field with `vim.lsp.config("rutter", {...})`.
return {
  cmd = { "rutter-lsp" },

  -- No `filetypes`: attach to every filetype. The stack is wanted for any source file, and
  -- the instruction files themselves (markdown, plus the ignore file) get hover, code lens and
  -- diagnostics. Buffers without a filetype fire no FileType event, so nothing attaches there;
  -- `:RutterInstructions` still works for them through a running client of the same root.
  filetypes = nil,

  -- The workspace root must be the top of the project: discovery walks from the root down to
  -- the file. Plain `root_markers` pick the *nearest* marker, which for AGENTS.md or .prayu
  -- would be a nested service directory and would hide every instruction file above it.
  -- So: the nearest `.git`; else the outermost directory holding `.prayu`, AGENTS.md,
  -- AGENTS.override.md, CLAUDE.md or .claude/CLAUDE.md; else rutter does not start. For files
  -- under $HOME, neither search reaches $HOME itself or above.
  -- (No `root_markers`: `root_dir` decides, see lua/rutter/root.lua.)
  root_dir = function(bufnr, on_dir)
    require("rutter.root").root_dir(bufnr, on_dir)
  end,

  -- Neovim names a workspace folder by its full path; the server derives the workspace ID
  -- from the folder name (docs/reference/workspaces.md), so send the directory's name, as VS Code does:
  -- ~/src/shop is registered as "shop", not "home-me-src-shop".
  before_init = function(params)
    if type(params.workspaceFolders) == "table" then
      local folders = {}
      for _, folder in ipairs(params.workspaceFolders) do
        local path = vim.uri_to_fname(folder.uri)
        folders[#folders + 1] = { uri = folder.uri, name = vim.fs.basename(path) }
      end
      params.workspaceFolders = folders
    end
  end,

  -- Live updates: the plugin (lua/rutter/watch.lua) watches the directories discovery reads
  -- for the open buffers and sends `workspace/didChangeWatchedFiles` itself; the server then
  -- sends `rutter/instructionsChanged`. Neovim's own watcher stays off: 0.11 enables it only
  -- on macOS/Windows, and its Linux fallback misses AGENTS.md in nested directories.
  -- Without the plugin's Lua modules, saves in Neovim (didSave) still update everything.
  capabilities = {
    workspace = {
      didChangeWatchedFiles = { dynamicRegistration = false },
    },
  },

  -- Same object in both: `databaseUrl` (SQLAlchemy URL; default $RUTTER_DATABASE_URL, else
  -- $RUTTER_HOME/rutter.db) and `logLevel` ("error" | "warning" | "info" | "debug").
  -- `settings.rutter` answers `workspace/configuration`; change it at run time with
  -- `client:notify("workspace/didChangeConfiguration", { settings = client.settings })`.
  -- "warning": Neovim files every line a server writes to stderr as [ERROR] in lsp.log, so
  -- routine info lines would read as errors there; set "info" or "debug" to investigate.
  init_options = { rutter = { logLevel = "warning" } },
  settings = { rutter = { logLevel = "warning" } },

  handlers = {
    -- The server's messages, questions and documents (lua/rutter/ui.lua): information that
    -- fits the command line, no "Press ENTER" after answering a question, and a document
    -- (the refresh review) opened in a split beside the buffer instead of in its place.
    ["window/showMessage"] = function(err, params, ctx)
      return require("rutter.ui").show_message(err, params, ctx)
    end,
    ["window/showMessageRequest"] = function(err, params, ctx)
      return require("rutter.ui").show_message_request(err, params, ctx)
    end,
    ["window/showDocument"] = function(err, params, ctx)
      return require("rutter.ui").show_document(err, params, ctx)
    end,
    ["rutter/instructionsChanged"] = function(err, params, ctx)
      return require("rutter").on_instructions_changed(err, params, ctx)
    end,
    -- Runs created, refreshed or ended (also by the CLI), or gone stale: reload :RutterRuns.
    ["rutter/runsChanged"] = function(err, params, ctx)
      return require("rutter.runs").on_runs_changed(err, params, ctx)
    end,
    -- Threads, nodes, messages, notes or checkpoints changed (also by the CLI): reload an
    -- open :RutterTree and fire `User RutterSessionsChanged`.
    ["rutter/sessionsChanged"] = function(err, params, ctx)
      return require("rutter.session").on_sessions_changed(err, params, ctx)
    end,
    -- An agent proposed a pin (or one was answered): ask about each new one once.
    ["rutter/pinProposalsChanged"] = function(err, params, ctx)
      return require("rutter.pins").on_proposals_changed(err, params, ctx)
    end,
  },
}
