/**
 * What the session features show, as data: the "Session Tree" view's nodes, the quick-pick
 * items of checkpoints, the status bar's last checkpoint, and the read-only documents of a
 * node's snapshot that "Compare Checkpoints…" puts side by side. Pure.
 */

import type { ComparedNode, ContinuityNode, Drift, NodeComparison, SessionTree, TreeNode } from "./protocol";
import { who } from "./people";
import type { PickItem, StatusModel, ViewNode } from "./ports";

export const OPEN_NODE_COMMAND = "rutter.openCheckpoint";
export const SHOW_TREE_COMMAND = "rutter.showSessionTree";

/** `viewItem` values; context menus match `^node\.stored` (fork, resume, compare, open) and
 * `^node\.` ("Compact Thread…", of the node's thread). */
export const NodeContext = {
  stored: "node.stored",
  projected: "node.projected",
  compaction: "node.compaction",
  broken: "node.broken",
} as const;

const WARNING_COLOR = "problemsWarningIcon.foreground";
const ERROR_COLOR = "problemsErrorIcon.foreground";
const GREY = "disabledForeground";

/** `2026-12-03T14:13:25Z` → `2026-12-03 14:13 UTC`. */
export function timeText(rfc3339: string): string {
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})/.exec(rfc3339);
  return match === null ? rfc3339 : `${match[1]} ${match[2]} UTC`;
}

export function shortId(id: string): string {
  const cut = id.indexOf("_");
  // The ULID's random tail tells IDs apart: `run_…S1T0B`.
  return cut < 0 || id.length <= cut + 7 ? id : `${id.slice(0, cut + 1)}…${id.slice(-5)}`;
}

/** Each drift marker that differs from what the node recorded, in words. */
export function driftParts(drift: Drift | null): string[] {
  if (drift === null) {
    return [];
  }
  const parts: string[] = [];
  const memory = new Map<string, number>();
  for (const marker of drift.memory) {
    if (marker.state !== "active") {
      memory.set(marker.state, (memory.get(marker.state) ?? 0) + 1);
    }
  }
  if (memory.size > 0) {
    const states = [...memory].map(([state, count]) => `${count} ${state.replace("_", " ")}`);
    parts.push(`memory: ${states.join(", ")}`);
  }
  const instructions = drift.instructions;
  if (instructions?.changed === true) {
    parts.push(instructions.live_error !== null ? `instructions: discovery fails (${instructions.live_error})` : "instructions changed");
  }
  if (drift.git?.branch_changed === true) {
    parts.push("git branch changed");
  }
  if (drift.git?.head_changed === true) {
    parts.push("git HEAD moved");
  }
  return parts;
}

/** One line: the drift, or that there is none (or that nothing was recorded). */
export function driftText(node: TreeNode): string {
  if (node.error !== null) {
    return `fails its check (${String(node.error.code)})`;
  }
  if (node.projected) {
    return "projected (cannot be forked or resumed)";
  }
  const parts = driftParts(node.drift);
  return parts.length > 0 ? `drift: ${parts.join("; ")}` : "no drift";
}

/** A projected compaction's facts in words: `12 messages summarized (2 not read) · extractive`. */
export function compactionFactsText(node: TreeNode): string | undefined {
  const facts = node.compaction;
  if (facts === null || facts === undefined) {
    return undefined;
  }
  const unread = facts.unread_message_count > 0 ? `${facts.unread_message_count} not read` : "all read";
  return `${facts.compacted_message_count} messages summarized (${unread}) · ${facts.summarizer}`;
}

function label(node: TreeNode): string {
  if (node.compaction !== null && node.compaction !== undefined) {
    return `summary of ${node.compaction.compacted_message_count} messages`;
  }
  return node.title ?? (node.kind === "root" ? "run started" : `${node.kind} of ${shortId(node.run_id)}`);
}

function icon(node: TreeNode): { icon: string; color?: string } {
  if (node.error !== null) {
    return { icon: "error", color: ERROR_COLOR };
  }
  if (node.projected) {
    return { icon: node.kind === "compaction" ? "fold" : "comment", color: GREY };
  }
  if (driftParts(node.drift).length > 0) {
    return { icon: "warning", color: WARNING_COLOR };
  }
  switch (node.kind) {
    case "fork":
      return { icon: "git-branch" };
    case "resume":
      return { icon: "debug-continue" };
    case "root":
      return { icon: "circle-outline" };
    default:
      return { icon: "bookmark" };
  }
}

function driftTooltip(node: TreeNode): string[] {
  const drift = node.drift;
  if (drift === null) {
    return [];
  }
  const lines: string[] = [];
  for (const marker of drift.memory) {
    lines.push(`memory ${marker.memory_id} (v${marker.version}): ${marker.state}`);
  }
  if (drift.instructions !== null) {
    const i = drift.instructions;
    lines.push(
      i.changed
        ? `instructions: pinned ${i.pinned_fingerprint.slice(0, 12)}, on disk now ${i.live_error ?? i.live_fingerprint?.slice(0, 12) ?? "?"}`
        : `instructions: as pinned (${i.pinned_fingerprint.slice(0, 12)})`,
    );
  }
  if (drift.git !== null) {
    const g = drift.git;
    const recorded = g.recorded === null ? (g.recorded_reason ?? "none") : `${g.recorded.branch ?? "(detached)"} @ ${g.recorded.head.slice(0, 12)}`;
    const current = g.current === null ? (g.current_reason ?? "none") : `${g.current.branch ?? "(detached)"} @ ${g.current.head.slice(0, 12)}`;
    lines.push(`git: recorded ${recorded}; now ${current}`);
  }
  return lines;
}

export function treeViewNode(node: TreeNode, children: ViewNode[] | undefined, shownRun: string): ViewNode {
  const { icon: name, color } = icon(node);
  const branch = node.kind === "fork" || node.kind === "resume" ? `${node.kind} → ` : "";
  const compaction = compactionFactsText(node);
  const context =
    node.error !== null
      ? NodeContext.broken
      : compaction !== undefined
        ? NodeContext.compaction
        : node.projected
          ? NodeContext.projected
          : NodeContext.stored;
  const tooltip = [
    `${label(node)} (${node.kind}${node.projected ? ", projected" : ""})`,
    `node ${node.node_id}`,
    `run ${node.run_id} (${node.run_status})${node.run_id === shownRun ? ", the current run" : ""}`,
    `made ${timeText(node.created_at)} by ${who(node.created_by, node.created_by_person)}`,
    ...(node.error !== null ? [`fails its integrity check: ${String(node.error.message)}`] : []),
    ...(compaction !== undefined
      ? [
          `compaction of thread ${node.thread_id}: ${compaction}; the newest ${node.compaction?.kept_message_count ?? 0} kept verbatim${typeof node.compaction?.summary_tokens === "number" ? `; summary ${node.compaction.summary_tokens} tokens` : ""}`,
          ...(node.title === null ? [] : [`summary: ${node.title}`]),
          "A compaction's summary shown in the tree: it carries no authority and cannot be forked or resumed.",
        ]
      : node.projected
        ? ["A decision note shown in the tree: it records no state and cannot be forked or resumed."]
        : []),
    driftText(node),
    ...driftTooltip(node),
  ];
  return {
    id: `node/${node.node_id}`,
    label: `${branch}${label(node)}`,
    description:
      compaction !== undefined
        ? `projected · ${timeText(node.created_at)} · ${compaction}`
        : `${node.projected ? "projected · " : ""}${timeText(node.created_at)} · ${shortId(node.run_id)} · ${driftText(node)}`,
    tooltip: tooltip.join("\n"),
    icon: name,
    iconColor: color,
    contextValue: context,
    command: node.projected || node.error !== null ? undefined : { command: OPEN_NODE_COMMAND, title: "Open", arguments: [node.node_id] },
    children,
    expanded: children === undefined ? undefined : true,
  };
}

/** The view's nodes: the tree by parent links (a branch marker under the node it branched
 * from), with a header line when the tree was cut short. */
export function sessionNodes(tree: SessionTree): ViewNode[] {
  const listed = new Set(tree.nodes.map((node) => node.node_id));
  const children = new Map<string | null, TreeNode[]>();
  for (const node of tree.nodes) {
    const parent = node.parent_node_id !== null && listed.has(node.parent_node_id) ? node.parent_node_id : null;
    children.set(parent, [...(children.get(parent) ?? []), node]);
  }
  const build = (node: TreeNode, seen: Set<string>): ViewNode => {
    seen.add(node.node_id);
    const below = (children.get(node.node_id) ?? []).filter((child) => !seen.has(child.node_id));
    return treeViewNode(node, below.length > 0 ? below.map((child) => build(child, seen)) : undefined, tree.run_id);
  };
  const seen = new Set<string>();
  const roots = (children.get(null) ?? []).map((node) => build(node, seen));
  if (tree.truncated) {
    roots.push({ id: "tree/truncated", label: "More nodes are connected than the tree lists", icon: "info" });
  }
  return roots;
}

/** A checkpoint in a quick pick: title, time, run and drift at a glance. */
export function nodeItem(node: TreeNode): PickItem<TreeNode> {
  const marker = node.error !== null ? "$(error) " : driftParts(node.drift).length > 0 ? "$(warning) " : "";
  return {
    label: `${marker}${label(node)}`,
    description: `${node.kind} · ${timeText(node.created_at)} · run ${shortId(node.run_id)} (${node.run_status})`,
    detail: driftText(node),
    value: node,
  };
}

/** The current run's last checkpoint in the status bar (undefined: none yet). */
export function checkpointStatus(tree: SessionTree, runId: string): StatusModel | undefined {
  const checkpoints = tree.nodes.filter((node) => node.run_id === runId && node.kind === "checkpoint" && !node.projected);
  const last = checkpoints.reduce<TreeNode | undefined>(
    (latest, node) => (latest === undefined || node.created_at >= latest.created_at ? node : latest),
    undefined,
  );
  if (last === undefined) {
    return undefined;
  }
  const drift = driftParts(last.drift);
  return {
    text: `${drift.length > 0 ? "$(warning)" : "$(bookmark)"} ${label(last)}`,
    tooltip: [
      `rutter: the last checkpoint of run ${runId}: "${label(last)}" (${last.node_id}), ${timeText(last.created_at)}.`,
      driftText(last),
      "Click to show the session tree.",
    ].join("\n"),
    warning: false,
    command: SHOW_TREE_COMMAND,
  };
}

function yesNo(value: boolean): string {
  return value ? "yes" : "no";
}

/** A node's snapshot as a read-only document (one side of a compare, or "Open"). Line by
 * line, so the diff editor lines up what is the same on both sides. */
export function nodeDocument(node: ContinuityNode, compared?: ComparedNode): string {
  const lines = [
    `# ${node.title ?? node.kind} (${node.kind})`,
    "",
    `node:        ${node.node_id}`,
    `parent:      ${node.parent_node_id ?? "none"}`,
    `run:         ${node.run_id}${compared !== undefined ? ` (${compared.run_status} now)` : ""}`,
    `session:     ${node.session_id}`,
    `thread:      ${node.thread_id}`,
    `made:        ${node.created_at} by ${who(node.created_by, node.created_by_person)}`,
  ];
  const snapshot = node.snapshot;
  if (snapshot === null) {
    lines.push(
      "",
      "A root or branch marker records no snapshot: it pins its run's first instruction revision.",
    );
    if (compared !== undefined && compared.instructions !== null) {
      lines.push(`instructions: revision ${compared.instructions.revision}, ${compared.instructions.fingerprint}`);
    }
    return `${lines.join("\n")}\n`;
  }
  lines.push(
    `fingerprint: ${snapshot.fingerprint}`,
    `mode:        ${snapshot.mode}`,
    "",
    "## Instructions pinned",
    `run ${snapshot.instructions.run_id}, revision ${snapshot.instructions.revision}, target ${snapshot.instructions.target_path}`,
    `fingerprint ${snapshot.instructions.fingerprint}`,
    `project configuration: ${snapshot.project_configuration.fingerprint ?? `unreadable (${snapshot.project_configuration.reason ?? "?"})`}; matches pinned: ${yesNo(snapshot.project_configuration.matches_pinned)}`,
    "",
    "## Git",
    snapshot.git === null ? `none (${snapshot.git_reason ?? "?"})` : `branch ${snapshot.git.branch ?? "(detached)"}`,
    ...(snapshot.git === null ? [] : [`HEAD ${snapshot.git.head}`]),
    "",
    "## Summary",
    snapshot.summary ?? "(none)",
    ...(snapshot.compaction_summary === null ? [] : ["", `compaction summary (${snapshot.compaction_summary.note_id} v${snapshot.compaction_summary.version}):`, snapshot.compaction_summary.text]),
    "",
    `## Memory references (${snapshot.memory.references.length} of ${snapshot.memory.total_active} active${snapshot.memory.truncated ? ", truncated" : ""})`,
    ...snapshot.memory.references.map((ref) => `${ref.memory_id} v${ref.version} ${ref.content_sha256.slice(0, 12)}`),
    "",
    `## Messages (last ${snapshot.messages.items.length} of ${snapshot.messages.total})`,
  );
  for (const message of snapshot.messages.items) {
    lines.push(`#${message.seq} ${message.role} · ${message.source}${message.text_truncated ? " · truncated" : ""}`, message.text, "");
  }
  lines.push(`## A fork or resume takes: ${snapshot.inherits.join(", ")}`);
  return `${lines.join("\n")}\n`;
}

/** What differs from A to B, in one line (the message shown with the diff). */
export function comparisonText(comparison: NodeComparison): string {
  const differs = Object.entries(comparison.same)
    .filter(([, same]) => !same)
    .map(([what]) => what.replace("_", " "));
  const memory = comparison.memory;
  const refs = [
    memory.added.length > 0 ? `${memory.added.length} added` : "",
    memory.removed.length > 0 ? `${memory.removed.length} removed` : "",
    memory.changed.length > 0 ? `${memory.changed.length} changed` : "",
  ].filter((part) => part !== "");
  return [
    differs.length > 0 ? `differs: ${differs.join(", ")}` : "same facts",
    refs.length > 0 ? `memory references ${refs.join(", ")}` : "same memory references",
  ].join("; ");
}
