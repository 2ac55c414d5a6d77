--- Which directory a buffer's rutter workspace folder is.
---
--- Instruction discovery walks from the workspace root down to the file, so the root must be
--- the top of the project, never the nearest directory holding an instruction file: with
--- plain `root_markers = { "AGENTS.md" }`, a file under services/api/internal/parser/ would get
--- that directory as its root and lose every instruction file above it.
---
--- 1. The nearest ancestor holding `.git` (a directory, or a file in worktrees and submodules).
--- 2. Otherwise the outermost ancestor holding an instruction marker (`.prayu`, `AGENTS.md`,
---    `AGENTS.override.md`, `CLAUDE.md`, `.claude/CLAUDE.md`).
--- 3. Otherwise nil: rutter does not start for the buffer.
--- For a file under $HOME, neither looks at $HOME or above: a user-level ~/.claude/CLAUDE.md
--- or a dotfiles repository in ~ does not make the whole home directory a project.
local M = {}

M.markers = { ".prayu", "AGENTS.md", "AGENTS.override.md", "CLAUDE.md", ".claude/CLAUDE.md" }

local uv = vim.uv or vim.loop

local function exists(path)
  return uv.fs_stat(path) ~= nil
end

local function normalize(path)
  return vim.fs.normalize(path)
end

--- The root for a file path (absolute), or nil.
--- @param path string
--- @param opts? { home?: string, markers?: string[] }
--- @return string?
function M.find(path, opts)
  opts = opts or {}
  if path == nil or path == "" then
    return nil
  end
  path = normalize(path)
  local markers = opts.markers or M.markers
  local home = opts.home
  if home == nil then
    home = vim.env.HOME
  end
  home = (home and home ~= "") and normalize(home) or nil

  -- Only directories strictly below $HOME when the file is under it (a dotfiles repository
  -- or ~/.claude/CLAUDE.md does not make $HOME a project); all ancestors otherwise.
  local below_home = home ~= nil and vim.startswith(path, home .. "/")
  local outermost = nil
  for dir in vim.fs.parents(path) do
    if below_home and (dir == home or not vim.startswith(dir, home .. "/")) then
      break
    end
    if exists(vim.fs.joinpath(dir, ".git")) then
      return dir -- the nearest .git wins over any marker
    end
    for _, marker in ipairs(markers) do
      if exists(vim.fs.joinpath(dir, marker)) then
        outermost = dir
        break
      end
    end
  end
  return outermost
end

--- `root_dir` for vim.lsp.config: calls `on_dir` only when a root is found.
--- @param bufnr integer
--- @param on_dir fun(root: string)
function M.root_dir(bufnr, on_dir)
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == "" or name:match("^%a[%w+.-]*://") then
    return -- not a file on disk (scratch buffers, oil://, fugitive://, …)
  end
  local root = M.find(vim.fn.fnamemodify(name, ":p"))
  if root then
    on_dir(root)
  end
end

return M
