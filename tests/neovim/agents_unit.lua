-- Pure formatting of agent views (lua/rutter/agents_format.lua), without a server: run with
-- `nvim --clean --headless -l agents_unit.lua`. tests/test_neovim_agents.py asserts on it.
vim.opt.runtimepath:prepend(vim.env.RUTTER_NVIM_PLUGIN)
local H = dofile(vim.env.RUTTER_NVIM_HARNESS)
local fmt = require("rutter.agents_format")

local function source(path, truncation)
  return { path = path, why = "why " .. path, truncation = truncation or vim.NIL }
end

H.run(function(R)
  -- Every agent loads AGENTS.md; two of five load SHARED.md ("only"), three load WIDE.md
  -- ("not"); Gemini loads nothing; a JSON null truncation is no cut.
  local result = {
    profiles = {
      { agent = "codex", sources = { source("AGENTS.md", { byte = 10, line = 2, lost_bytes = 5 }), source("SHARED.md"), source("WIDE.md") } },
      { agent = "claude", sources = { source("AGENTS.md"), source("SHARED.md"), source("WIDE.md") } },
      { agent = "gemini", sources = {} },
      { agent = "copilot", sources = { source("AGENTS.md"), source("WIDE.md") } },
      { agent = "cursor", sources = { source("AGENTS.md") } },
    },
  }
  R.columns = vim.tbl_map(function(column)
    return { agent = column.agent, lines = column.lines }
  end, fmt.columns(result))
  -- Claude loads CLAUDE.md, a link to AGENTS.md: compared by file, it is what the others load.
  local linked = {
    profiles = {
      { agent = "codex", sources = { source("AGENTS.md") } },
      { agent = "claude", sources = { source("CLAUDE.md") } },
      { agent = "gemini", sources = { source("GEMINI.md") } },
    },
  }
  local real = { ["CLAUDE.md"] = "/ws/AGENTS.md", ["AGENTS.md"] = "/ws/AGENTS.md", ["GEMINI.md"] = "/ws/GEMINI.md" }
  R.linked_columns = vim.tbl_map(function(column)
    return { agent = column.agent, lines = column.lines }
  end, fmt.columns(linked, function(path) return real[path] end))
  R.linked_by_name = vim.tbl_map(function(column)
    return { agent = column.agent, lines = column.lines }
  end, fmt.columns(linked))
  R.cut_null = fmt.cut_text(vim.NIL) or vim.NIL
  R.names = vim.tbl_map(fmt.name, { "codex", "claude", "gemini", "copilot", "cursor", "default", "other" })
  local lines = fmt.view_lines({ agent = "gemini", sources = {} }, { target = "a/b.go" })
  R.empty_view = lines
  local one = fmt.view_lines({ agent = "cursor", sources = { source("x.mdc") } }, { target = "t" })
  R.one_view = one
end)
