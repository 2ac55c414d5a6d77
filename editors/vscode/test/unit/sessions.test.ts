import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { startRutter } from "../../src/app";
import type { RunEntry } from "../../src/protocol";
import { Methods } from "../../src/protocol";
import { SessionCommands, nodeIdOf } from "../../src/sessions";
import type { PickItem } from "../../src/ports";
import { FakeEditor, FakeServer, outline, settle } from "../fakes";
import { run } from "../fixtures";
import { RUN_A, RUN_B, comparison, continuityNode, recent, sessionTree } from "../sessionFixtures";

interface Script {
  runs?: RunEntry[];
  fork?: (params: unknown) => unknown;
  fail?: string;
}

function setup(script: Script = {}) {
  const editor = new FakeEditor();
  const server = new FakeServer((method, params) => {
    if (script.fail === method) {
      throw Object.assign(new Error("failed"), { data: { code: "not_found", message: "no continuity node node_x" } });
    }
    switch (method) {
      case Methods.effectiveInstructions:
        return {
          protocol_version: "project_instruction_snapshot.v1", workspace_id: "shop", target_path: "a.go",
          fingerprint: "f".repeat(64), loaded_at: "", sources: [], ignored: [], conflicts: [],
        };
      case Methods.runs:
        return { runs: script.runs ?? [run({ run_id: RUN_A })] };
      case Methods.sessionRecent:
        return recent();
      case Methods.sessionTree: {
        const tree = sessionTree();
        return { ...tree, run_id: (params as { run_id: string }).run_id };
      }
      case Methods.sessionCheckpoint:
        return continuityNode("node_new", (params as { title: string }).title);
      case Methods.sessionFork:
        return script.fork?.(params) ?? { kind: "fork", run_id: "run_forked", mission_id: "msn_2", session_id: "ses_2", thread_id: "thr_2", node_id: "node_marker", parent_node_id: (params as { node_id: string }).node_id, source_run_id: RUN_A, revision: 1, fingerprint: "a".repeat(64), status: "created", mode: "ask", profile: null };
      case Methods.sessionResume:
        return { node_id: (params as { node_id: string }).node_id, cancelled: true };
      case Methods.sessionCompare: {
        const { node_a, node_b } = params as { node_a: string; node_b: string };
        return comparison(node_a, node_b);
      }
      case Methods.sessionNode:
        return continuityNode((params as { node_id: string }).node_id, `title of ${(params as { node_id: string }).node_id}`);
      default:
        throw new Error(`unexpected ${method}`);
    }
  });
  const rutter = startRutter({ editor, server });
  return { editor, server, rutter };
}

async function started(script: Script = {}) {
  const made = setup(script);
  made.editor.setActiveFile({ uri: "file:///w/a.go", path: "/w/a.go", folder: "/w" });
  made.server.fireStarted();
  await settle();
  await made.rutter.sessions.refresh();
  return made;
}

function sent(server: FakeServer, method: string): unknown[] {
  return server.sent.filter((each) => each.method === method).map((each) => each.params);
}

const byLabel = (label: string) => (items: PickItem<unknown>[]) => items.find((item) => item.label.endsWith(label))?.value;

describe("the session tree and its commands", () => {
  it("shows the tree of the newest node's run, and its last checkpoint in the status bar", async () => {
    const { editor, server } = await started();
    assert.equal(outline(editor.tree("rutter.sessions")).length, 5);
    assert.deepEqual(sent(server, Methods.sessionRecent).at(-1), { workspace_id: "shop", limit: 1 });
    // recent() lists node_two (run B) first: its run's tree is shown.
    assert.deepEqual(sent(server, Methods.sessionTree).at(-1), { run_id: RUN_B });
    assert.equal(editor.sessionStatus?.text, "$(warning) on the fork");
  });

  it("asks again on sessionsChanged for the shown workspace only, and on runsChanged", async () => {
    const { server } = await started();
    const asked = sent(server, Methods.sessionTree).length;
    server.notify(Methods.sessionsChanged, { workspace_ids: ["elsewhere"] });
    await settle();
    assert.equal(sent(server, Methods.sessionTree).length, asked);
    server.notify(Methods.sessionsChanged, { workspace_ids: ["shop"] });
    await settle();
    assert.equal(sent(server, Methods.sessionTree).length, asked + 1);
    server.notify(Methods.runsChanged, { workspace_ids: ["shop"] });
    await settle();
    assert.equal(sent(server, Methods.sessionTree).length, asked + 2);
  });

  it("Create Checkpoint: of the only active run, with a title asked for", async () => {
    const { editor, server } = await started();
    editor.inputAnswers.push("before the refactor");
    await editor.run(SessionCommands.checkpoint);
    assert.deepEqual(sent(server, Methods.sessionCheckpoint), [{ run_id: RUN_A, title: "before the refactor" }]);
    const input = editor.inputs.at(-1);
    assert.equal(input?.validate?.("  "), "The title cannot be empty");
    assert.equal(input?.validate?.("x".repeat(257)), "At most 256 bytes");
    assert.equal(input?.validate?.("ok"), undefined);
    assert.match(editor.messages.at(-1)?.text ?? "", /checkpoint "before the refactor" \(node_new\)/);
    assert.deepEqual(sent(server, Methods.sessionTree).at(-1), { run_id: RUN_A });
  });

  it("Create Checkpoint: picks among several runs, and says when there is none", async () => {
    const script: Script = { runs: [run({ run_id: RUN_A, goal: "a" }), run({ run_id: RUN_B, goal: "b" })] };
    const { editor, server } = await started(script);
    editor.pickAnswers.push(byLabel("a"));
    editor.inputAnswers.push("t");
    await editor.run(SessionCommands.checkpoint);
    assert.equal(editor.picks.at(-1)?.placeholder, "Checkpoint which run?");
    // The current run (B, shown in the tree) comes first.
    assert.deepEqual(editor.picks.at(-1)?.items.map((item) => item.value), [RUN_B, RUN_A]);
    assert.deepEqual(sent(server, Methods.sessionCheckpoint), [{ run_id: RUN_A, title: "t" }]);
    script.runs = [];
    await editor.run(SessionCommands.checkpoint);
    assert.match(editor.messages.at(-1)?.text ?? "", /no active run in workspace shop; create one with "Rutter: Create Run…"/);
  });

  it("Fork from Checkpoint…: quick pick with title, time, run and drift; goal; the new run is shown", async () => {
    const { editor, server } = await started();
    editor.pickAnswers.push(byLabel("one"));
    editor.inputAnswers.push("try B");
    await editor.run(SessionCommands.fork);
    const items = editor.picks.at(-1)?.items ?? [];
    assert.equal(editor.picks.at(-1)?.placeholder, "Fork from which checkpoint?");
    assert.deepEqual(items.map((item) => item.label), ["$(warning) on the fork", "fork of run_…BBBBB", "one", "run started"]);
    assert.equal(items[0]?.description, "checkpoint · 2026-12-03 14:20 UTC · run run_…BBBBB (created)");
    assert.match(items[0]?.detail ?? "", /^drift: /);
    assert.deepEqual(sent(server, Methods.sessionFork), [{ node_id: "node_one", goal: "try B" }]);
    assert.match(editor.messages.at(-1)?.text ?? "", /forked from node_one: run run_forked \(ask mode, instructions revision 1\)/);
    assert.deepEqual(sent(server, Methods.sessionTree).at(-1), { run_id: "run_forked" });
  });

  it("Fork from a tree node: no pick; cancelled by the person, nothing is shown as created", async () => {
    const { editor, server } = await started({ fork: (params) => ({ node_id: (params as { node_id: string }).node_id, cancelled: true }) });
    editor.inputAnswers.push("g");
    const picks = editor.picks.length;
    await editor.run(SessionCommands.fork, { id: "node/node_two" });
    assert.equal(editor.picks.length, picks);
    assert.deepEqual(sent(server, Methods.sessionFork), [{ node_id: "node_two", goal: "g" }]);
    assert.equal(editor.messages.at(-1)?.text, "rutter: fork cancelled; nothing was created");
    // No goal given: nothing is sent.
    await editor.run(SessionCommands.fork, "node_two");
    assert.equal(sent(server, Methods.sessionFork).length, 1);
  });

  it("Resume from Checkpoint…: picked; the server's answer (here: declined) is said", async () => {
    const { editor, server } = await started();
    editor.pickAnswers.push(byLabel("one"));
    await editor.run(SessionCommands.resume);
    assert.equal(editor.picks.at(-1)?.placeholder, "Resume from which checkpoint?");
    assert.deepEqual(sent(server, Methods.sessionResume), [{ node_id: "node_one" }]);
    assert.equal(editor.messages.at(-1)?.text, "rutter: resume cancelled; nothing was created");
  });

  it("a refused fork shows the server's typed message", async () => {
    const { editor } = await started({ fail: Methods.sessionFork });
    editor.inputAnswers.push("g");
    await editor.run(SessionCommands.fork, "node_x");
    assert.equal(editor.messages.at(-1)?.text, "rutter: nothing was created: no continuity node node_x");
  });

  it("Compare Checkpoints…: A from the node, B picked (never A), both snapshots in the diff editor", async () => {
    const { editor, server } = await started();
    editor.pickAnswers.push(byLabel("on the fork"));
    await editor.run(SessionCommands.compare, { id: "node/node_one" });
    const items = editor.picks.at(-1)?.items ?? [];
    assert.ok(!items.some((item) => (item.value as { node_id: string }).node_id === "node_one"));
    assert.deepEqual(sent(server, Methods.sessionCompare), [{ node_a: "node_one", node_b: "node_two" }]);
    const diff = editor.diffs.at(-1);
    assert.equal(diff?.title, "title of node_one ↔ title of node_two");
    assert.equal(diff?.left.name, "node_one.md");
    assert.match(diff?.left.text ?? "", /said at title of node_one/);
    assert.match(diff?.right.text ?? "", /said at title of node_two/);
    assert.match(editor.messages.at(-1)?.text ?? "", /differs: fingerprint, git head; memory references 1 added/);
  });

  it("Compare Checkpoints… from the palette picks both; dismissing a pick does nothing", async () => {
    const { editor, server } = await started();
    editor.pickAnswers.push(byLabel("run started"), byLabel("one"));
    await editor.run(SessionCommands.compare);
    assert.deepEqual(sent(server, Methods.sessionCompare), [{ node_a: "node_root", node_b: "node_one" }]);
    await editor.run(SessionCommands.compare);
    assert.equal(sent(server, Methods.sessionCompare).length, 1);
  });

  it("Show Session Tree: picks the run when the workspace has several, then reveals the view", async () => {
    const { editor, server } = await started();
    editor.pickAnswers.push((items) => items.find((item) => item.value === RUN_A)?.value);
    await editor.run(SessionCommands.showTree);
    assert.equal(editor.picks.at(-1)?.items.length, 2);
    assert.deepEqual(sent(server, Methods.sessionTree).at(-1), { run_id: RUN_A });
    assert.deepEqual(editor.revealed, ["rutter.sessions"]);
    assert.equal(editor.sessionStatus?.text, "$(bookmark) one");
  });

  it("the view's refresh button asks again; a chosen run that is gone falls back to the newest", async () => {
    const script: Script = {};
    const { editor, server } = await started(script);
    const asked = sent(server, Methods.sessionTree).length;
    await editor.run(SessionCommands.refresh);
    assert.equal(sent(server, Methods.sessionTree).length, asked + 1);
    editor.pickAnswers.push((items) => items.find((item) => item.value === RUN_A)?.value);
    await editor.run(SessionCommands.showTree);
    script.fail = Methods.sessionTree;
    await editor.run(SessionCommands.refresh);
    assert.deepEqual(editor.tree("rutter.sessions"), []);
    assert.equal(editor.sessionStatus, undefined);
    script.fail = undefined;
    await editor.run(SessionCommands.refresh);
    assert.deepEqual(sent(server, Methods.sessionTree).at(-1), { run_id: RUN_B });
  });

  it("Open Checkpoint: the node's snapshot in a read-only document", async () => {
    const { editor } = await started();
    await editor.run(SessionCommands.open, "node_one");
    assert.equal(editor.readOnly.at(-1)?.name, "node_one.md");
    assert.match(editor.readOnly.at(-1)?.text ?? "", /^# title of node_one \(checkpoint\)/);
  });

  it("says what to do without a workspace, and takes node IDs in every form", async () => {
    const { editor } = setup();
    await editor.run(SessionCommands.fork);
    assert.equal(editor.messages.at(-1)?.text, "rutter: open a file of a served workspace folder first");
    assert.equal(nodeIdOf("node_1"), "node_1");
    assert.equal(nodeIdOf({ node_id: "node_2" }), "node_2");
    assert.equal(nodeIdOf({ id: "node/node_3" }), "node_3");
    assert.equal(nodeIdOf({ id: "run/run_1" }), undefined);
    assert.equal(nodeIdOf(undefined), undefined);
  });
});
