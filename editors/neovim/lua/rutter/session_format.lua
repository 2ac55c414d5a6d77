--- Pure formatting of the session continuity answers (`session_tree.v1`, a node with its
--- `continuity_snapshot.v1`, a node comparison) into buffer lines.
---
--- No editor state is read here: each function takes the decoded answer and returns the lines,
--- which line shows which node, and what to highlight, so the views (lua/rutter/tree.lua,
--- lua/rutter/session.lua) stay thin and this can be tested without a server.
local M = {}

--- A JSON value as text ("" for null / missing).
local function str(value)
  if value == nil or value == vim.NIL then
    return ""
  end
  return tostring(value)
end
M.str = str

local function present(value)
  return value ~= nil and value ~= vim.NIL
end

local function list(value)
  if type(value) == "table" and (next(value) == nil or value[1] ~= nil) then
    return value
  end
  return {}
end

--- "2026-12-03T15:50:07Z" → "2026-12-03 15:50:07"
function M.time(value)
  return (str(value):gsub("T", " "):gsub("Z$", ""))
end

--- One line of free text: first line only, at most `max` characters.
function M.one_line(text, max)
  text = str(text):gsub("\r", ""):match("^[^\n]*") or ""
  max = max or 60
  if vim.fn.strchars(text) > max then
    text = vim.fn.strcharpart(text, 0, max - 1) .. "…"
  end
  return text
end

M.GLYPH = { root = "○", checkpoint = "●", fork = "⑂", resume = "↻", decision = "◇", compaction = "≡" }

--- A projected compaction's facts in words (`12 messages summarized (2 not read) · extractive`),
--- or nil for every other node.
--- @param node table a `session_tree.v1` node
--- @return string?
function M.compaction_facts(node)
  local facts = node.compaction
  if type(facts) ~= "table" then
    return nil
  end
  local unread = tonumber(facts.unread_message_count) or 0
  return string.format(
    "%d messages summarized (%s) · %s",
    tonumber(facts.compacted_message_count) or 0,
    unread > 0 and (unread .. " not read") or "all read",
    str(facts.summarizer)
  )
end
M.BRANCH_KINDS = { fork = true, resume = true }

--- The drift markers of a tree node, as short labels ("instructions", "git branch", …).
--- @param node table a `session_tree.v1` node
--- @return string[]
function M.drift_labels(node)
  local labels = {}
  if type(node.error) == "table" then
    labels[#labels + 1] = "✗ " .. str(node.error.code)
    return labels
  end
  local drift = node.drift
  if type(drift) ~= "table" then
    return labels
  end
  local instructions = drift.instructions
  if type(instructions) == "table" and instructions.changed == true then
    if present(instructions.live_error) then
      labels[#labels + 1] = "⚠ instructions fail: " .. str(instructions.live_error)
    else
      labels[#labels + 1] = "⚠ instructions changed"
    end
  end
  local git = drift.git
  if type(git) == "table" then
    if git.branch_changed == true then
      labels[#labels + 1] = "⚠ git branch"
    end
    if git.head_changed == true then
      labels[#labels + 1] = "⚠ git head"
    end
  end
  local counts, order = {}, {}
  for _, marker in ipairs(list(drift.memory)) do
    local state = str(marker.state)
    if state ~= "active" then
      if not counts[state] then
        order[#order + 1] = state
      end
      counts[state] = (counts[state] or 0) + 1
    end
  end
  for _, state in ipairs(order) do
    labels[#labels + 1] = string.format("⚠ memory %s x%d", state, counts[state])
  end
  return labels
end

--- A node as a picker shows it: title (or kind), time, run, drift.
--- @param node table a tree node (or a `rutter/session/recent` item)
function M.pick_label(node)
  local name = present(node.title) and ('"' .. M.one_line(node.title, 50) .. '"') or str(node.kind)
  local parts = { string.format("%s %s", M.GLYPH[str(node.kind)] or "·", name) }
  parts[#parts + 1] = M.time(node.created_at)
  parts[#parts + 1] = "run " .. str(node.run_id)
  local drift = M.drift_labels(node)
  if #drift > 0 then
    parts[#parts + 1] = table.concat(drift, ", ")
  else
    parts[#parts + 1] = "no drift"
  end
  return table.concat(parts, " · ") .. "  (" .. str(node.node_id) .. ")"
end

--- Whether a tree node can be forked, resumed or compared (stored, intact).
function M.usable(node)
  return node.projected ~= true and type(node.error) ~= "table" and vim.startswith(str(node.node_id), "node_")
end

--- @class rutter.TreeLines
--- @field lines string[]
--- @field rows table<integer, table> line → tree node
--- @field hl { [1]: integer, [2]: integer, [3]: integer, [4]: string }[] line, start col, end col (-1: end), group
--- @field levels table<integer, integer> line → fold level
--- @field starts table<integer, boolean> lines that open a fold (branch markers)

--- The tree view's lines for a `session_tree.v1` answer (or `{ error = {...} }`).
--- @param result table
--- @param opts? { current_run?: string, marks?: string[] }
--- @return rutter.TreeLines
function M.tree(result, opts)
  opts = opts or {}
  local out = { lines = {}, rows = {}, hl = {}, levels = {}, starts = {} }
  local function add(text, group)
    out.lines[#out.lines + 1] = text
    out.levels[#out.lines] = 0
    if group then
      out.hl[#out.hl + 1] = { #out.lines, 0, -1, group }
    end
    return #out.lines
  end
  if type(result) ~= "table" or type(result.error) == "table" then
    local err = type(result) == "table" and result.error or {}
    add("rutter · session tree", "Title")
    add("")
    add(string.format("error[%s]: %s", str(err.code) ~= "" and str(err.code) or "unknown", str(err.message)), "ErrorMsg")
    add("")
    add("? keys · R reload · q close", "Comment")
    return out
  end
  local nodes = list(result.nodes)
  add(string.format("rutter · session tree of run %s (workspace %s)", str(result.run_id), str(result.workspace_id)), "Title")
  local stored, projected = 0, 0
  for _, node in ipairs(nodes) do
    if node.projected == true then
      projected = projected + 1
    else
      stored = stored + 1
    end
  end
  add(
    string.format(
      "%d node%s, %d projected · drift as of %s%s",
      stored,
      stored == 1 and "" or "s",
      projected,
      M.time(result.computed_at),
      result.truncated == true and " · truncated (more nodes exist)" or ""
    ),
    "Comment"
  )
  add("")
  local marks = {}
  for index, id in ipairs(opts.marks or {}) do
    marks[id] = index == 1 and "A" or "B"
  end
  local level_of, label_of = {}, {}
  for _, node in ipairs(nodes) do
    label_of[str(node.node_id)] = present(node.title) and ('"' .. M.one_line(node.title, 40) .. '"') or str(node.kind)
  end
  for _, node in ipairs(nodes) do
    local parent = present(node.parent_node_id) and level_of[str(node.parent_node_id)] or nil
    local level = parent or 0
    local kind = str(node.kind)
    if parent ~= nil and M.BRANCH_KINDS[kind] then
      level = level + 1
    end
    level_of[str(node.node_id)] = level
    local indent = string.rep("  ", level + (node.projected == true and 1 or 0))
    local facts = M.compaction_facts(node)
    local name = present(node.title) and ('"' .. M.one_line(node.title, facts and 40 or 60) .. '"') or ""
    local text = string.format("%s%s %s", indent, M.GLYPH[kind] or "·", kind)
    if name ~= "" then
      text = text .. " " .. name
    end
    if M.BRANCH_KINDS[kind] and present(node.parent_node_id) then
      text = text .. " from " .. (label_of[str(node.parent_node_id)] or str(node.parent_node_id))
    end
    text = text .. " · " .. M.time(node.created_at)
    if facts then
      text = text .. " · " .. facts
    end
    if kind == "root" or M.BRANCH_KINDS[kind] then
      text = text .. string.format(" · run %s (%s)", str(node.run_id), str(node.run_status))
      if opts.current_run and opts.current_run == str(node.run_id) then
        text = text .. " · current"
      end
    end
    if node.projected == true then
      text = text .. " · projected"
    end
    if marks[str(node.node_id)] then
      text = text .. " · [" .. marks[str(node.node_id)] .. "]"
    end
    local drift = M.drift_labels(node)
    local drift_col = nil
    if #drift > 0 then
      text = text .. "  "
      drift_col = #text
      text = text .. table.concat(drift, "  ")
    end
    local lnum = add(text)
    out.rows[lnum] = node
    out.levels[lnum] = level
    out.starts[lnum] = M.BRANCH_KINDS[kind] and parent ~= nil or nil
    if node.projected == true then
      out.hl[#out.hl + 1] = { lnum, 0, -1, "Comment" }
    elseif type(node.error) == "table" then
      out.hl[#out.hl + 1] = { lnum, 0, -1, "DiagnosticError" }
    end
    if drift_col and type(node.error) ~= "table" then
      out.hl[#out.hl + 1] = { lnum, drift_col, -1, "DiagnosticWarn" }
    end
    if marks[str(node.node_id)] then
      out.hl[#out.hl + 1] = { lnum, 0, #indent + 4, "Search" }
    end
  end
  if #nodes == 0 then
    add("No nodes.")
  end
  add("")
  add("<CR> detail · f fork · r resume · m mark (two: compare) · c checkpoint · za fold · R reload · ? keys · q close", "Comment")
  return out
end

--- The tree view's keys, as `?` shows them.
M.TREE_KEYS = {
  "<CR>  open the node's detail (its continuity snapshot and drift) in a scratch buffer",
  "f     fork from the node: a new run with a new goal (the server asks first)",
  "r     resume from the node: a new run on the node's mission (the server asks first)",
  "m     mark the node for compare; marking a second one opens the comparison",
  "M     clear the marks",
  "c     checkpoint the run of the node on this line (asks for a title)",
  "C     compact the thread of the node on this line (asks the focus); the summary opens",
  "za    open or close the fold of a branch (zR open all, zM close all)",
  "R     reload · q close · ? this help",
}

-- -- a node's detail ---------------------------------------------------------------------------

--- The detail buffer's lines for a node (`rutter/session/node` answer), with the drift the
--- tree computed for it (nil when unknown).
--- @param node table
--- @param drift_node? table the tree node (for its drift markers)
--- @return string[]
function M.node(node, drift_node)
  local lines = {}
  local function add(text)
    lines[#lines + 1] = text
  end
  if type(node) ~= "table" or type(node.error) == "table" then
    local err = type(node) == "table" and node.error or {}
    add("rutter · node")
    add("")
    add(string.format("error[%s]: %s", str(err.code), str(err.message)))
    return lines
  end
  add(string.format("rutter · %s %s", str(node.kind), str(node.node_id)))
  add("")
  if present(node.title) then
    add("title        " .. str(node.title))
  end
  add(string.format("run          %s (session %s, thread %s)", str(node.run_id), str(node.session_id), str(node.thread_id)))
  add("parent       " .. (present(node.parent_node_id) and str(node.parent_node_id) or "none (the top of the tree)"))
  add(string.format("created      %s by %s", M.time(node.created_at),
    require("rutter.ui").who(node.created_by, node.created_by_person)))
  local snap = node.snapshot
  if type(snap) == "table" then
    add("fingerprint  " .. str(snap.fingerprint))
    add("")
    add("Snapshot (what a fork or resume from here inherits)")
    if present(snap.summary) then
      add("  summary       " .. M.one_line(snap.summary, 200))
    end
    local instructions = snap.instructions
    if type(instructions) == "table" then
      add(string.format("  instructions  revision %s · %s (target %s)", str(instructions.revision), str(instructions.fingerprint), str(instructions.target_path)))
    end
    local config = snap.project_configuration
    if type(config) == "table" then
      local note = config.matches_pinned == true and "matches the pinned instructions" or ("differs from the pinned instructions" .. (present(config.reason) and (": " .. str(config.reason)) or ""))
      add(string.format("  configuration %s (%s)", present(config.fingerprint) and str(config.fingerprint) or "none", note))
    end
    if type(snap.git) == "table" then
      add(string.format("  git           %s @ %s", str(snap.git.branch), str(snap.git.head)))
    else
      add("  git           none: " .. str(snap.git_reason))
    end
    if present(snap.compaction_summary) then
      local summary = snap.compaction_summary
      add("  compaction    " .. M.one_line(type(summary) == "table" and (summary.text or summary.summary) or summary, 200))
    end
    local messages = type(snap.messages) == "table" and snap.messages or {}
    local items = list(messages.items)
    add(string.format("  messages      %s in the thread, the last %d kept:", str(messages.total), #items))
    for _, message in ipairs(items) do
      add(string.format("    [%s] %s", str(message.role), M.one_line(message.text, 100)))
    end
    local memory = type(snap.memory) == "table" and snap.memory or {}
    local refs = list(memory.references)
    add(string.format("  memory        %d reference%s to active memories%s", #refs, #refs == 1 and "" or "s", memory.truncated == true and " (truncated)" or ""))
    for _, ref in ipairs(refs) do
      add(string.format("    %s v%s", str(ref.memory_id), str(ref.version)))
    end
    add("  inherits      " .. table.concat(vim.tbl_map(str, list(snap.inherits)), ", "))
  else
    add("")
    add("Records only the instructions its run pins (no snapshot).")
  end
  local authority = type(snap) == "table" and snap.authority or node.authority
  if type(authority) == "table" then
    local keys = vim.tbl_keys(authority)
    table.sort(keys)
    add("  never carried " .. table.concat(keys, ", "))
  end
  if type(drift_node) == "table" then
    add("")
    add("Drift now")
    local drift = type(drift_node.drift) == "table" and drift_node.drift or {}
    local instructions = drift.instructions
    if type(instructions) == "table" then
      if instructions.changed == true then
        add(string.format("  instructions  changed: pinned %s, now %s", str(instructions.pinned_fingerprint), present(instructions.live_error) and ("fails closed: " .. str(instructions.live_error)) or str(instructions.live_fingerprint)))
      else
        add("  instructions  unchanged")
      end
    end
    local git = drift.git
    if type(git) == "table" then
      local recorded = type(git.recorded) == "table" and (str(git.recorded.branch) .. " @ " .. str(git.recorded.head)) or ("none: " .. str(git.recorded_reason))
      local current = type(git.current) == "table" and (str(git.current.branch) .. " @ " .. str(git.current.head)) or ("none: " .. str(git.current_reason))
      local what = {}
      if git.branch_changed == true then
        what[#what + 1] = "branch changed"
      end
      if git.head_changed == true then
        what[#what + 1] = "HEAD changed"
      end
      add(string.format("  git           %s (recorded %s, now %s)", #what > 0 and table.concat(what, ", ") or "unchanged", recorded, current))
    end
    for _, marker in ipairs(list(drift.memory)) do
      add(string.format("  memory        %s v%s: %s", str(marker.memory_id), str(marker.version), str(marker.state)))
    end
  end
  add("")
  add("q close")
  return lines
end

-- -- a comparison --------------------------------------------------------------------------------

--- A fact of one side: "—" when the node records none.
local function fact(value)
  local text = str(value)
  return text == "" and "—" or text
end

local function side_lines(result, key)
  local side = type(result[key]) == "table" and result[key] or {}
  local label = key:upper()
  local lines = {
    string.format("rutter · compare, side %s: %s %s", label, str(side.kind), str(side.node_id)),
    "title          " .. fact(side.title),
    "fingerprint    " .. fact(side.fingerprint),
    "run            " .. fact(side.run_id),
    "session        " .. fact(side.session_id),
    "run status     " .. fact(side.run_status),
  }
  local instructions = side.instructions
  lines[#lines + 1] = "instructions   "
    .. (type(instructions) == "table" and string.format("revision %s · %s", str(instructions.revision), str(instructions.fingerprint)) or "none")
  lines[#lines + 1] = "configuration  " .. fact(side.project_configuration_fingerprint)
  if type(side.git) == "table" then
    lines[#lines + 1] = "git branch     " .. fact(side.git.branch)
    lines[#lines + 1] = "git HEAD       " .. fact(side.git.head)
  else
    local none = present(side.git_reason) and ("— (" .. str(side.git_reason) .. ")") or "—"
    lines[#lines + 1] = "git branch     " .. none
    lines[#lines + 1] = "git HEAD       " .. none
  end
  lines[#lines + 1] = "messages       " .. fact(side.message_count)
  lines[#lines + 1] = "memory refs    " .. fact(side.memory_references)
  lines[#lines + 1] = ""
  local memory = type(result.memory) == "table" and result.memory or {}
  lines[#lines + 1] = string.format("memory from A to B: %d unchanged", tonumber(memory.unchanged) or 0)
  for _, ref in ipairs(list(memory.removed)) do
    lines[#lines + 1] = key == "a" and string.format("  only in A     %s v%s", str(ref.memory_id), str(ref.version)) or "  only in A     —"
  end
  for _, ref in ipairs(list(memory.added)) do
    lines[#lines + 1] = key == "b" and string.format("  only in B     %s v%s", str(ref.memory_id), str(ref.version)) or "  only in B     —"
  end
  for _, change in ipairs(list(memory.changed)) do
    lines[#lines + 1] = string.format("  changed       %s v%s", str(change.memory_id), str(change[key .. "_version"]))
  end
  return lines
end

--- The two sides of a comparison (`rutter/session/compare` answer), line for line the same
--- facts, so a diff of the two shows what differs; and the list of facts that differ.
--- @param result table
--- @return string[] a, string[] b, string[] differ
function M.compare(result)
  if type(result) ~= "table" or type(result.error) == "table" then
    local err = type(result) == "table" and result.error or {}
    local line = string.format("error[%s]: %s", str(err.code), str(err.message))
    return { "rutter · compare", "", line }, { "rutter · compare", "", line }, {}
  end
  local differ = {}
  local same = type(result.same) == "table" and result.same or {}
  local keys = vim.tbl_keys(same)
  table.sort(keys)
  for _, key in ipairs(keys) do
    if same[key] == false then
      differ[#differ + 1] = key
    end
  end
  return side_lines(result, "a"), side_lines(result, "b"), differ
end

return M
