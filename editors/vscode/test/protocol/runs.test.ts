/**
 * Runs against the real server: a run created with the CLI shows in the Runs view, turns
 * stale when an instruction file changes, and moves to the new instructions only through the
 * extension's review (bound to the fingerprints shown; refused when the disk changed again
 * after the review). The server's own drift diagnostic and code action flow, which VS Code
 * runs through the language client with no extension code, is driven too. The view follows
 * `rutter/runsChanged` alone: a run the CLI creates while the server runs, and its going
 * stale, reach the view and the status bar with no request of the test's own.
 */

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";

import { type Rutter, startRutter } from "../../src/app";
import type { RunsAnswer, RunsChanged, Snapshot } from "../../src/protocol";
import { Methods } from "../../src/protocol";
import { CONFIRM, REFRESH_RUNS_COMMAND, REVIEW_REFRESH_COMMAND } from "../../src/runs";
import { FakeEditor, outline } from "../fakes";
import { RealServer, rutterCli, tempDir, uriOf, waitFor, writeTree } from "./harness";

interface Created {
  run_id: string;
  revision: number;
  fingerprint: string;
}

describe("runs against the real server", () => {
  let home: string;
  let root: string;
  let server: RealServer;
  let editor: FakeEditor;
  let rutter: Rutter;
  let created: Created;
  const apiRules = () => path.join(root, "services/api/AGENTS.md");

  function cli(...args: string[]): string {
    return execFileSync(rutterCli(), args, { env: { ...process.env, RUTTER_HOME: home, RUTTER_DATABASE_URL: "" }, encoding: "utf8" });
  }

  async function edit(file: string, text: string): Promise<void> {
    fs.writeFileSync(file, text);
    await server.changed([{ file, type: 2 }]);
  }

  before(async () => {
    home = tempDir("rutter-home-");
    root = path.join(tempDir("rutter-ws-"), "shop");
    writeTree(root, {
      "AGENTS.md": "root workflow\n",
      "services/api/AGENTS.md": "api rules\nrun the tests\n",
      "services/api/input.go": "package api\n",
    });
    server = await RealServer.start({ folders: [root], home, answerMessage: () => "Confirm refresh" });
    // The folder is registered as workspace "shop" once the server is ready.
    const answer = await server.request<Snapshot>(Methods.effectiveInstructions, {
      textDocument: { uri: uriOf(path.join(root, "services/api/input.go")) },
    });
    assert.equal(answer.workspace_id, "shop");
    created = JSON.parse(
      cli("run", "create", "--workspace", "shop", "--goal", "fix the parser", "--target", "services/api/input.go", "--json"),
    ) as Created;
    assert.equal(created.revision, 1);
    editor = new FakeEditor();
    rutter = startRutter({ editor, server });
    const file = path.join(root, "services/api/input.go");
    editor.setActiveFile({ uri: uriOf(file), path: file, folder: root });
  });

  after(async () => {
    rutter.dispose();
    const code = await server.stop();
    assert.equal(code, 0, server.logs.join(""));
  });

  it("lists a run created with the CLI, with what the view reads", async () => {
    const answer = await server.request<RunsAnswer>(Methods.runs, {});
    assert.equal(answer.runs.length, 1);
    const [entry] = answer.runs;
    assert.equal(entry?.run_id, created.run_id);
    assert.equal(entry?.workspace_id, "shop");
    assert.equal(entry?.goal, "fix the parser");
    assert.equal(entry?.target_path, "services/api/input.go");
    assert.equal(entry?.revision, 1);
    assert.equal(entry?.fingerprint, created.fingerprint);
    assert.equal(entry?.stale, false);
    assert.equal(entry?.live_fingerprint, created.fingerprint);

    await editor.run(REFRESH_RUNS_COMMAND);
    assert.deepEqual(outline(editor.tree("rutter.runs")), [`fix the parser — created · instructions current · services/api/input.go · rev 1 · ${created.run_id}`]);
    assert.equal(editor.tree("rutter.runs")[0]?.contextValue, "run.current");
  });

  it("turns stale when an instruction file changes, with the status bar's warning", async () => {
    await edit(apiRules(), "api rules\nrun the tests twice\n");
    await waitFor("the stale run", () => editor.tree("rutter.runs")[0]?.contextValue === "run.stale");
    assert.deepEqual(outline(editor.tree("rutter.runs")), [`fix the parser — created · instructions stale · services/api/input.go · rev 1 · ${created.run_id}`]);
    await waitFor("the status bar's warning", () => editor.status?.warning === true);
    assert.match(editor.status?.tooltip ?? "", new RegExp(`Run ${created.run_id}: its pinned snapshot \\(revision 1\\) is stale`));
  });

  it("refuses a confirmation when the disk changed again after the review was shown", async () => {
    editor.askModal = async (message, detail, actions) => {
      editor.modals.push({ message, detail, actions });
      await edit(apiRules(), "api rules\nrun the tests three times, then lint\n");
      return CONFIRM;
    };
    const outcome = await editor.run(REVIEW_REFRESH_COMMAND, editor.tree("rutter.runs")[0]);
    assert.equal(outcome, "refused");
    const review = editor.readOnly.at(-1);
    assert.equal(review?.name, `review-${created.run_id}.md`);
    assert.match(review?.text ?? "", /## Changed\n\n- `services\/api\/AGENTS.md`/);
    assert.match(review?.text ?? "", /- run the tests\n\+ run the tests twice/);
    assert.equal(editor.messages.at(-1)?.kind, "error");
    assert.match(editor.messages.at(-1)?.text ?? "", /changed again after the review was shown/);
    const runs = await server.request<RunsAnswer>(Methods.runs, {});
    assert.equal(runs.runs[0]?.revision, 1);
  });

  it("refreshes the run to exactly what was reviewed on Confirm", async () => {
    editor.askModal = (message, detail, actions) => {
      editor.modals.push({ message, detail, actions });
      return Promise.resolve(CONFIRM);
    };
    const outcome = await editor.run(REVIEW_REFRESH_COMMAND, created.run_id);
    assert.equal(outcome, "refreshed");
    assert.equal(editor.modals.at(-1)?.message, `Refresh run ${created.run_id} to the instructions on disk (revision 2)?`);
    assert.match(editor.readOnly.at(-1)?.text ?? "", /\+ run the tests three times, then lint/);
    assert.deepEqual(editor.messages.at(-1), {
      kind: "info",
      text: `rutter: run ${created.run_id} now uses revision 2 of its instructions`,
    });
    assert.deepEqual(outline(editor.tree("rutter.runs")), [`fix the parser — created · instructions current · services/api/input.go · rev 2 · ${created.run_id}`]);
    const shown = JSON.parse(cli("run", "show", created.run_id, "--json")) as { revision: number };
    assert.equal(shown.revision, 2);
  });

  it("passes the server's drift diagnostic and code action through (review, then Confirm)", async () => {
    await edit(apiRules(), "api rules\nnew rule\n");
    const uri = await server.open(apiRules());
    type Diagnostic = { code?: string; message: string; data?: unknown; range: unknown };
    const found = await waitFor("the drift diagnostic", async () => {
      const report = await server.connection.sendRequest<{ items: Diagnostic[] }>("textDocument/diagnostic", {
        textDocument: { uri },
      });
      return report.items.find((item) => item.message.includes(`run ${created.run_id}`));
    });
    assert.match(found.message, new RegExp(`changed since run ${created.run_id} pinned it \\(revision 2\\)`));
    const actions = await server.connection.sendRequest<{ title: string; command: { command: string; arguments: unknown[] } }[]>(
      "textDocument/codeAction",
      { textDocument: { uri }, range: found.range, context: { diagnostics: [found], triggerKind: 1 } },
    );
    const action = actions.find((each) => each.title === `Review and confirm refresh for run ${created.run_id}`);
    assert.ok(action, JSON.stringify(actions));
    const result = await server.executeCommand<{ refreshed: boolean; confirmed: boolean; revision: number }>(
      action.command.command,
      action.command.arguments,
    );
    assert.equal(result.confirmed, true);
    assert.equal(result.revision, 3);
    assert.equal(server.shownDocuments.length, 1);
    assert.match(server.messageRequests.at(-1)?.message ?? "", new RegExp(`refresh run ${created.run_id}`));
    await editor.run(REFRESH_RUNS_COMMAND);
    assert.deepEqual(outline(editor.tree("rutter.runs")), [`fix the parser — created · instructions current · services/api/input.go · rev 3 · ${created.run_id}`]);
  });
});

describe("rutter/runsChanged from the real server drives the runs view", () => {
  let home: string;
  let root: string;
  let server: RealServer;
  let editor: FakeEditor;
  let rutter: Rutter;
  const received: RunsChanged[] = [];
  const target = () => path.join(root, "services/api/input.go");

  function cli(...args: string[]): string {
    return execFileSync(rutterCli(), args, { env: { ...process.env, RUTTER_HOME: home, RUTTER_DATABASE_URL: "" }, encoding: "utf8" });
  }

  before(async () => {
    home = tempDir("rutter-home-");
    root = path.join(tempDir("rutter-ws-"), "depot");
    writeTree(root, {
      "AGENTS.md": "root workflow\n",
      "services/api/AGENTS.md": "api rules\n",
      "services/api/input.go": "package api\n",
    });
    server = await RealServer.start({ folders: [root], home });
    server.onNotification(Methods.runsChanged, (params) => received.push(params as RunsChanged));
    // The extension starts after the server here, so no start event asks `rutter/runs`: only
    // the notification (or a command, which this test never runs) can fill the view.
    editor = new FakeEditor();
    rutter = startRutter({ editor, server });
    editor.setActiveFile({ uri: uriOf(target()), path: target(), folder: root });
    // The folder is registered as workspace "depot" once the server has answered for it.
    await waitFor("the stack", () => editor.status?.text === "rutter: 2");
  });

  after(async () => {
    rutter.dispose();
    const code = await server.stop();
    assert.equal(code, 0, server.logs.join(""));
  });

  it("names the workspace when the CLI creates a run while the server runs; the view shows it", async () => {
    assert.deepEqual(received, []);
    assert.deepEqual(editor.tree("rutter.runs"), []);
    const created = JSON.parse(
      cli("run", "create", "--workspace", "depot", "--goal", "add retries", "--target", "services/api/input.go", "--json"),
    ) as Created;
    const notice = await waitFor("rutter/runsChanged for the new run", () => received.at(0));
    assert.deepEqual(notice, { workspace_ids: ["depot"] });
    await waitFor("the run in the view", () => editor.tree("rutter.runs").length > 0);
    assert.deepEqual(outline(editor.tree("rutter.runs")), [`add retries — created · instructions current · services/api/input.go · rev 1 · ${created.run_id}`]);
    assert.equal(editor.status?.warning, false);
  });

  it("names the workspace again when an instruction file changes under the run; the view and status bar show it stale", async () => {
    const [entry] = rutter.runs.current;
    assert.ok(entry);
    const seen = received.length;
    const rules = path.join(root, "services/api/AGENTS.md");
    fs.writeFileSync(rules, "api rules\nretry twice\n");
    await server.changed([{ file: rules, type: 2 }]);
    const notice = await waitFor("rutter/runsChanged for the stale run", () => received.at(seen));
    assert.deepEqual(notice, { workspace_ids: ["depot"] });
    await waitFor("the stale run", () => rutter.runs.current[0]?.stale === true);
    assert.deepEqual(outline(editor.tree("rutter.runs")), [`add retries — created · instructions stale · services/api/input.go · rev 1 · ${entry.run_id}`]);
    assert.equal(editor.tree("rutter.runs")[0]?.contextValue, "run.stale");
    await waitFor("the status bar's warning", () => editor.status?.warning === true);
    assert.match(editor.status?.tooltip ?? "", new RegExp(`Run ${entry.run_id}: its pinned snapshot \\(revision 1\\) is stale`));
  });
});
