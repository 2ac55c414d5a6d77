import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { startRutter } from "../../src/app";
import type { RunEntry } from "../../src/protocol";
import { Methods } from "../../src/protocol";
import { RUN_STATUSES, RunCommands, TRANSITIONS, statusItems } from "../../src/runCommands";
import { liveText, pinnedText, runStacks } from "../../src/runStacks";
import { FakeEditor, FakeServer, settle } from "../fakes";
import { inspection, run } from "../fixtures";

const FILE = { uri: "file:///w/services/api/input.go", path: "/w/services/api/input.go", folder: "/w" };

interface Script {
  runs: RunEntry[];
  refuse?: { code: string; message: string };
}

function setup(script: Script, target = "services/api/input.go") {
  const editor = new FakeEditor();
  const server = new FakeServer((method, params) => {
    const p = params as Record<string, string>;
    switch (method) {
      case Methods.effectiveInstructions:
        return {
          protocol_version: "project_instruction_snapshot.v1", workspace_id: "shop", target_path: target,
          fingerprint: "f".repeat(64), loaded_at: "", sources: [], ignored: [], conflicts: [],
        };
      case Methods.runs:
        return { runs: script.runs };
      case Methods.createRun:
        if (script.refuse !== undefined) {
          throw Object.assign(new Error("refused"), { data: script.refuse });
        }
        script.runs = [...script.runs, run({ run_id: "run_new", goal: p.goal ?? "", target_path: p.target ?? ".", status: "created" })];
        return { run_id: "run_new", mission_id: "mis", session_id: "ses", thread_id: "thr", root_node_id: "nod", revision: 1, fingerprint: "a".repeat(64) };
      case Methods.setRunStatus: {
        if (script.refuse !== undefined) {
          throw Object.assign(new Error("refused"), { data: script.refuse });
        }
        const moved = script.runs.find((each) => each.run_id === p.run_id);
        assert.ok(moved);
        script.runs = ["completed", "failed", "cancelled"].includes(p.status ?? "")
          ? script.runs.filter((each) => each !== moved)
          : script.runs.map((each) => (each === moved ? { ...each, status: p.status ?? "" } : each));
        return { ...moved, status: p.status };
      }
      case Methods.runInstructions:
        return inspection();
      default:
        throw new Error(`unexpected ${method}`);
    }
  });
  const rutter = startRutter({ editor, server });
  editor.setActiveFile(FILE);
  return { editor, server, rutter };
}

function sent(server: FakeServer, method: string): unknown[] {
  return server.sent.filter((each) => each.method === method).map((each) => each.params);
}

describe("Create Run…", () => {
  it("asks the goal, what to pin and the agent profile, then creates the run in the shown file's workspace", async () => {
    const script: Script = { runs: [] };
    const { editor, server } = setup(script);
    await settle();
    editor.inputAnswers = ["  tidy the parser  ", "reviewer"];
    editor.pickAnswers = [(items) => items[0]?.value];
    assert.equal(await editor.run(RunCommands.create), "run_new");
    assert.equal(editor.inputs[0]?.title, "Create a run in workspace shop");
    assert.equal(editor.inputs[0]?.validate?.("   "), "A run needs a goal.");
    assert.equal(editor.inputs[0]?.validate?.("x"), undefined);
    assert.deepEqual(editor.picks[0]?.items.map((item) => item.label), ["This file: services/api/input.go", "Workspace root"]);
    assert.deepEqual(sent(server, Methods.createRun), [
      { workspace_id: "shop", goal: "tidy the parser", target: "services/api/input.go", profile: "reviewer" },
    ]);
    assert.match(editor.messages.at(-1)?.text ?? "", /^rutter: run run_new created in shop; it pins the instructions of services\/api\/input\.go \(revision 1\)$/);
    assert.deepEqual(editor.revealed, ["rutter.runs"]);
    assert.equal(editor.tree("rutter.runs")[0]?.label, "tidy the parser");
  });

  it("pins the workspace root without a profile, and asks no target for the root itself", async () => {
    const { editor, server } = setup({ runs: [] }, ".");
    await settle();
    editor.inputAnswers = ["ship it", ""];
    await editor.run(RunCommands.create);
    assert.equal(editor.picks.length, 0);
    assert.deepEqual(sent(server, Methods.createRun), [{ workspace_id: "shop", goal: "ship it", target: "." }]);
    assert.match(editor.messages.at(-1)?.text ?? "", /pins the instructions of the workspace root/);
  });

  it("creates nothing when the person stops at any question", async () => {
    const { editor, server } = setup({ runs: [] });
    await settle();
    editor.inputAnswers = [undefined];
    await editor.run(RunCommands.create);
    editor.inputAnswers = ["goal"];
    editor.pickAnswers = [() => undefined];
    await editor.run(RunCommands.create);
    editor.inputAnswers = ["goal", undefined];
    editor.pickAnswers = [(items) => items[1]?.value];
    await editor.run(RunCommands.create);
    assert.deepEqual(sent(server, Methods.createRun), []);
  });

  it("shows the server's typed refusal, and asks for a served file first", async () => {
    const script: Script = { runs: [], refuse: { code: "invalid_mode", message: "unknown approval mode" } };
    const { editor } = setup(script);
    await settle();
    editor.inputAnswers = ["goal", ""];
    editor.pickAnswers = [(items) => items[0]?.value];
    assert.equal(await editor.run(RunCommands.create), undefined);
    assert.equal(editor.messages.at(-1)?.kind, "error");
    assert.equal(editor.messages.at(-1)?.text, "rutter: the run was not created: unknown approval mode");

    editor.setActiveFile(undefined);
    await settle();
    await editor.run(RunCommands.create);
    assert.match(editor.messages.at(-1)?.text ?? "", /open a file of a workspace rutter serves first/);
  });
});

describe("Move Run Status…", () => {
  it("offers only the moves a run may make from each status", () => {
    assert.deepEqual(statusItems("created").map((item) => item.label), ["running", "failed", "cancelled"]);
    assert.deepEqual(statusItems("running").map((item) => item.label), ["paused", "completed", "failed", "cancelled"]);
    assert.deepEqual(statusItems("paused").map((item) => item.label), ["running", "failed", "cancelled"]);
    assert.deepEqual(statusItems("completed"), []);
    for (const targets of Object.values(TRANSITIONS)) {
      for (const status of targets) {
        assert.ok(RUN_STATUSES.includes(status));
      }
    }
  });

  it("moves a run of the view without asking, and asks before a final status", async () => {
    const script: Script = { runs: [run({ status: "created" })] };
    const { editor, server } = setup(script);
    await editor.run("rutter.refreshRuns");
    const row = editor.tree("rutter.runs")[0];
    editor.pickAnswers = [(items) => items[0]?.value];
    assert.equal(await editor.run(RunCommands.setStatus, row), "running");
    assert.equal(editor.picks[0]?.placeholder, "Run run_01 is created: move it to");
    assert.equal(editor.modals.length, 0);
    assert.equal(editor.messages.at(-1)?.text, "rutter: run run_01: created → running");
    assert.match(editor.tree("rutter.runs")[0]?.description ?? "", /^running · /);

    // Final: asked in a modal dialog; dismissed, nothing is sent.
    editor.pickAnswers = [(items) => items.find((item) => item.value === "completed")?.value];
    editor.modalAnswers = [undefined];
    assert.equal(await editor.run(RunCommands.setStatus, "run_01"), undefined);
    assert.equal(editor.modals[0]?.message, "Mark run run_01 as completed?");
    assert.match(editor.modals[0]?.detail ?? "", /"fix the parser" becomes completed, which is final/);
    assert.deepEqual(editor.modals[0]?.actions, ["Mark completed"]);
    assert.equal(sent(server, Methods.setRunStatus).length, 1);

    editor.pickAnswers = [(items) => items.find((item) => item.value === "completed")?.value];
    editor.modalAnswers = ["Mark completed"];
    assert.equal(await editor.run(RunCommands.setStatus, { run_id: "run_01" }), "completed");
    assert.deepEqual(sent(server, Methods.setRunStatus).at(-1), { run_id: "run_01", status: "completed" });
    assert.deepEqual(editor.tree("rutter.runs"), []);
  });

  it("picks the run when none is given, and shows a refusal with the status it keeps", async () => {
    const script: Script = { runs: [run({ status: "paused" }), run({ run_id: "run_02", goal: "second\nline" })] };
    const { editor } = setup(script);
    await settle();
    script.refuse = { code: "invalid_transition", message: "run run_02 is running and cannot become paused" };
    editor.pickAnswers = [(items) => items[1]?.value, (items) => items[0]?.value];
    assert.equal(await editor.run(RunCommands.setStatus), undefined);
    assert.deepEqual(editor.picks[0]?.items.map((item) => item.label), ["fix the parser", "second"]);
    assert.equal(editor.picks[0]?.items[1]?.description, "running · services/api · run_02");
    assert.equal(editor.messages.at(-1)?.text, "rutter: run run_02 stays running: run run_02 is running and cannot become paused");
  });

  it("says so when there is no active run, or the given one is not active", async () => {
    const { editor } = setup({ runs: [] });
    await editor.run(RunCommands.setStatus);
    assert.match(editor.messages.at(-1)?.text ?? "", /no active run in the served workspaces; create one with "Rutter: Create Run…"/);
    await editor.run(RunCommands.setStatus, "run_gone");
    assert.equal(editor.messages.at(-1)?.text, "rutter: run run_gone is not an active run of the served workspaces");
  });
});

describe("Show Pinned and Live Instructions", () => {
  it("opens the pinned stack beside the one on disk in the diff editor", async () => {
    const { editor, server } = setup({ runs: [run()] });
    await editor.run("rutter.refreshRuns");
    assert.equal(await editor.run(RunCommands.showStacks, editor.tree("rutter.runs")[0]), true);
    assert.deepEqual(sent(server, Methods.runInstructions), [{ run_id: "run_01" }]);
    const [diff] = editor.diffs;
    assert.equal(diff?.title, "run_01: pinned (revision 2) ↔ on disk now (stale)");
    assert.equal(diff?.left.name, "run_01-pinned.md");
    assert.equal(diff?.right.name, "run_01-live.md");
    assert.equal(diff?.left.text, pinnedText(inspection()));
    assert.equal(diff?.right.text, liveText(inspection()));
  });

  it("writes each side as the view lists it, then every source's text", () => {
    const { left, right } = runStacks(inspection());
    assert.equal(
      left.text,
      [
        "# Run run_01: pinned instructions (revision 2)",
        "",
        "target: . (workspace shop)",
        `fingerprint: ${"a".repeat(64)}`,
        "",
        "2 sources in delivery order; higher precedence wins where sources conflict",
        "",
        "1. AGENTS.md — agents · workspace root · precedence 0",
        "2. old/AGENTS.md — agents · workspace root · precedence 100",
        "",
        "==== 1. AGENTS.md ====",
        "one",
        "two",
        "three",
        "",
        "==== 2. old/AGENTS.md ====",
        "gone",
        "",
      ].join("\n"),
    );
    assert.match(right.text, /^# Run run_01: the instructions on disk now \(stale: they differ from the pinned ones\)\n/);
    assert.match(right.text, /\n2\. new\/AGENTS\.md — agents · workspace root · precedence 100\n/);
  });

  it("says when the run has no revision, and when discovery fails closed now", () => {
    const failing = { ...inspection(), revision: null, pinned: null, live: { error: { code: "symlink", message: "AGENTS.md is a symbolic link" } } };
    assert.match(pinnedText(failing), /The run has no pinned revision yet: nothing was pinned\./);
    assert.match(liveText(failing), /Discovery fails closed now \(symlink\): AGENTS\.md is a symbolic link\nThe run keeps its pinned instructions/);
    assert.equal(runStacks(failing).title, "run_01: pinned (no revision) ↔ on disk now (stale)");
  });

  it("shows the server's refusal", async () => {
    const { editor, server } = setup({ runs: [run()] });
    server.answer = (method) => {
      if (method === Methods.runInstructions) {
        throw Object.assign(new Error("x"), { data: { code: "snapshot_tampered", message: "revision 1 was altered" } });
      }
      return method === Methods.runs ? { runs: [run()] } : { items: [], has_more: false };
    };
    assert.equal(await editor.run(RunCommands.showStacks, "run_01"), false);
    assert.equal(editor.messages.at(-1)?.text, "rutter: cannot read run run_01: revision 1 was altered");
    assert.equal(editor.diffs.length, 0);
  });
});
