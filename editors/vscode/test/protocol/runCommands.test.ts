/**
 * Runs from the editor against the real server: "Create Run…" creates the run the CLI then
 * shows, the Runs view lists it with no terminal involved, "Move Run Status…" moves it as
 * docs/reference/runs.md allows (a final status after the modal question, and the run leaves the view), and
 * "Show Pinned and Live Instructions" puts the pinned stack beside the one on disk once an
 * instruction file changed. The status bar reads "rutter: N" throughout.
 */

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";

import { type Rutter, startRutter } from "../../src/app";
import { RunCommands } from "../../src/runCommands";
import { FakeEditor, outline } from "../fakes";
import { RealServer, rutterCli, tempDir, uriOf, waitFor, writeTree } from "./harness";

describe("runs from the editor against the real server", () => {
  let home: string;
  let root: string;
  let server: RealServer;
  let editor: FakeEditor;
  let rutter: Rutter;
  let runId: string;
  const target = () => path.join(root, "services/api/input.go");

  function show(id: string): { status: string; profile: string | null; target_path: string; goal: string } {
    return JSON.parse(
      execFileSync(rutterCli(), ["run", "show", id, "--json"], {
        env: { ...process.env, RUTTER_HOME: home, RUTTER_DATABASE_URL: "" },
        encoding: "utf8",
      }),
    ) as { status: string; profile: string | null; target_path: string; goal: string };
  }

  before(async () => {
    home = tempDir("rutter-home-");
    root = path.join(tempDir("rutter-ws-"), "yard");
    writeTree(root, {
      "AGENTS.md": "root workflow\n",
      "services/api/AGENTS.md": "api rules\nrun the tests\n",
      "services/api/input.go": "package api\n",
    });
    server = await RealServer.start({ folders: [root], home });
    editor = new FakeEditor();
    rutter = startRutter({ editor, server });
    editor.setActiveFile({ uri: uriOf(target()), path: target(), folder: root });
    await waitFor("the stack", () => editor.status?.text === "rutter: 2");
  });

  after(async () => {
    rutter.dispose();
    const code = await server.stop();
    assert.equal(code, 0, server.logs.join(""));
  });

  it("creates a run for the shown file, which the CLI and the Runs view then show", async () => {
    editor.inputAnswers = ["tidy the input parser", "reviewer"];
    editor.pickAnswers = [(items) => items[0]?.value];
    const created = await editor.run(RunCommands.create);
    assert.ok(typeof created === "string" && created.startsWith("run_"), String(created));
    runId = created;
    const shown = show(runId);
    assert.equal(shown.goal, "tidy the input parser");
    assert.equal(shown.target_path, "services/api/input.go");
    assert.equal(shown.profile, "reviewer");
    assert.equal(shown.status, "created");
    assert.deepEqual(outline(editor.tree("rutter.runs")), [
      `tidy the input parser — created · instructions current · services/api/input.go · rev 1 · ${runId}`,
    ]);
    assert.match(editor.messages.at(-1)?.text ?? "", new RegExp(`^rutter: run ${runId} created in yard; it pins the instructions of services/api/input\\.go \\(revision 1\\)$`));
  });

  it("moves its status: running, then paused, as a run may move", async () => {
    const row = () => editor.tree("rutter.runs")[0];
    editor.pickAnswers = [(items) => items.find((item) => item.value === "running")?.value];
    assert.equal(await editor.run(RunCommands.setStatus, row()), "running");
    editor.pickAnswers = [
      (items) => {
        assert.deepEqual(items.map((item) => item.label), ["paused", "completed", "failed", "cancelled"]);
        return items.find((item) => item.value === "paused")?.value;
      },
    ];
    assert.equal(await editor.run(RunCommands.setStatus, row()), "paused");
    assert.equal(show(runId).status, "paused");
    await waitFor("the paused run in the view", () => row()?.description?.startsWith("paused · ") === true);
  });

  it("shows the pinned stack beside the one on disk once an instruction file changed", async () => {
    const rules = path.join(root, "services/api/AGENTS.md");
    fs.writeFileSync(rules, "api rules\nrun the tests twice\n");
    await server.changed([{ file: rules, type: 2 }]);
    await waitFor("the stale run", () => rutter.runs.current[0]?.stale === true);
    await waitFor("the status bar's stale marker", () => editor.status?.text === "rutter: 2, stale run");
    assert.equal(await editor.run(RunCommands.showStacks, editor.tree("rutter.runs")[0]), true);
    const [diff] = editor.diffs;
    assert.ok(diff);
    assert.equal(diff.title, `${runId}: pinned (revision 1) ↔ on disk now (stale)`);
    const section = "==== 2. services/api/AGENTS.md ====";
    assert.ok(diff.left.text.includes(`${section}\napi rules\nrun the tests\n`), diff.left.text);
    assert.ok(diff.right.text.includes(`${section}\napi rules\nrun the tests twice\n`), diff.right.text);
    for (const side of [diff.left.text, diff.right.text]) {
      assert.ok(side.includes("2 sources in delivery order; higher precedence wins where sources conflict\n\n1. AGENTS.md — agents · workspace root · precedence 0\n2. services/api/AGENTS.md — agents · services/api · precedence 200\n"), side);
    }
  });

  it("ends it as cancelled after the question, and it leaves the view", async () => {
    editor.pickAnswers = [(items) => items.find((item) => item.value === "cancelled")?.value];
    editor.modalAnswers = ["Mark cancelled"];
    assert.equal(await editor.run(RunCommands.setStatus, runId), "cancelled");
    assert.equal(show(runId).status, "cancelled");
    await waitFor("the empty Runs view", () => editor.tree("rutter.runs").length === 0);
    assert.equal(editor.status?.text, "rutter: 2");
  });
});
