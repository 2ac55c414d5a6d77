/**
 * Session continuity against the real server, as a person does it in VS Code: checkpoint the
 * current run (created with the CLI), fork from it (the server asks first, in a modal dialog,
 * saying what the new run inherits), see both branches in the Session Tree with the drift
 * markers once the repository moves on, compare the two nodes in the diff editor, and watch a
 * checkpoint made with the CLI reach the view through `rutter/sessionsChanged` alone. Every
 * request the commands send (`rutter/session/recent`, `/tree`, `/checkpoint`, `/fork`,
 * `/resume`, `/compare`, `/node`) is answered by the real server and read through the
 * extension's own types and view models.
 */

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";

import { type Rutter, startRutter } from "../../src/app";
import type { PickItem } from "../../src/ports";
import type { BranchedRun, ContinuityNode, RecentNodes, Snapshot } from "../../src/protocol";
import { Methods } from "../../src/protocol";
import { SessionCommands } from "../../src/sessions";
import { nodeItem } from "../../src/sessionsView";
import { FakeEditor, outline } from "../fakes";
import { RealServer, rutterCli, tempDir, uriOf, waitFor, writeTree } from "./harness";

interface Created {
  run_id: string;
  thread_id: string;
}

describe("session continuity against the real server", () => {
  let home: string;
  let root: string;
  let server: RealServer;
  let editor: FakeEditor;
  let rutter: Rutter;
  let created: Created;
  let checkpoint: ContinuityNode;
  let forked: BranchedRun;

  function cli(...args: string[]): string {
    return execFileSync(rutterCli(), args, { env: { ...process.env, RUTTER_HOME: home, RUTTER_DATABASE_URL: "" }, encoding: "utf8" });
  }

  function git(...args: string[]): void {
    execFileSync("git", ["-C", root, "-c", "user.name=t", "-c", "user.email=t@e.x", ...args], { stdio: "ignore" });
  }

  const labels = () => outline(editor.tree("rutter.sessions"));
  const status = () => editor.sessionStatus;
  const byTitle = (title: string) => (items: PickItem<unknown>[]) => items.find((item) => item.label.endsWith(title))?.value;

  before(async () => {
    home = tempDir("rutter-home-");
    root = path.join(tempDir("rutter-ws-"), "shop");
    writeTree(root, { "AGENTS.md": "root workflow\n", "main.go": "package main\n" });
    git("init", "-q", "-b", "main");
    git("add", ".");
    git("commit", "-q", "-m", "one");
    server = await RealServer.start({ folders: [root], home });
    const answer = await server.request<Snapshot>(Methods.effectiveInstructions, { textDocument: { uri: uriOf(path.join(root, "main.go")) } });
    assert.equal(answer.workspace_id, "shop");
    created = JSON.parse(cli("run", "create", "--workspace", "shop", "--goal", "fix the parser", "--json")) as Created;
    cli("session", "message", "add", created.thread_id, "--role", "user", "--text", "parse the input first");
    editor = new FakeEditor();
    rutter = startRutter({ editor, server });
    const file = path.join(root, "main.go");
    editor.setActiveFile({ uri: uriOf(file), path: file, folder: root });
    await waitFor("the session tree", () => labels().length > 0);
  });

  after(async () => {
    rutter.dispose();
    const code = await server.stop();
    assert.equal(code, 0, server.logs.join(""));
  });

  it("shows the current run's tree and checkpoints it from the palette", async () => {
    assert.deepEqual(labels().map((line) => line.split(" — ")[0]), ["run started"]);
    assert.equal(status(), undefined);
    editor.inputAnswers.push("before the refactor");
    const node = await rutter.sessions.checkpoint();
    assert.ok(node?.snapshot);
    checkpoint = node;
    assert.equal(checkpoint.snapshot?.messages.total, 1);
    assert.equal(checkpoint.title, "before the refactor");
    assert.deepEqual(labels().map((line) => line.split(" — ")[0]), ["run started", "  before the refactor"]);
    assert.equal(status()?.text, "$(bookmark) before the refactor");
  });

  it("lists checkpoints for the pickers with title, time, run and drift", async () => {
    const recent = await server.request<RecentNodes>(Methods.sessionRecent, { workspace_id: "shop" });
    const [newest] = recent.items;
    assert.ok(newest);
    const item = nodeItem(newest);
    assert.equal(item.label, "before the refactor");
    assert.match(item.description ?? "", new RegExp(`^checkpoint · \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC · run run_…${created.run_id.slice(-5)} \\(created\\)$`));
    assert.equal(item.detail, "no drift");
  });

  it("forks only once the person accepts the server's question; declining writes nothing", async () => {
    editor.pickAnswers.push(byTitle("before the refactor"));
    editor.inputAnswers.push("try the other parser");
    editor.modalAnswers.push("Fork");
    const result = await rutter.sessions.fork();
    assert.ok(result);
    forked = result;
    const question = server.messageRequests.at(-1);
    assert.equal(question?.type, 3); // Info
    assert.deepEqual(question?.actions?.map((action) => action.title), ["Fork", "Cancel"]);
    const modal = editor.modals.at(-1);
    assert.deepEqual(modal?.actions, ["Fork"]); // the modal has its own Cancel
    assert.match(modal?.message ?? "", /It takes: the workspace; the instructions it pins/);
    assert.match(modal?.message ?? "", /starts in ask mode with no profile/);
    assert.equal(forked.mode, "ask");
    assert.equal(forked.parent_node_id, checkpoint.node_id);

    const runs = () => (JSON.parse(cli("run", "list", "--workspace", "shop", "--json")) as { runs: unknown[] }).runs.length;
    const before = runs();
    editor.modalAnswers.push(undefined); // dismissed
    assert.equal(await rutter.sessions.resume(checkpoint.node_id), undefined);
    assert.equal(editor.messages.at(-1)?.text, "rutter: resume cancelled; nothing was created");
    assert.equal(runs(), before);
  });

  it("shows both branches, and drift markers once the repository moved on", async () => {
    assert.equal(rutter.sessions.current?.run_id, forked.run_id);
    await waitFor("both branches", () => labels().some((line) => line.startsWith("    fork → ")) && labels());
    fs.writeFileSync(path.join(root, "AGENTS.md"), "root workflow, changed\n");
    git("commit", "-q", "-am", "two");
    await server.changed([{ file: path.join(root, "AGENTS.md"), type: 2 }]);
    await rutter.sessions.refresh();
    const tree = rutter.sessions.current;
    assert.ok(tree);
    const node = tree.nodes.find((each) => each.node_id === checkpoint.node_id);
    assert.equal(node?.drift?.git?.head_changed, true);
    await waitFor("instruction drift", async () => {
      await rutter.sessions.refresh();
      return labels().find((line) => line.includes("before the refactor") && line.includes("instructions changed"));
    });
    const line = labels().find((each) => each.includes("before the refactor")) ?? "";
    assert.match(line, /drift: instructions changed; git HEAD moved/);
  });

  it("compares the checkpoint with the fork's marker in the diff editor", async () => {
    editor.pickAnswers.push((items) => items.find((item) => (item.value as { node_id: string }).node_id === forked.node_id)?.value);
    const comparison = await rutter.sessions.compare({ id: `node/${checkpoint.node_id}` });
    assert.ok(comparison);
    assert.equal(comparison.a.node_id, checkpoint.node_id);
    assert.equal(comparison.b.kind, "fork");
    const diff = editor.diffs.at(-1);
    assert.match(diff?.left.text ?? "", /^# before the refactor \(checkpoint\)/);
    assert.match(diff?.left.text ?? "", /parse the input first/);
    assert.match(diff?.right.text ?? "", /records no snapshot/);
    assert.equal(diff?.title, "before the refactor ↔ fork");
  });

  it("follows a checkpoint made with the CLI through rutter/sessionsChanged alone", async () => {
    const asked = server.messageRequests.length;
    cli("session", "checkpoint", forked.run_id, "--title", "made in the terminal", "--json");
    await waitFor("the CLI's checkpoint in the view", () => labels().find((line) => line.includes("made in the terminal")));
    assert.equal(status()?.text.endsWith("made in the terminal"), true);
    assert.equal(server.messageRequests.length, asked);
    await editor.run(SessionCommands.open, checkpoint.node_id);
    assert.match(editor.readOnly.at(-1)?.text ?? "", /## A fork or resume takes: workspace, pinned_instructions/);
  });
});
