-- The session formatter without a server (`nvim --clean --headless -l session_unit.lua`):
-- drift markers of every kind, a node failing its check, a projected node, nested branches and
-- their folds, an error answer, a comparison with memory changes, a node without a snapshot.
vim.opt.runtimepath:prepend(vim.env.RUTTER_NVIM_PLUGIN)
local H = dofile(vim.env.RUTTER_NVIM_HARNESS)
local fmt = require("rutter.session_format")

local function keyed(map)
  local out = {}
  for key, value in pairs(map) do
    out[tostring(key)] = value
  end
  return out
end

local FP = string.rep("a", 64)
local function node(id, parent, kind, extra)
  local n = {
    node_id = id,
    parent_node_id = parent or vim.NIL,
    kind = kind,
    projected = false,
    run_id = "run_1",
    session_id = "ses_1",
    thread_id = "thr_1",
    run_status = "running",
    title = vim.NIL,
    created_by = "cli",
    created_at = "2026-12-03T10:00:00Z",
    drift = { memory = {}, instructions = vim.NIL, git = vim.NIL },
    error = vim.NIL,
  }
  for key, value in pairs(extra or {}) do
    n[key] = value
  end
  return n
end

local TREE = {
  protocol_version = "session_tree.v1",
  workspace_id = "demo",
  run_id = "run_2",
  session_id = "ses_2",
  root_node_id = "node_root",
  computed_at = "2026-12-03T11:00:00Z",
  truncated = true,
  nodes = {
    node("node_root", nil, "root"),
    node("node_cp", "node_root", "checkpoint", {
      title = "parser done\nsecond line",
      drift = {
        memory = {
          { memory_id = "mem_a", version = 1, state = "active" },
          { memory_id = "mem_b", version = 2, state = "deleted" },
          { memory_id = "mem_c", version = 1, state = "deleted" },
          { memory_id = "mem_d", version = 1, state = "version_drift" },
        },
        instructions = { pinned_fingerprint = FP, live_fingerprint = vim.NIL, live_error = "symlink", changed = true },
        git = { branch_changed = true, head_changed = true },
      },
    }),
    node("note_1", "node_cp", "decision", { projected = true, title = "use tables", drift = vim.NIL }),
    node("node_fork", "node_cp", "fork", { run_id = "run_2" }),
    node("node_cp2", "node_fork", "checkpoint", { run_id = "run_2", title = "tampered", drift = vim.NIL, error = { code = "snapshot_tampered", message = "x" } }),
    node("node_resume", "node_cp2", "resume", { run_id = "run_3" }),
  },
}

H.run(function(R)
  local tree = fmt.tree(TREE, { current_run = "run_2", marks = { "node_fork" } })
  local rows = {}
  for lnum, n in pairs(tree.rows) do
    rows[tostring(lnum)] = n.node_id
  end
  R.tree = { lines = tree.lines, rows = rows, levels = keyed(tree.levels), starts = keyed(tree.starts), hl = tree.hl }
  R.error_tree = fmt.tree({ error = { code = "run_not_found", message = "no run run_x" } }).lines
  R.usable = {
    fmt.usable(TREE.nodes[2]), fmt.usable(TREE.nodes[3]), fmt.usable(TREE.nodes[5]),
  }
  R.pick = fmt.pick_label(TREE.nodes[2])
  local a, b, differ = fmt.compare({
    a = { node_id = "node_a", kind = "checkpoint", title = "A", run_id = "run_1", session_id = "ses_1", run_status = "running", instructions = { revision = 1, fingerprint = FP }, git = { branch = "main", head = "h1" }, message_count = 3, memory_references = 2 },
    b = { node_id = "node_b", kind = "resume", run_id = "run_2", session_id = "ses_2", run_status = "created", instructions = { revision = 1, fingerprint = FP }, git_reason = "not_a_git_work_tree" },
    same = { fingerprint = false, run = false, session = false, run_status = false, instructions = true, project_configuration = false, git_branch = false, git_head = false, message_count = false },
    memory = {
      added = { { memory_id = "mem_new", version = 1, content_sha256 = "x" } },
      removed = { { memory_id = "mem_old", version = 4, content_sha256 = "y" } },
      changed = { { memory_id = "mem_mid", a_version = 1, b_version = 3 } },
      unchanged = 5,
    },
  })
  R.compare = { a = a, b = b, differ = differ }
  R.bare_node = fmt.node({ node_id = "node_root", kind = "root", run_id = "run_1", session_id = "ses_1", thread_id = "thr_1", created_at = "2026-12-03T10:00:00Z", created_by = "cli" })
end)
