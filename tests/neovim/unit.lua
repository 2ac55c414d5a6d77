-- Pure parts of the plugin, without a server: run with `nvim --clean --headless -l unit.lua`.
-- Writes each function's output for fixed inputs; tests/test_neovim.py asserts on them.
vim.opt.runtimepath:prepend(vim.env.RUTTER_NVIM_PLUGIN)
local H = dofile(vim.env.RUTTER_NVIM_HARNESS)

local function rows(map)
  local out = {}
  for row, path in pairs(map) do
    out[tostring(row)] = path
  end
  return out
end

local function formatted(result, opts)
  local lines, row_to_path, hl = require("rutter.format").lines(result, opts)
  return { lines = lines, rows = rows(row_to_path), hl = rows(hl) }
end

local SNAPSHOT = {
  protocol_version = "project_instruction_snapshot.v1",
  workspace_id = "demo",
  target_path = "internal/parser/input.go",
  fingerprint = string.rep("ab", 32),
  sources = {
    {
      ordinal = 1,
      path = "AGENTS.md",
      kind = "agents",
      precedence = 0,
      why_effective = "workspace-root AGENTS.md; inherited (depth 0)",
      redacted = false,
      redactions = {},
    },
    {
      ordinal = 12,
      path = "internal/.prayu/rules/db.md",
      kind = "prayu_rule",
      precedence = 110,
      why_effective = "rule db.md of internal",
      redacted = true,
      redactions = { { kind = "github_token", count = 2 }, { kind = "private_key", count = 1 } },
    },
  },
  ignored = {
    { path = "svc/AGENTS.md", reason = "superseded", superseded_by = "svc/AGENTS.override.md" },
    { path = ".prayu/rules/private.md", reason = "ignore_file", line = 3, pattern = "private.md" },
    { path = "x/AGENTS.override.md", reason = "blank_override" },
    { path = "y/CLAUDE.md", reason = "some_future_reason", line = vim.NIL },
  },
  conflicts = {
    {
      role = "agents",
      lower_precedence_path = "AGENTS.md",
      higher_precedence_path = "internal/AGENTS.md",
      resolution = "both apply; internal/AGENTS.md is nearer to the target and wins where they conflict",
    },
  },
}

H.run(function(R)
  R.snapshot = formatted(SNAPSHOT)
  R.empty = formatted({
    workspace_id = "demo",
    target_path = "README",
    fingerprint = "f00",
    sources = {},
    ignored = {},
    conflicts = {},
  }, { footer = false })
  R.error = formatted({
    error = {
      code = "symlink",
      message = "tools/AGENTS.md is a symbolic link",
      path = "tools/AGENTS.md",
      details = { offset = 19, kind = "link" },
    },
  }, { target = "tools/x.go" })
  R.outside = formatted({
    error = { code = "not_registered", message = "/elsewhere/a.txt is not inside a workspace folder", path = "/elsewhere/a.txt" },
  }, { target = "/elsewhere/a.txt" })
  R.no_answer = formatted(nil, { target = "a.go", footer = false })

  local base = assert(vim.env.RUTTER_NVIM_ROOTS)
  local home = base .. "/home"
  local root = require("rutter.root")
  R.roots = {
    nested_markers = root.find(home .. "/proj/svc/deep/file.go", { home = home }) or vim.NIL,
    git_wins = root.find(home .. "/outer/repo/a/x.go", { home = home }) or vim.NIL,
    git_file = root.find(home .. "/wt/src/x.go", { home = home }) or vim.NIL,
    home_markers_only = root.find(home .. "/notes/x.md", { home = home }) or vim.NIL,
    nothing = root.find(home .. "/plain/x.txt", { home = home }) or vim.NIL,
    dotfiles_git_at_home = root.find(home .. "/dots/sub/x.go", { home = home }) or vim.NIL,
  }

  local rutter = require("rutter")
  R.instruction_files = {}
  for _, path in ipairs({
    "/w/AGENTS.md",
    "/w/a/AGENTS.override.md",
    "/w/CLAUDE.md",
    "/w/a/.claude/CLAUDE.md",
    "/w/.prayu/instructions.md",
    "/w/.prayu/instructions.ignore",
    "/w/a/.prayu/rules/x/y.MD",
    "/w/README.md",
    "/w/agents.md",
    "/w/src/main.go",
  }) do
    R.instruction_files[path] = rutter.is_instruction_file(path)
  end
end)
