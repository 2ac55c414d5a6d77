--- Watching instruction files for a rutter client: `workspace/didChangeWatchedFiles` from the
--- directories that can change what discovery delivers for the open buffers.
---
--- Why not Neovim's own LSP file watcher: 0.11 enables it only on macOS and Windows, and its
--- Linux fallback (without `inotifywait`) watches only directories whose own path matches a
--- glob, so `**/AGENTS.md` in a nested directory is never seen. Discovery of a file reads only
--- the directories from the workspace root down to the file (and their `.prayu/` and `.claude/`
--- subtrees), so those are all that need watching: one non-recursive `uv_fs_event` per
--- directory, whatever the size of the repository.
local M = {}

local uv = vim.uv

M.DEBOUNCE_MS = 100
local MAX_TREE_DEPTH = 34 -- rules nest at most 32 deep (docs/reference/discovery.md)

local FileChangeType = { Created = 1, Changed = 2, Deleted = 3 }

--- Names that are instruction files or hold them, at any level.
local LEVEL_NAMES = {
  ["AGENTS.md"] = true,
  ["AGENTS.override.md"] = true,
  ["CLAUDE.md"] = true,
  [".prayu"] = true,
  [".claude"] = true,
}

--- @class rutter.watch.State
--- @field handles table<string, uv.uv_fs_event_t> watched directory → handle
--- @field queue table<string, integer> URI → change type, until the next flush
--- @field order string[] URIs in the order first seen
--- @field pending boolean a flush is scheduled

--- @type table<integer, rutter.watch.State>
local states = {}

local function state_of(client_id)
  local state = states[client_id]
  if not state then
    state = { handles = {}, queue = {}, order = {}, pending = false }
    states[client_id] = state
  end
  return state
end

local function lstat_type(path)
  local st = uv.fs_lstat(path)
  return st and st.type or nil
end

--- Inside a `.prayu/` or `.claude/` directory (any level)?
local function in_control_dir(dir)
  return dir:find("/%.prayu$") ~= nil
    or dir:find("/%.prayu/") ~= nil
    or dir:find("/%.claude$") ~= nil
end

local function is_temporary(name)
  return name:sub(-1) == "~"
    or name:match("%.sw[a-p]$") ~= nil
    or name:match("%.sw[a-p]x$") ~= nil
    or name == "4913" -- Neovim's write-permission probe
end

local handle_event -- forward

--- Watch one directory (never through a symlink: discovery refuses those anyway, and the
--- link itself is seen from its parent).
local function watch_dir(client_id, state, dir)
  if state.handles[dir] or lstat_type(dir) ~= "directory" then
    return
  end
  local handle = uv.new_fs_event()
  if not handle then
    return
  end
  local ok = handle:start(dir, {}, function(err, filename, events)
    if err or not filename then
      return
    end
    local renamed = events and events.rename or false
    vim.schedule(function()
      handle_event(client_id, dir, filename, renamed)
    end)
  end)
  if not ok then
    handle:close()
    return
  end
  state.handles[dir] = handle
end

local function watch_tree(client_id, state, dir, depth)
  watch_dir(client_id, state, dir)
  if depth >= MAX_TREE_DEPTH then
    return
  end
  for name, kind in vim.fs.dir(dir) do
    if kind == "directory" then
      watch_tree(client_id, state, vim.fs.joinpath(dir, name), depth + 1)
    end
  end
end

--- One level of the walked chain: the directory, and its `.prayu/` and `.claude/` subtrees.
local function watch_level(client_id, state, dir)
  watch_dir(client_id, state, dir)
  for _, sub in ipairs({ ".prayu", ".claude" }) do
    local path = vim.fs.joinpath(dir, sub)
    if lstat_type(path) == "directory" then
      watch_tree(client_id, state, path, 0)
    end
  end
end

local function flush(client_id)
  local state = states[client_id]
  if not state then
    return
  end
  state.pending = false
  local client = vim.lsp.get_client_by_id(client_id)
  if not client or client:is_stopped() then
    return M.stop(client_id)
  end
  local changes = {}
  for _, uri in ipairs(state.order) do
    table.insert(changes, { uri = uri, type = state.queue[uri] })
  end
  state.queue, state.order = {}, {}
  if #changes > 0 then
    client:notify("workspace/didChangeWatchedFiles", { changes = changes })
  end
end

local function record(client_id, path, change)
  local state = states[client_id]
  if not state then
    return
  end
  local uri = vim.uri_from_fname(path)
  local known = state.queue[uri]
  if known == nil then
    table.insert(state.order, uri)
  end
  -- A creation or deletion also changes the directory's listing: never downgrade it.
  if known == nil or change ~= FileChangeType.Changed then
    state.queue[uri] = change
  end
  if not state.pending then
    state.pending = true
    vim.defer_fn(function()
      flush(client_id)
    end, M.DEBOUNCE_MS)
  end
end

handle_event = function(client_id, dir, filename, renamed)
  local state = states[client_id]
  if not state then
    return
  end
  if lstat_type(dir) ~= "directory" then -- the watched directory itself went away
    local handle = state.handles[dir]
    state.handles[dir] = nil
    if handle and not handle:is_closing() then
      handle:close()
    end
  end
  local name = filename:match("[^/]+$") or filename
  local control = in_control_dir(dir)
  if is_temporary(name) or not (LEVEL_NAMES[name] or control) then
    return
  end
  local path = vim.fs.joinpath(dir, filename)
  local kind = lstat_type(path)
  if kind == "directory" and (name == ".prayu" or name == ".claude" or control) then
    watch_tree(client_id, state, path, 0)
  end
  local change = FileChangeType.Changed
  if kind == nil then
    change = FileChangeType.Deleted
  elseif renamed then -- an entry appeared (created, moved in, or saved by rename)
    change = FileChangeType.Created
  end
  record(client_id, path, change)
end

--- Start watching what discovery of `bufnr`'s file reads (idempotent).
--- @param client vim.lsp.Client
--- @param bufnr integer
--- @param root string the workspace folder holding the buffer's file
function M.attach(client, bufnr, root)
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == "" or not root then
    return
  end
  local path = vim.fs.normalize(vim.fn.fnamemodify(name, ":p"))
  root = vim.fs.normalize(root)
  if not vim.startswith(path, root .. "/") then
    return
  end
  local state = state_of(client.id)
  for dir in vim.fs.parents(path) do
    watch_level(client.id, state, dir)
    if dir == root then
      break
    end
  end
end

--- The directories watched for a client, sorted.
--- @param client_id integer
--- @return string[]
function M.watched(client_id)
  local dirs = vim.tbl_keys((states[client_id] or { handles = {} }).handles)
  table.sort(dirs)
  return dirs
end

--- Stop every watcher of a client.
--- @param client_id integer
function M.stop(client_id)
  local state = states[client_id]
  states[client_id] = nil
  if not state then
    return
  end
  for _, handle in pairs(state.handles) do
    if not handle:is_closing() then
      handle:close()
    end
  end
end

return M
