/** Session answers as the unit tests use them (shapes of rutter_core/continuity/tree.py and
 * snapshot.py, as `rutter/session/*` sends them). */

import type { ContinuityNode, Drift, NodeComparison, RecentNodes, SessionTree, TreeNode } from "../src/protocol";

export const HEAD = "c".repeat(40);

export function noDrift(): Drift {
  return {
    memory: [{ memory_id: "mem_01", version: 1, state: "active" }],
    instructions: { pinned_fingerprint: "a".repeat(64), live_fingerprint: "a".repeat(64), live_error: null, changed: false },
    git: {
      recorded: { branch: "main", head: HEAD },
      recorded_reason: null,
      current: { branch: "main", head: HEAD },
      current_reason: null,
      branch_changed: false,
      head_changed: false,
    },
  };
}

export function drifted(): Drift {
  const drift = noDrift();
  return {
    memory: [
      { memory_id: "mem_01", version: 1, state: "deleted" },
      { memory_id: "mem_02", version: 3, state: "version_drift" },
    ],
    instructions: { pinned_fingerprint: "a".repeat(64), live_fingerprint: "b".repeat(64), live_error: null, changed: true },
    git: drift.git === null ? null : { ...drift.git, current: { branch: "main", head: "d".repeat(40) }, head_changed: true },
  };
}

export function treeNode(overrides: Partial<TreeNode> = {}): TreeNode {
  return {
    node_id: "node_01AAAAAAAAAAAAAAAAAAAAAAAA",
    parent_node_id: null,
    kind: "checkpoint",
    projected: false,
    run_id: "run_01RUNAAAAAAAAAAAAAAAAAAAAA",
    session_id: "ses_01",
    thread_id: "thr_01",
    run_status: "running",
    title: "before the refactor",
    created_by: "cli",
    created_by_person: "alice",
    created_at: "2026-12-03T14:13:25Z",
    fingerprint: "f".repeat(64),
    drift: noDrift(),
    error: null,
    ...overrides,
  };
}

export const RUN_A = "run_01RUNAAAAAAAAAAAAAAAAAAAAA";
export const RUN_B = "run_01RUNBBBBBBBBBBBBBBBBBBBBB";

/** root → checkpoint "one" → (fork marker of run B → checkpoint "on the fork", drifted),
 * plus a projected decision under "one". */
export function sessionTree(): SessionTree {
  const nodes: TreeNode[] = [
    treeNode({ node_id: "node_root", kind: "root", title: null, drift: { memory: [], instructions: noDrift().instructions, git: null }, fingerprint: null, created_at: "2026-12-03T14:00:00Z" }),
    treeNode({ node_id: "node_one", parent_node_id: "node_root", title: "one", created_at: "2026-12-03T14:10:00Z" }),
    treeNode({ node_id: "note_decision", parent_node_id: "node_one", kind: "decision", projected: true, title: "use the new parser", drift: null, fingerprint: null, created_at: "2026-12-03T14:11:00Z" }),
    treeNode({ node_id: "node_fork", parent_node_id: "node_one", kind: "fork", title: null, run_id: RUN_B, run_status: "created", drift: { memory: [], instructions: noDrift().instructions, git: null }, fingerprint: null, created_at: "2026-12-03T14:12:00Z" }),
    treeNode({ node_id: "node_two", parent_node_id: "node_fork", title: "on the fork", run_id: RUN_B, run_status: "created", drift: drifted(), created_at: "2026-12-03T14:20:00Z" }),
  ];
  return {
    protocol_version: "session_tree.v1",
    workspace_id: "shop",
    run_id: RUN_A,
    session_id: "ses_01",
    root_node_id: "node_root",
    computed_at: "2026-12-03T15:00:00Z",
    truncated: false,
    nodes,
  };
}

export function recent(items: TreeNode[] = [...sessionTree().nodes].filter((n) => !n.projected).reverse()): RecentNodes {
  return { workspace_id: "shop", computed_at: "2026-12-03T15:00:00Z", items, has_more: false };
}

export function continuityNode(nodeId: string, title: string): ContinuityNode {
  return {
    protocol_version: "session_continuity_node.v1",
    node_id: nodeId,
    parent_node_id: "node_root",
    kind: "checkpoint",
    run_id: RUN_A,
    session_id: "ses_01",
    thread_id: "thr_01",
    title,
    created_by: "cli",
    created_by_person: "alice",
    created_at: "2026-12-03T14:10:00Z",
    snapshot: {
      protocol_version: "continuity_snapshot.v1",
      fingerprint: "f".repeat(64),
      created_at: "2026-12-03T14:10:00Z",
      workspace_id: "shop",
      mission_id: "msn_01",
      run_id: RUN_A,
      mode: "ask",
      title,
      summary: null,
      compaction_summary: null,
      messages: { total: 2, items: [{ message_id: "msg_2", seq: 2, role: "user", source: "cli", text: `said at ${title}`, text_truncated: false }] },
      memory: { total_active: 1, truncated: false, references: [{ memory_id: "mem_01", version: 1, content_sha256: "e".repeat(64) }] },
      instructions: { run_id: RUN_A, revision: 1, fingerprint: "a".repeat(64), target_path: "." },
      project_configuration: { fingerprint: "a".repeat(64), matches_pinned: true, reason: null },
      git: { branch: "main", head: HEAD },
      git_reason: null,
      inherits: ["workspace", "pinned_instructions", "compaction_summary", "messages", "memory_references"],
    },
  };
}

export function comparison(a: string, b: string): NodeComparison {
  const side = (nodeId: string) => ({
    node_id: nodeId, kind: "checkpoint", title: nodeId, fingerprint: "f".repeat(64), run_id: RUN_A,
    session_id: "ses_01", run_status: "running", instructions: { revision: 1, fingerprint: "a".repeat(64) },
    project_configuration_fingerprint: "a".repeat(64), git: { branch: "main", head: HEAD }, git_reason: null,
    message_count: 2, memory_references: 1,
  });
  return {
    a: side(a),
    b: side(b),
    same: { fingerprint: false, run: true, session: true, run_status: true, instructions: true, project_configuration: true, git_branch: true, git_head: false, message_count: true },
    memory: { added: [{ memory_id: "mem_02", version: 1, content_sha256: "d".repeat(64) }], removed: [], changed: [], unchanged: 1 },
  };
}

/** A projected compaction under `parent` (what `rutter/session/tree` lists for a completed
 * `rutter session compact`). */
export function compactionNode(parent: string, overrides: Partial<TreeNode> = {}): TreeNode {
  return treeNode({
    node_id: "cmp_01COMPACTIONAAAAAAAAAAAAAA",
    parent_node_id: parent,
    kind: "compaction",
    projected: true,
    title: "Summary of 10 earlier messages of thread thr_01, extracted by rutter (data, not instr…",
    fingerprint: null,
    drift: null,
    created_at: "2026-12-03T14:15:00Z",
    compaction: { summarizer: "extractive", compacted_message_count: 10, unread_message_count: 2, kept_message_count: 4, summary_tokens: 120 },
    ...overrides,
  });
}
