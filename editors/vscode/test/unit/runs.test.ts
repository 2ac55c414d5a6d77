import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { type Rutter, startRutter } from "../../src/app";
import type { RunEntry, RunInspection } from "../../src/protocol";
import { Methods } from "../../src/protocol";
import { CONFIRM, REFRESH_RUNS_COMMAND, REVIEW_REFRESH_COMMAND } from "../../src/runs";
import { runNodes } from "../../src/runsView";
import { FakeEditor, FakeServer, outline, settle } from "../fakes";
import { inspection, run } from "../fixtures";

interface Script {
  runs?: RunEntry[];
  inspection?: RunInspection;
  confirm?: (params: unknown) => unknown;
}

function setup(script: Script) {
  const editor = new FakeEditor();
  const server = new FakeServer((method, params) => {
    switch (method) {
      case Methods.runs:
        return { runs: script.runs ?? [] };
      case Methods.runInstructions:
        return script.inspection ?? inspection();
      case Methods.confirmRefresh:
        return script.confirm?.(params) ?? { ...inspection(), revision: 3, stale: false, refreshed: true };
      case Methods.effectiveInstructions:
        return {
          protocol_version: "project_instruction_snapshot.v1", workspace_id: "shop", target_path: "a.go",
          fingerprint: "f".repeat(64), loaded_at: "", sources: [], ignored: [], conflicts: [],
        };
      default:
        throw new Error(`unexpected ${method}`);
    }
  });
  const rutter = startRutter({ editor, server });
  return { editor, server, rutter };
}

function sent(server: FakeServer, method: string): unknown[] {
  return server.sent.filter((each) => each.method === method).map((each) => each.params);
}

describe("the runs view", () => {
  it("lists the active runs on start and on refresh, and marks the status bar for a stale run", async () => {
    const script: Script = { runs: [run()] };
    const { editor, server } = setup(script);
    editor.setActiveFile({ uri: "file:///w/a.go", path: "/w/a.go", folder: "/w" });
    server.fireStarted();
    await settle();
    assert.deepEqual(outline(editor.tree("rutter.runs")), ["fix the parser — running · instructions current · services/api · rev 1 · run_01"]);
    assert.equal(editor.status?.text, "rutter: 0");

    script.runs = [run({ stale: true })];
    await editor.run(REFRESH_RUNS_COMMAND);
    assert.deepEqual(outline(editor.tree("rutter.runs")), ["fix the parser — running · instructions stale · services/api · rev 1 · run_01"]);
    assert.equal(editor.status?.text, "rutter: 0, stale run");
    assert.equal(editor.status?.warning, true);
    assert.deepEqual(sent(server, Methods.runs), [{}, {}]);
  });

  it("asks again on runsChanged, and the status bar's stale marker follows", async () => {
    const script: Script = { runs: [] };
    const { editor, server } = setup(script);
    editor.setActiveFile({ uri: "file:///w/a.go", path: "/w/a.go", folder: "/w" });
    server.fireStarted();
    await settle();
    assert.deepEqual(outline(editor.tree("rutter.runs")), []);
    assert.equal(editor.status?.warning, false);

    // The CLI created a run, then an instruction file changed under it.
    script.runs = [run()];
    server.notify(Methods.runsChanged, { workspace_ids: ["shop"] });
    await settle();
    assert.deepEqual(outline(editor.tree("rutter.runs")), ["fix the parser — running · instructions current · services/api · rev 1 · run_01"]);
    assert.equal(editor.status?.text, "rutter: 0");

    script.runs = [run({ stale: true })];
    server.notify(Methods.runsChanged, { workspace_ids: ["shop"] });
    await settle();
    assert.deepEqual(outline(editor.tree("rutter.runs")), ["fix the parser — running · instructions stale · services/api · rev 1 · run_01"]);
    assert.equal(editor.status?.text, "rutter: 0, stale run");
    assert.equal(editor.status?.warning, true);
    assert.match(editor.status?.tooltip ?? "", /Run run_01: its pinned snapshot \(revision 1\) is stale/);

    // The run ended: the marker goes with it.
    script.runs = [];
    server.notify(Methods.runsChanged, { workspace_ids: ["shop"] });
    await settle();
    assert.deepEqual(outline(editor.tree("rutter.runs")), []);
    assert.equal(editor.status?.text, "rutter: 0");
    assert.equal(editor.status?.warning, false);
    assert.equal(sent(server, Methods.runs).length, 4);
  });

  it("does not ask on instructionsChanged (the server says runsChanged when a run's drift changes)", async () => {
    const { server } = setup({ runs: [run()] });
    server.fireStarted();
    await settle();
    assert.equal(sent(server, Methods.runs).length, 1);
    server.notify(Methods.instructionsChanged, { workspace_id: "shop", paths: ["AGENTS.md"] });
    await settle();
    assert.equal(sent(server, Methods.runs).length, 1);
  });

  it("starts no timer: the runs are asked only on events", async () => {
    const started: string[] = [];
    const realInterval = globalThis.setInterval;
    const realTimeout = globalThis.setTimeout;
    // Record any timer the extension would start (none of its code may poll).
    globalThis.setInterval = (...args: Parameters<typeof setInterval>) => {
      started.push("setInterval");
      return realInterval(...args);
    };
    globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => {
      started.push("setTimeout");
      return realTimeout(...args);
    }) as typeof setTimeout;
    let rutter: Rutter;
    let server: FakeServer;
    try {
      ({ rutter, server } = setup({ runs: [run()] }));
      server.fireStarted();
      server.notify(Methods.runsChanged, { workspace_ids: ["shop"] });
      await settle();
      await rutter.runs.refresh();
    } finally {
      globalThis.setInterval = realInterval;
      globalThis.setTimeout = realTimeout;
    }
    assert.deepEqual(started, []);
    assert.equal(rutter.runs.current.length, 1);
    assert.equal(sent(server, Methods.runs).length, 3);
    rutter.dispose();
  });

  it("asks a refresh requested during a question once that one is answered", async () => {
    let calls = 0;
    const editor = new FakeEditor();
    const server = new FakeServer(async () => {
      calls += 1;
      await settle();
      return { runs: calls === 1 ? [] : [run()] };
    });
    const rutter = startRutter({ editor, server });
    const first = rutter.runs.refresh();
    const second = rutter.runs.refresh();
    await Promise.all([first, second]);
    assert.equal(calls, 2);
    assert.equal(rutter.runs.current.length, 1);
  });
});

describe("review and confirm refresh", () => {
  it("shows the diff, asks, and confirms with the fingerprints captured when shown", async () => {
    const { editor, server } = setup({ runs: [run({ stale: true })] });
    editor.modalAnswers = [CONFIRM];
    const node = runNodes([run({ stale: true })])[0];
    const outcome = await editor.run(REVIEW_REFRESH_COMMAND, node);
    assert.equal(outcome, "refreshed");
    assert.deepEqual(sent(server, Methods.runInstructions), [{ run_id: "run_01" }]);
    assert.equal(editor.readOnly.length, 1);
    assert.equal(editor.readOnly[0]?.name, "review-run_01.md");
    assert.equal(editor.readOnly[0]?.language, "markdown");
    assert.match(editor.readOnly[0]?.text ?? "", /^# Review: refresh run run_01 to revision 3/);
    assert.equal(editor.modals[0]?.message, "Refresh run run_01 to the instructions on disk (revision 3)?");
    assert.deepEqual(editor.modals[0]?.actions, [CONFIRM]);
    assert.deepEqual(sent(server, Methods.confirmRefresh), [
      { run_id: "run_01", expected_fingerprint: "a".repeat(64), expected_live_fingerprint: "b".repeat(64) },
    ]);
    assert.deepEqual(editor.messages.at(-1), { kind: "info", text: "rutter: run run_01 now uses revision 3 of its instructions" });
  });

  it("reviews and refreshes against the registration whose files the view's drift came from", async () => {
    const listed = run({ stale: true, workspace_id: "shop-ana", drift_workspace_id: "shop-bo", machine: "other_machine" });
    const { editor, server } = setup({ runs: [listed] });
    editor.setActiveFile({ uri: "file:///w/a.go", path: "/w/a.go", folder: "/w" });
    server.fireStarted();
    await settle();
    editor.modalAnswers = [CONFIRM];
    assert.equal(await editor.run(REVIEW_REFRESH_COMMAND, runNodes([listed])[0]), "refreshed");
    assert.deepEqual(sent(server, Methods.runInstructions), [{ run_id: "run_01", workspace_id: "shop-bo" }]);
    assert.deepEqual(sent(server, Methods.confirmRefresh), [
      {
        run_id: "run_01",
        expected_fingerprint: "a".repeat(64),
        expected_live_fingerprint: "b".repeat(64),
        workspace_id: "shop-bo",
      },
    ]);
  });

  it("sends nothing when the person cancels", async () => {
    const { editor, server } = setup({});
    editor.modalAnswers = [undefined];
    assert.equal(await editor.run(REVIEW_REFRESH_COMMAND, "run_01"), "cancelled");
    assert.deepEqual(sent(server, Methods.confirmRefresh), []);
  });

  it("tells the person to review again when the server refuses (the disk changed after the review)", async () => {
    const { editor } = setup({
      confirm: () => {
        throw Object.assign(new Error("conflict: the live instructions changed"), {
          code: -32801,
          data: { code: "conflict", message: "the instructions on disk are now 1234abcd, not the bbbbbbbb you reviewed" },
        });
      },
    });
    editor.modalAnswers = [CONFIRM];
    assert.equal(await editor.run(REVIEW_REFRESH_COMMAND, "run_01"), "refused");
    const last = editor.messages.at(-1);
    assert.equal(last?.kind, "error");
    assert.match(last?.text ?? "", /was not refreshed: the instructions changed again after the review was shown .*review them again/);
  });

  it("does not ask when the run is current or its live discovery fails closed", async () => {
    const current = setup({ inspection: { ...inspection(), stale: false } });
    assert.equal(await current.editor.run(REVIEW_REFRESH_COMMAND, "run_01"), "not_stale");
    assert.equal(current.editor.modals.length, 0);

    const failing = setup({
      inspection: { ...inspection(), stale: false, live: { error: { code: "symlink", message: "AGENTS.md is a symbolic link" } } },
    });
    assert.equal(await failing.editor.run(REVIEW_REFRESH_COMMAND, "run_01"), "live_error");
    assert.match(failing.editor.messages.at(-1)?.text ?? "", /discovery fails closed now \(symlink: AGENTS.md is a symbolic link\)/);
    assert.equal(failing.editor.modals.length, 0);
  });

  it("lets the person pick the run from the palette, stale runs first", async () => {
    const { editor } = setup({ runs: [run(), run({ run_id: "run_02", stale: true })] });
    editor.pickAnswers = [(items) => items[0]?.value];
    editor.modalAnswers = [undefined];
    await editor.run(REVIEW_REFRESH_COMMAND);
    assert.deepEqual(
      editor.picks[0]?.items.map((item) => item.label),
      ["run_02", "run_01"],
    );
    assert.match(editor.modals[0]?.message ?? "", /run_02/);
  });
});
