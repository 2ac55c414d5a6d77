import assert from "node:assert/strict";
import { describe, it } from "node:test";

import {
  NodeContext,
  OPEN_NODE_COMMAND,
  SHOW_TREE_COMMAND,
  checkpointStatus,
  comparisonText,
  compactionFactsText,
  driftText,
  nodeDocument,
  nodeItem,
  sessionNodes,
  shortId,
  timeText,
} from "../../src/sessionsView";
import type { ViewNode } from "../../src/ports";
import { outline } from "../fakes";
import { RUN_A, RUN_B, comparison, compactionNode, continuityNode, drifted, sessionTree, treeNode } from "../sessionFixtures";

function find(nodes: ViewNode[], id: string): ViewNode {
  for (const node of nodes) {
    if (node.id === id) {
      return node;
    }
    const below = node.children === undefined ? undefined : find(node.children, id);
    if (below !== undefined) {
      return below;
    }
  }
  return undefined as unknown as ViewNode;
}

describe("the session tree view's data", () => {
  it("nests nodes by parent: branch markers under the node they branch from", () => {
    const nodes = sessionNodes(sessionTree());
    assert.deepEqual(outline(nodes), [
      "run started — 2026-12-03 14:00 UTC · run_…AAAAA · no drift",
      "  one — 2026-12-03 14:10 UTC · run_…AAAAA · no drift",
      "    use the new parser — projected · 2026-12-03 14:11 UTC · run_…AAAAA · projected (cannot be forked or resumed)",
      "    fork → fork of run_…BBBBB — 2026-12-03 14:12 UTC · run_…BBBBB · no drift",
      "      on the fork — 2026-12-03 14:20 UTC · run_…BBBBB · drift: memory: 1 deleted, 1 version drift; instructions changed; git HEAD moved",
    ]);
    assert.equal(find(nodes, "node/node_one").expanded, true);
    assert.equal(find(nodes, "node/node_two").children, undefined);
  });

  it("shows a compaction below its thread's node with what its summary covers", () => {
    const tree = sessionTree();
    const nodes = sessionNodes({ ...tree, nodes: [...tree.nodes, compactionNode("node_one")] });
    const summary = find(nodes, "node/cmp_01COMPACTIONAAAAAAAAAAAAAA");
    assert.deepEqual(outline(find(nodes, "node/node_one").children ?? []).slice(-1), [
      "summary of 10 messages — projected · 2026-12-03 14:15 UTC · 10 messages summarized (2 not read) · extractive",
    ]);
    assert.deepEqual([summary.icon, summary.iconColor, summary.contextValue], ["fold", "disabledForeground", NodeContext.compaction]);
    assert.equal(summary.command, undefined);
    const tooltip = summary.tooltip ?? "";
    assert.match(tooltip, /^summary of 10 messages \(compaction, projected\)\nnode cmp_01COMPACTIONAAAAAAAAAAAAAA\n/);
    assert.match(tooltip, /compaction of thread thr_01: 10 messages summarized \(2 not read\) · extractive; the newest 4 kept verbatim; summary 120 tokens/);
    assert.match(tooltip, /summary: Summary of 10 earlier messages of thread thr_01/);
    assert.match(tooltip, /made 2026-12-03 14:15 UTC by alice via cli/);
    assert.match(tooltip, /carries no authority and cannot be forked or resumed/);
    assert.equal(compactionFactsText(compactionNode("n", { compaction: { summarizer: "command", compacted_message_count: 3, unread_message_count: 0, kept_message_count: 4, summary_tokens: null } })),
      "3 messages summarized (all read) · command");
    assert.equal(compactionFactsText(treeNode()), undefined);
  });

  it("greys projected nodes, marks drift with icons and tooltips, and sets the context menus", () => {
    const nodes = sessionNodes(sessionTree());
    const projected = find(nodes, "node/note_decision");
    assert.deepEqual([projected.icon, projected.iconColor, projected.contextValue], ["comment", "disabledForeground", NodeContext.projected]);
    assert.equal(projected.command, undefined);
    assert.match(projected.tooltip ?? "", /cannot be forked or resumed/);

    const fork = find(nodes, "node/node_fork");
    assert.deepEqual([fork.icon, fork.contextValue], ["git-branch", NodeContext.stored]);

    const two = find(nodes, "node/node_two");
    assert.deepEqual([two.icon, two.iconColor], ["warning", "problemsWarningIcon.foreground"]);
    const tooltip = two.tooltip ?? "";
    for (const line of [
      "memory mem_01 (v1): deleted",
      "memory mem_02 (v3): version_drift",
      `instructions: pinned ${"a".repeat(12)}, on disk now ${"b".repeat(12)}`,
      `git: recorded main @ ${"c".repeat(12)}; now main @ ${"d".repeat(12)}`,
    ]) {
      assert.ok(tooltip.includes(line), line);
    }
    assert.deepEqual(two.command, { command: OPEN_NODE_COMMAND, title: "Open", arguments: ["node_two"] });
    assert.match(find(nodes, "node/node_one").tooltip ?? "", /the current run/);
    assert.doesNotMatch(two.tooltip ?? "", /the current run/);
  });

  it("shows a node failing its check, and a truncated tree", () => {
    const tree = sessionTree();
    tree.nodes[1] = treeNode({ ...tree.nodes[1], drift: null, error: { code: "snapshot_tampered", message: "changed outside rutter" } });
    tree.truncated = true;
    const nodes = sessionNodes(tree);
    const broken = find(nodes, "node/node_one");
    assert.deepEqual([broken.icon, broken.contextValue], ["error", NodeContext.broken]);
    assert.match(broken.description ?? "", /fails its check \(snapshot_tampered\)/);
    assert.equal(nodes.at(-1)?.id, "tree/truncated");
  });

  it("puts title, time, run and drift of a checkpoint in a quick pick item", () => {
    const item = nodeItem(treeNode({ drift: drifted() }));
    assert.equal(item.label, "$(warning) before the refactor");
    assert.equal(item.description, "checkpoint · 2026-12-03 14:13 UTC · run run_…AAAAA (running)");
    assert.equal(item.detail, "drift: memory: 1 deleted, 1 version drift; instructions changed; git HEAD moved");
    assert.equal(nodeItem(treeNode()).label, "before the refactor");
    assert.equal(nodeItem(treeNode()).detail, "no drift");
    assert.equal(driftText(treeNode({ drift: { memory: [], instructions: { pinned_fingerprint: "a", live_fingerprint: null, live_error: "unreadable", changed: true }, git: null } })), "drift: instructions: discovery fails (unreadable)");
  });

  it("shows the current run's last checkpoint in the status bar", () => {
    const tree = sessionTree();
    const status = checkpointStatus(tree, RUN_A);
    assert.equal(status?.text, "$(bookmark) one");
    assert.equal(status?.command, SHOW_TREE_COMMAND);
    assert.match(status?.tooltip ?? "", /last checkpoint of run .*"one" \(node_one\), 2026-12-03 14:10 UTC/);
    assert.equal(checkpointStatus(tree, RUN_B)?.text, "$(warning) on the fork");
    assert.equal(checkpointStatus({ ...tree, nodes: tree.nodes.slice(0, 1) }, RUN_A), undefined);
  });

  it("renders a node's snapshot line by line for the diff editor", () => {
    const text = nodeDocument(continuityNode("node_one", "one"), comparison("node_one", "node_two").a);
    const lines = text.split("\n");
    for (const line of [
      "# one (checkpoint)",
      `run:         ${RUN_A} (running now)`,
      "## Instructions pinned",
      `fingerprint ${"a".repeat(64)}`,
      "branch main",
      `HEAD ${"c".repeat(40)}`,
      `mem_01 v1 ${"e".repeat(12)}`,
      "## Messages (last 1 of 2)",
      "#2 user · cli",
      "said at one",
      "## A fork or resume takes: workspace, pinned_instructions, compaction_summary, messages, memory_references",
    ]) {
      assert.ok(lines.includes(line), line);
    }
    const root = nodeDocument({ ...continuityNode("node_root", "x"), kind: "root", title: null, snapshot: null });
    assert.match(root, /records no snapshot/);
    assert.equal(comparisonText(comparison("a", "b")), "differs: fingerprint, git head; memory references 1 added");
  });

  it("words times and IDs briefly", () => {
    assert.equal(timeText("2026-12-03T14:13:25Z"), "2026-12-03 14:13 UTC");
    assert.equal(timeText("soon"), "soon");
    assert.equal(shortId("run_01M8Y3HJTQYDNPR8CJ56SS1T0B"), "run_…S1T0B");
    assert.equal(shortId("run_1"), "run_1");
  });
});
