--- Session continuity from Neovim: checkpoints, fork, resume, compare, and the session tree
--- (lua/rutter/tree.lua), over the language server's `rutter/session/*` requests.
---
--- Commands:
---   :RutterCheckpoint [title]  checkpoint the current run (a title is asked when missing)
---   :RutterTree [RUN]          the session tree of the current run (or RUN) in a split
---   :RutterCompare [A [B]]     the comparison of two nodes, side by side in diff mode
---   :RutterFork [NODE]         fork from a node (picked when missing; a goal is asked)
---   :RutterResume [NODE]       resume from a node (picked when missing)
---
--- The current run of a workspace is its only active run, or the one picked (newest first)
--- when it has several; a fork or resume made here becomes the current run. Fork and resume
--- ask the person first: the server sends `window/showMessageRequest` (what the new branch
--- inherits and what it does not), which Neovim shows through `vim.ui.select`. A declined
--- question answers `{ node_id, cancelled = true }` and nothing is written.
---
--- Every outcome fires `User RutterSession` with data `{ action, result?, error? }` (action:
--- "checkpoint", "fork", "resume", "compare", "node"); the server's `rutter/sessionsChanged`
--- notification fires `User RutterSessionsChanged` with its params (`workspace_ids`) and the
--- client id as data, and reloads an open tree.
local M = {}

local api = vim.api
local fmt = require("rutter.session_format")

M.PREFIX = "rutter/session/"
M.CHANGED = "rutter/sessionsChanged"

--- workspace ID → run ID chosen as current.
local current = {} --- @type table<string, string>

M.last_error = nil --- @type string? the last error shown (for statuslines and tests)

local function notify(message, level)
  require("rutter.ui").notify(message, level)
end

local function fire(data)
  api.nvim_exec_autocmds("User", { pattern = "RutterSession", modeline = false, data = data })
end
M.fire = fire

M.error_of = require("rutter.ui").error_of

local function show_error(what, err)
  local e = M.error_of(err)
  local text = string.format("%s: %s [%s]", what, fmt.str(e.message), fmt.str(e.code))
  M.last_error = text
  notify(text, vim.log.levels.ERROR)
  return text
end
M.show_error = show_error

M.call = require("rutter.ui").request

--- The rutter client for the current buffer (any running one for scratch buffers).
function M.client()
  local client = require("rutter").client_for(api.nvim_get_current_buf())
  return client or vim.lsp.get_clients({ name = "rutter" })[1]
end

--- The workspace ID of `bufnr` as the server serves it: `callback(workspace_id?)`. Scratch
--- buffers of the tree and its detail views name theirs; other buffers ask the server for
--- their instruction snapshot (which names its workspace).
function M.workspace_of(client, bufnr, callback)
  local known = vim.b[bufnr].rutter_workspace_id
  if type(known) == "string" then
    return callback(known)
  end
  local name = api.nvim_buf_get_name(bufnr)
  if name == "" or vim.bo[bufnr].buftype ~= "" then
    return callback(nil)
  end
  require("rutter").request(client, vim.uri_from_bufnr(bufnr), bufnr, function(result)
    vim.schedule(function()
      local id = type(result) == "table" and result.workspace_id
      if type(id) ~= "string" and type(result) == "table" and type(result.error) == "table" then
        local details = result.error.details
        id = type(details) == "table" and details.workspace_id or nil
      end
      callback(type(id) == "string" and id or nil)
    end)
  end)
end

local function run_label(run)
  return string.format(
    "%s · %s · %s · %s",
    fmt.str(run.run_id),
    fmt.one_line(run.goal, 50),
    fmt.str(run.status),
    fmt.time(run.created_at)
  )
end

--- The current run of the current buffer's workspace: `callback(client, run_id, workspace_id,
--- run)` (`run`: the run as `rutter/runs` lists it, with its `thread_id`).
--- One active run: that one; several: the one chosen before, else picked (newest first).
--- @param callback fun(client: vim.lsp.Client, run_id: string, workspace_id: string?, run: table)
function M.current_run(callback)
  local client = M.client()
  if not client then
    notify("no rutter language server is running; open a file of a project first", vim.log.levels.WARN)
    return
  end
  local bufnr = api.nvim_get_current_buf()
  M.workspace_of(client, bufnr, function(workspace_id)
    local params = workspace_id and { workspace_id = workspace_id } or vim.empty_dict()
    M.call(client, "rutter/runs", params, function(err, result)
      if err then
        return show_error("no current run", err)
      end
      local runs = {}
      for _, run in ipairs(type(result) == "table" and result.runs or {}) do
        if type(run.run_id) == "string" then
          runs[#runs + 1] = run
        end
      end
      if #runs == 0 then
        local where = workspace_id and ("workspace " .. workspace_id) or "the served workspaces"
        notify(
          "no active run in " .. where .. "; create one with: rutter run create --workspace ID --goal TEXT",
          vim.log.levels.WARN
        )
        return
      end
      local key = workspace_id or ""
      for _, run in ipairs(runs) do
        if run.run_id == current[key] then
          return callback(client, run.run_id, run.workspace_id or workspace_id, run)
        end
      end
      if #runs == 1 then
        current[key] = runs[1].run_id
        return callback(client, runs[1].run_id, runs[1].workspace_id or workspace_id, runs[1])
      end
      table.sort(runs, function(a, b)
        return fmt.str(a.created_at) .. fmt.str(a.run_id) > fmt.str(b.created_at) .. fmt.str(b.run_id)
      end)
      vim.ui.select(runs, {
        prompt = "rutter: which run is current? ",
        kind = "rutter_run",
        format_item = run_label,
      }, function(run)
        if run then
          current[key] = run.run_id
          vim.schedule(function()
            callback(client, run.run_id, run.workspace_id or workspace_id, run)
          end)
        end
      end)
    end)
  end)
end

--- The run chosen as current for `workspace_id` (for statuslines and tests), or nil.
function M.current(workspace_id)
  return current[workspace_id or ""]
end

--- Make `run_id` the current run of `workspace_id`.
function M.set_current(workspace_id, run_id)
  current[workspace_id or ""] = run_id
end

-- -- checkpoint ----------------------------------------------------------------------------------

--- Checkpoint `run_id` titled `title` (asked when nil or empty).
function M.checkpoint_run(client, run_id, title, on_done)
  local function send(text)
    text = vim.trim(text or "")
    if text == "" then
      notify("no checkpoint: a checkpoint needs a title")
      return
    end
    M.call(client, M.PREFIX .. "checkpoint", { run_id = run_id, title = text }, function(err, result)
      if err then
        fire({ action = "checkpoint", error = show_error("no checkpoint of " .. run_id, err) })
        return
      end
      M.last_error = nil
      local snap = type(result.snapshot) == "table" and result.snapshot or {}
      local messages = type(snap.messages) == "table" and snap.messages.total or 0
      local refs = type(snap.memory) == "table" and #(snap.memory.references or {}) or 0
      notify(string.format("checkpoint %s saved: %s messages, %d memories (run %s)", result.node_id, fmt.str(messages), refs, run_id))
      fire({ action = "checkpoint", result = result })
      if on_done then
        on_done(result)
      end
    end)
  end
  if title and vim.trim(title) ~= "" then
    return send(title)
  end
  vim.ui.input({ prompt = "Checkpoint title: " }, function(text)
    vim.schedule(function()
      send(text)
    end)
  end)
end

--- `:RutterCheckpoint [title]`: checkpoint the current run.
function M.checkpoint(title)
  local tree = require("rutter.tree")
  local st = tree.state()
  if st and api.nvim_get_current_buf() == st.buf then
    return tree.checkpoint_row(title)
  end
  M.current_run(function(client, run_id)
    M.checkpoint_run(client, run_id, title)
  end)
end

-- -- node pickers --------------------------------------------------------------------------------

local PICK_LIMIT = 50
local METHOD_NOT_FOUND = -32601

--- Nodes of the current run's tree (for a server without `rutter/session/recent`).
local function tree_nodes(callback)
  M.current_run(function(client, run_id, workspace_id)
    M.call(client, M.PREFIX .. "tree", { run_id = run_id }, function(err, result)
      if err then
        return show_error("no session tree for " .. run_id, err)
      end
      local nodes = vim.tbl_filter(fmt.usable, type(result) == "table" and result.nodes or {})
      table.sort(nodes, function(a, b)
        return fmt.str(a.created_at) .. fmt.str(a.node_id) > fmt.str(b.created_at) .. fmt.str(b.node_id)
      end)
      callback(client, nodes, workspace_id or result.workspace_id)
    end)
  end)
end

--- Nodes to pick from, newest first: the workspace's recent stored nodes across its sessions
--- (`rutter/session/recent`, each with its drift now), intact ones only.
--- `callback(client, nodes, workspace_id)`.
function M.pickable(callback)
  local client = M.client()
  if not client then
    notify("no rutter language server is running; open a file of a project first", vim.log.levels.WARN)
    return
  end
  local bufnr = api.nvim_get_current_buf()
  local params = { limit = PICK_LIMIT }
  local known = vim.b[bufnr].rutter_workspace_id
  if type(known) == "string" then
    params.workspace_id = known
  elseif api.nvim_buf_get_name(bufnr) ~= "" and vim.bo[bufnr].buftype == "" then
    params.uri = vim.uri_from_bufnr(bufnr)
  end
  M.call(client, M.PREFIX .. "recent", params, function(err, result)
    if err and err.code == METHOD_NOT_FOUND then
      return tree_nodes(callback)
    end
    if err then
      return show_error("no nodes to choose from", err)
    end
    local nodes = vim.tbl_filter(fmt.usable, type(result) == "table" and result.items or {})
    callback(client, nodes, type(result) == "table" and result.workspace_id or nil)
  end)
end

--- Pick one node (`prompt`), then `callback(client, node_id, workspace_id)`.
function M.pick(prompt, callback, exclude)
  M.pickable(function(client, nodes, workspace_id)
    nodes = vim.tbl_filter(function(node)
      return node.node_id ~= exclude
    end, nodes)
    if #nodes == 0 then
      notify("no node to choose from: make a checkpoint first (:RutterCheckpoint)", vim.log.levels.WARN)
      return
    end
    vim.ui.select(nodes, { prompt = prompt, kind = "rutter_node", format_item = fmt.pick_label }, function(node)
      if node then
        vim.schedule(function()
          callback(client, node.node_id, workspace_id)
        end)
      end
    end)
  end)
end

-- -- fork / resume ---------------------------------------------------------------------------------

--- Fork (`action` "fork", with `goal`) or resume from `node_id`. The server asks the person
--- first; a declined question answers `cancelled`.
function M.branch(client, action, node_id, goal, workspace_id, on_done)
  local params = { node_id = node_id }
  if action == "fork" then
    params.goal = goal
  end
  M.call(client, M.PREFIX .. action, params, function(err, result)
    if err then
      fire({ action = action, error = show_error("no " .. action .. " from " .. node_id, err) })
      return
    end
    M.last_error = nil
    if type(result) == "table" and result.cancelled == true then
      notify(action .. " cancelled: nothing was created")
    else
      if workspace_id and type(result.run_id) == "string" then
        current[workspace_id] = result.run_id
      end
      notify(string.format("current run: %s (%s from %s)", fmt.str(result.run_id), action == "fork" and "forked" or "resumed", node_id))
    end
    fire({ action = action, result = result })
    if on_done then
      on_done(result)
    end
  end)
end

local function ask_goal(node_id, callback)
  vim.ui.input({ prompt = "Goal of the fork from " .. node_id .. ": " }, function(goal)
    vim.schedule(function()
      goal = vim.trim(goal or "")
      if goal == "" then
        notify("no fork: a fork needs a goal")
        return
      end
      callback(goal)
    end)
  end)
end

--- `:RutterFork [NODE]` (a goal is asked; the node is picked when missing).
function M.fork(node_id, on_done)
  local function go(client, id, workspace_id)
    ask_goal(id, function(goal)
      M.branch(client, "fork", id, goal, workspace_id, on_done)
    end)
  end
  if node_id and node_id ~= "" then
    local client = M.client()
    if not client then
      return notify("no rutter language server is running", vim.log.levels.WARN)
    end
    return M.workspace_of(client, api.nvim_get_current_buf(), function(ws)
      go(client, node_id, ws)
    end)
  end
  M.pick("rutter: fork from which node? ", go)
end

--- `:RutterResume [NODE]` (the node is picked when missing).
function M.resume(node_id, on_done)
  local function go(client, id, workspace_id)
    M.branch(client, "resume", id, nil, workspace_id, on_done)
  end
  if node_id and node_id ~= "" then
    local client = M.client()
    if not client then
      return notify("no rutter language server is running", vim.log.levels.WARN)
    end
    return M.workspace_of(client, api.nvim_get_current_buf(), function(ws)
      go(client, node_id, ws)
    end)
  end
  M.pick("rutter: resume from which node? ", go)
end

-- -- scratch views (lua/rutter/session_views.lua) ------------------------------------------------

--- Open `node_id`'s detail in a scratch split (see `session_views.open_node`).
function M.open_node(client, node_id, tree_node, workspace_id)
  require("rutter.session_views").open_node(client, node_id, tree_node, workspace_id)
end

--- Compare nodes `a` and `b` side by side (see `session_views.compare_nodes`).
function M.compare_nodes(client, a, b, workspace_id)
  require("rutter.session_views").compare_nodes(client, a, b, workspace_id)
end

--- `:RutterCompare [A [B]]`: missing nodes are picked.
function M.compare(a, b)
  local function with_b(client, node_a, workspace_id)
    if b and b ~= "" then
      return M.compare_nodes(client, node_a, b, workspace_id)
    end
    M.pick("rutter: compare " .. node_a .. " with which node? ", function(c, node_b, ws)
      M.compare_nodes(c, node_a, node_b, ws or workspace_id)
    end, node_a)
  end
  if a and a ~= "" then
    local client = M.client()
    if not client then
      return notify("no rutter language server is running", vim.log.levels.WARN)
    end
    return M.workspace_of(client, api.nvim_get_current_buf(), function(ws)
      with_b(client, a, ws)
    end)
  end
  M.pick("rutter: compare which node (A)? ", with_b)
end

-- -- the server's notification ---------------------------------------------------------------------

--- Handler of `rutter/sessionsChanged` `{ workspace_ids }`: reloads an open tree of one of
--- those workspaces, then fires `User RutterSessionsChanged` with the params and the client id.
function M.on_sessions_changed(_, params, ctx)
  params = type(params) == "table" and params or {}
  local client_id = ctx and ctx.client_id
  vim.schedule(function()
    require("rutter.tree").on_changed(client_id, params.workspace_ids)
    local data = vim.deepcopy(params)
    data.client_id = client_id
    api.nvim_exec_autocmds("User", { pattern = "RutterSessionsChanged", modeline = false, data = data })
  end)
end

local function args_of(opts)
  return opts.fargs or {}
end

function M.init()
  api.nvim_create_user_command("RutterCheckpoint", function(opts)
    M.checkpoint(opts.args ~= "" and opts.args or nil)
  end, { nargs = "?", desc = "rutter: checkpoint the current run" })
  api.nvim_create_user_command("RutterTree", function(opts)
    require("rutter.tree").show(args_of(opts)[1])
  end, { nargs = "?", desc = "rutter: the session tree of the current run" })
  api.nvim_create_user_command("RutterCompare", function(opts)
    local args = args_of(opts)
    M.compare(args[1], args[2])
  end, { nargs = "*", desc = "rutter: compare two continuity nodes" })
  api.nvim_create_user_command("RutterFork", function(opts)
    M.fork(args_of(opts)[1])
  end, { nargs = "?", desc = "rutter: fork a new run from a continuity node" })
  api.nvim_create_user_command("RutterResume", function(opts)
    M.resume(args_of(opts)[1])
  end, { nargs = "?", desc = "rutter: resume from a continuity node" })
end

return M
