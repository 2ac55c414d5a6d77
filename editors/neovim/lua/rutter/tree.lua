--- `:RutterTree`: the session tree (`session_tree.v1`) of the current run in a split.
---
--- One line per node, depth first from the top root; each fork or resume starts a fold (and
--- an indent) holding its branch. Projected nodes (decision notes, never a source of a fork
--- or resume) are dimmed; drift markers now (instructions changed, git branch or HEAD moved,
--- memories disabled / expired / deleted / at another version) are highlighted as warnings; a
--- node failing its integrity check shows its error. Keys: `?` lists them (see
--- `session_format.TREE_KEYS`). The tree reloads by itself on `rutter/sessionsChanged`.
local M = {}

local api = vim.api
local fmt = require("rutter.session_format")
local session = require("rutter.session")

local ns = api.nvim_create_namespace("rutter.tree")

--- @class rutter.TreeState
--- @field win integer
--- @field buf integer
--- @field client_id integer
--- @field run_id string the run the tree was asked for
--- @field workspace_id? string
--- @field marks string[] node IDs marked for compare (at most two)
--- @field view? rutter.TreeLines
--- @field result? table
local state = nil --- @type rutter.TreeState?
local help_win = nil --- @type integer?

local function notify(message, level)
  require("rutter.ui").notify(message, level)
end

local function valid(st)
  return st and api.nvim_buf_is_valid(st.buf) and st.win and api.nvim_win_is_valid(st.win)
    and api.nvim_win_get_buf(st.win) == st.buf
end

--- Fold level of line `lnum` of the tree buffer (its 'foldexpr').
function M.foldexpr(lnum)
  local st = state
  local view = st and st.view
  if not view then
    return 0
  end
  local level = view.levels[lnum] or 0
  if view.starts[lnum] then
    return ">" .. level
  end
  return level
end

local function paint(st)
  local view = assert(st.view)
  vim.bo[st.buf].modifiable = true
  api.nvim_buf_set_lines(st.buf, 0, -1, false, view.lines)
  vim.bo[st.buf].modifiable = false
  vim.bo[st.buf].modified = false
  api.nvim_buf_clear_namespace(st.buf, ns, 0, -1)
  for _, mark in ipairs(view.hl) do
    local lnum, start, finish, group = mark[1], mark[2], mark[3], mark[4]
    local text = view.lines[lnum] or ""
    api.nvim_buf_set_extmark(st.buf, ns, lnum - 1, math.min(start, #text), {
      end_row = lnum - 1,
      end_col = finish < 0 and #text or math.min(finish, #text),
      hl_group = group,
    })
  end
  if valid(st) then
    api.nvim_win_call(st.win, function()
      vim.cmd("silent! normal! zx")
    end)
  end
end

local function render(st, result)
  st.result = result
  if type(result) == "table" and type(result.workspace_id) == "string" then
    st.workspace_id = result.workspace_id
    vim.b[st.buf].rutter_workspace_id = result.workspace_id
  end
  st.view = fmt.tree(result, { current_run = session.current(st.workspace_id), marks = st.marks })
  paint(st)
  api.nvim_exec_autocmds("User", {
    pattern = "RutterTreeUpdated",
    modeline = false,
    data = { run_id = st.run_id, workspace_id = st.workspace_id, result = result },
  })
end

--- Re-request the open tree.
function M.reload()
  local st = state
  if not st or not api.nvim_buf_is_valid(st.buf) then
    return
  end
  local client = vim.lsp.get_client_by_id(st.client_id)
  if not client then
    return render(st, { error = { code = "not_running", message = "the rutter language server has stopped" } })
  end
  session.call(client, session.PREFIX .. "tree", { run_id = st.run_id }, function(err, result)
    if state ~= st or not api.nvim_buf_is_valid(st.buf) then
      return
    end
    if err then
      result = { error = session.error_of(err) }
    end
    render(st, result)
  end)
end

function M.close()
  local st = state
  state = nil
  if help_win and api.nvim_win_is_valid(help_win) then
    api.nvim_win_close(help_win, true)
  end
  if st and api.nvim_buf_is_valid(st.buf) then
    api.nvim_buf_delete(st.buf, { force = true })
  end
end

--- The tree node on the cursor's line, or nil (with a message).
local function row_node(usable)
  local st = state
  if not valid(st) then
    return nil, nil
  end
  local node = st.view and st.view.rows[api.nvim_win_get_cursor(st.win)[1]]
  if not node then
    notify("no node on this line")
    return nil, st
  end
  if usable and not fmt.usable(node) then
    notify(node.projected == true and "a projected node cannot be forked, resumed or compared" or "this node fails its integrity check")
    return nil, st
  end
  return node, st
end

local function client_of(st)
  local client = st and vim.lsp.get_client_by_id(st.client_id)
  if not client then
    notify("the rutter language server has stopped", vim.log.levels.ERROR)
  end
  return client
end

function M.open_row()
  local node, st = row_node(false)
  local client = node and client_of(st)
  if node and client and st then
    local facts = fmt.compaction_facts(node)
    if facts then
      -- Asked for on purpose: the whole line, not one cut to the command line's width.
      vim.notify(string.format("rutter: compaction %s of thread %s: %s, the newest %d kept verbatim; summary: %s",
        node.node_id, fmt.str(node.thread_id), facts, tonumber(node.compaction.kept_message_count) or 0,
        fmt.one_line(node.title, 200)), vim.log.levels.INFO)
      return
    end
    if not vim.startswith(node.node_id, "node_") then
      notify("a projected " .. fmt.str(node.kind) .. " note: " .. fmt.one_line(node.title, 200))
      return
    end
    session.open_node(client, node.node_id, node, st.workspace_id)
  end
end

--- `C`: compact the thread of the node on this line (the focus asked), then reload: the
--- compaction shows below the thread's latest node.
function M.compact_row()
  local node, st = row_node(false)
  local client = node and client_of(st)
  if not (node and client and st) then
    return
  end
  require("rutter.compaction").ask_and_compact(client, fmt.str(node.thread_id), st.workspace_id, function()
    if state == st then
      M.reload()
    end
  end)
end

local function after_branch(st)
  return function(result)
    if type(result) == "table" and result.cancelled ~= true and type(result.run_id) == "string" then
      st.run_id = result.run_id
    end
    if state == st then
      M.reload()
    end
  end
end

function M.fork_row()
  local node, st = row_node(true)
  if node and st then
    local client = client_of(st)
    if not client then
      return
    end
    vim.ui.input({ prompt = "Goal of the fork from " .. node.node_id .. ": " }, function(goal)
      vim.schedule(function()
        goal = vim.trim(goal or "")
        if goal == "" then
          notify("no fork: a fork needs a goal")
          return
        end
        session.branch(client, "fork", node.node_id, goal, st.workspace_id, after_branch(st))
      end)
    end)
  end
end

function M.resume_row()
  local node, st = row_node(true)
  local client = node and client_of(st)
  if node and client and st then
    session.branch(client, "resume", node.node_id, nil, st.workspace_id, after_branch(st))
  end
end

function M.mark_row()
  local node, st = row_node(true)
  if not node or not st then
    return
  end
  for index, id in ipairs(st.marks) do
    if id == node.node_id then
      table.remove(st.marks, index)
      return render(st, st.result)
    end
  end
  st.marks[#st.marks + 1] = node.node_id
  if #st.marks < 2 then
    notify("marked A: " .. node.node_id .. "; mark another node to compare")
    return render(st, st.result)
  end
  local a, b = st.marks[1], st.marks[2]
  st.marks = {}
  render(st, st.result)
  local client = client_of(st)
  if client then
    session.compare_nodes(client, a, b, st.workspace_id)
  end
end

function M.clear_marks()
  local st = state
  if st then
    st.marks = {}
    render(st, st.result)
  end
end

--- `c` in the tree (and `:RutterCheckpoint` there): checkpoint the run of the node on the
--- cursor's line.
function M.checkpoint_row(title)
  local node, st = row_node(false)
  local client = node and client_of(st)
  if node and client and st then
    session.checkpoint_run(client, node.run_id, title, function()
      if state == st then
        M.reload()
      end
    end)
  end
end

--- `?`: the keys, in a small float (any of q, ?, <Esc> closes it).
function M.help()
  if help_win and api.nvim_win_is_valid(help_win) then
    api.nvim_win_close(help_win, true)
    help_win = nil
    return
  end
  local buf = api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = "wipe"
  api.nvim_buf_set_lines(buf, 0, -1, false, fmt.TREE_KEYS)
  vim.bo[buf].modifiable = false
  local config = require("rutter.ui").geometry(fmt.TREE_KEYS, 40)
  config.style = "minimal"
  config.border = "rounded"
  config.title = " rutter tree keys "
  config.title_pos = "center"
  help_win = api.nvim_open_win(buf, true, config)
  for _, lhs in ipairs({ "q", "?", "<Esc>" }) do
    vim.keymap.set("n", lhs, function()
      if help_win and api.nvim_win_is_valid(help_win) then
        api.nvim_win_close(help_win, true)
      end
      help_win = nil
    end, { buffer = buf, nowait = true, silent = true })
  end
end

local function keymaps(buf)
  local function map(lhs, fn, desc)
    vim.keymap.set("n", lhs, fn, { buffer = buf, nowait = true, silent = true, desc = "rutter: " .. desc })
  end
  map("<CR>", M.open_row, "open node detail")
  map("f", M.fork_row, "fork from node")
  map("r", M.resume_row, "resume from node")
  map("m", M.mark_row, "mark node for compare")
  map("M", M.clear_marks, "clear compare marks")
  map("c", function()
    M.checkpoint_row()
  end, "checkpoint the node's run")
  map("C", M.compact_row, "compact the node's thread")
  map("R", M.reload, "reload tree")
  map("q", M.close, "close tree")
  map("?", M.help, "tree keys")
end

local function open_window(st)
  local buf = api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = "rutter"
  pcall(api.nvim_buf_set_name, buf, "rutter://tree")
  st.buf = buf
  vim.cmd("botright vsplit")
  local win = api.nvim_get_current_win()
  api.nvim_win_set_buf(win, buf)
  api.nvim_win_set_width(win, math.max(50, math.floor(vim.o.columns / 2)))
  st.win = win
  vim.wo[win].wrap = false
  vim.wo[win].cursorline = true
  vim.wo[win].number = false
  vim.wo[win].relativenumber = false
  vim.wo[win].foldmethod = "expr"
  vim.wo[win].foldexpr = "v:lua.require'rutter.tree'.foldexpr(v:lnum)"
  vim.wo[win].foldenable = true
  vim.wo[win].foldlevel = 99
  keymaps(buf)
  api.nvim_create_autocmd("BufWipeout", {
    buffer = buf,
    once = true,
    callback = function()
      if state and state.buf == buf then
        state = nil
      end
    end,
  })
end

--- `:RutterTree [RUN]`: open (or focus and reload) the tree of RUN, default the current run.
function M.show(run_id)
  local function open(client, id, workspace_id)
    local st = state
    if st and api.nvim_buf_is_valid(st.buf) then
      st.run_id, st.client_id = id, client.id
      st.workspace_id = workspace_id or st.workspace_id
      if not valid(st) then
        vim.cmd("botright vsplit")
        st.win = api.nvim_get_current_win()
        api.nvim_win_set_buf(st.win, st.buf)
      else
        api.nvim_set_current_win(st.win)
      end
    else
      st = { client_id = client.id, run_id = id, workspace_id = workspace_id, marks = {} } --[[@as rutter.TreeState]]
      state = st
      open_window(st)
    end
    M.reload()
  end
  if run_id and run_id ~= "" then
    local client = session.client()
    if not client then
      return notify("no rutter language server is running; open a file of a project first", vim.log.levels.WARN)
    end
    return open(client, run_id, nil)
  end
  session.current_run(open)
end

--- `rutter/sessionsChanged` for `workspace_ids` from client `client_id`: reload an open tree
--- of one of them.
function M.on_changed(client_id, workspace_ids)
  local st = state
  if not st or not api.nvim_buf_is_valid(st.buf) or st.client_id ~= client_id then
    return
  end
  local affected = type(workspace_ids) ~= "table" or st.workspace_id == nil
  for _, id in ipairs(type(workspace_ids) == "table" and workspace_ids or {}) do
    if id == st.workspace_id then
      affected = true
    end
  end
  if affected then
    M.reload()
  end
end

--- What the tree shows (for tests and scripts), or nil.
function M.state()
  local st = state
  if not st or not api.nvim_buf_is_valid(st.buf) then
    return nil
  end
  local rows = {}
  for lnum, node in pairs(st.view and st.view.rows or {}) do
    rows[lnum] = node.node_id
  end
  return vim.deepcopy({
    win = st.win,
    buf = st.buf,
    run_id = st.run_id,
    workspace_id = st.workspace_id,
    marks = st.marks,
    lines = st.view and st.view.lines or {},
    rows = rows,
    levels = st.view and st.view.levels or {},
    result = st.result,
  })
end

--- The help float's window, when open (for tests).
function M.help_win()
  return help_win and api.nvim_win_is_valid(help_win) and help_win or nil
end

return M
