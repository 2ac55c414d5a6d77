import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { startRutter } from "../../src/app";
import { ABANDON, COMPACTION_HINTS, CompactionCommands, RETRY, compactionErrorText, compactionText } from "../../src/compaction";
import type { Compaction, RunEntry } from "../../src/protocol";
import { Methods } from "../../src/protocol";
import { FakeEditor, FakeServer, settle } from "../fakes";
import { run } from "../fixtures";
import { RUN_A, RUN_B, compactionNode, recent, sessionTree } from "../sessionFixtures";

function compaction(overrides: Partial<Compaction> = {}): Compaction {
  return {
    compaction_id: "cmp_01NEW",
    operation_key: "cmp_01NEW",
    thread_id: "thr_01",
    status: "completed",
    summary: { text: "Summary of 10 earlier messages of thread thr_01.\n\n## Decisions\n- tabs, not spaces\n", tokens: 42 },
    kept_message_ids: ["msg_11", "msg_12", "msg_13", "msg_14"],
    compacted_message_count: 10,
    unread_message_count: 0,
    summarizer: "extractive",
    created_by_person: "alice",
    ...overrides,
  };
}

interface Script {
  runs?: RunEntry[];
  /** The answers of `rutter/session/compact`, in order: a document, or an error to throw. */
  compact?: (Compaction | { code: string; message: string; details?: Record<string, unknown> })[];
  resolve?: (params: { operation_key: string; action: string }) => Compaction;
}

function setup(script: Script = {}) {
  const editor = new FakeEditor();
  const busyWhenSent: boolean[] = [];
  const compacts = [...(script.compact ?? [compaction()])];
  const server = new FakeServer((method, params) => {
    switch (method) {
      case Methods.effectiveInstructions:
        return {
          protocol_version: "project_instruction_snapshot.v1", workspace_id: "shop", target_path: "a.go",
          fingerprint: "f".repeat(64), loaded_at: "", sources: [], ignored: [], conflicts: [],
        };
      case Methods.runs:
        return { runs: script.runs ?? [run({ run_id: RUN_A, thread_id: "thr_01", goal: "fix the parser" })] };
      case Methods.sessionRecent:
        return recent();
      case Methods.sessionTree: {
        const tree = sessionTree();
        return { ...tree, run_id: (params as { run_id: string }).run_id, nodes: [...tree.nodes, compactionNode("node_one")] };
      }
      case Methods.sessionCompact: {
        busyWhenSent.push(editor.busy);
        const next = compacts.shift() ?? compaction();
        if ("compaction_id" in next) {
          return next;
        }
        throw Object.assign(new Error(next.message), { data: next });
      }
      case Methods.sessionCompactionResolve:
        busyWhenSent.push(editor.busy);
        return script.resolve?.(params as { operation_key: string; action: string }) ?? compaction();
      default:
        return { items: [], has_more: false, proposals: [], pins: [], runs: [] };
    }
  });
  const rutter = startRutter({ editor, server });
  return { editor, server, rutter, busyWhenSent };
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

describe("compaction documents and messages", () => {
  it("says what the compaction covers, then the summary as stored", () => {
    const text = compactionText(compaction({ unread_message_count: 3 }));
    const lines = text.split("\n");
    assert.equal(lines[0], "# Compaction cmp_01NEW");
    assert.ok(lines.includes("- Status: completed · summarizer: extractive"));
    assert.ok(lines.includes("- Summarized: 10 older messages (3 not read: the summarizer's input window was full)"));
    assert.ok(lines.includes("- Kept verbatim: the newest 4 messages"));
    assert.ok(lines.includes("- Summary: 42 tokens"));
    assert.match(text, /## Summary\n\nSummary of 10 earlier messages of thread thr_01\.\n\n## Decisions\n- tabs, not spaces\n/);
    assert.match(text, /it carries no authority/);
    assert.match(compactionText(compaction()), /10 older messages \(all read\)/);
  });

  it("words each refusal with its code and what to do next", () => {
    for (const code of ["nothing_to_compact", "compaction_in_progress", "compaction_pending", "summarizer_failed", "thread_changed"]) {
      const text = compactionErrorText("thr_01", { code, message: "why" });
      assert.equal(text, `rutter: no compaction of thread thr_01 (${code}): why. ${COMPACTION_HINTS[code]}`);
    }
    assert.equal(
      compactionErrorText("thr_01", { code: "other", message: "why", hint: { fix: "raise_the_limit" } }),
      "rutter: no compaction of thread thr_01 (other): why. Fix: raise the limit.",
    );
    assert.equal(compactionErrorText("thr_01", { code: "other", message: "why" }), "rutter: no compaction of thread thr_01 (other): why");
  });
});

describe("Compact Thread…", () => {
  it("from the palette: picks the thread, asks the focus, shows progress, opens the summary, shows the run's tree", async () => {
    const { editor, server, busyWhenSent } = await started({
      runs: [run({ run_id: "run_other", thread_id: "thr_other", goal: "other" }), run({ run_id: RUN_B, thread_id: "thr_01", goal: "fix the parser\nmore" })],
    });
    editor.pickAnswers = [(items) => items.find((item) => item.label === "other")?.value];
    editor.inputAnswers = ["the parser"];
    const result = await editor.run(CompactionCommands.compact);
    assert.equal((result as Compaction).compaction_id, "cmp_01NEW");
    // The Session Tree's run (that of the newest node, run B) comes first in the pick.
    assert.deepEqual(editor.picks[0]?.items.map((item) => item.label), ["fix the parser", "other"]);
    assert.match(editor.picks[0]?.items[0]?.description ?? "", /in the Session Tree/);
    assert.equal(editor.inputs[0]?.title, "Compact Thread");
    assert.equal(editor.inputs[0]?.validate?.("x".repeat(2049)), "At most 2048 bytes");
    assert.equal(editor.inputs[0]?.validate?.(""), undefined);
    assert.deepEqual(sent(server, Methods.sessionCompact), [{ thread_id: "thr_other", focus: "the parser" }]);
    assert.deepEqual(editor.progress, ["rutter: compacting thread thr_other…"]);
    assert.deepEqual(busyWhenSent, [true]);
    assert.equal(editor.readOnly.at(-1)?.name, "cmp_01NEW.md");
    assert.equal(editor.readOnly.at(-1)?.language, "markdown");
    assert.match(editor.readOnly.at(-1)?.text ?? "", /^# Compaction cmp_01NEW/);
    assert.equal(editor.messages.at(-1)?.text, "rutter: thread thr_other compacted (cmp_01NEW): 10 older messages summarized, the newest 4 kept");
    // The Session Tree now shows the tree of the run picked, with its compaction.
    assert.deepEqual(sent(server, Methods.sessionTree).at(-1), { run_id: "run_other" });
  });

  it("from a node of the Session Tree: that node's thread, no focus when the box is left empty", async () => {
    const { editor, server } = await started();
    editor.inputAnswers = [""];
    await editor.run(CompactionCommands.compact, { id: "node/node_one" });
    assert.deepEqual(editor.picks, []);
    assert.deepEqual(sent(server, Methods.sessionCompact), [{ thread_id: "thr_01" }]);
    editor.inputAnswers = [""];
    await editor.run(CompactionCommands.compact, "thr_given");
    assert.deepEqual(sent(server, Methods.sessionCompact).at(-1), { thread_id: "thr_given" });
  });

  it("sends nothing when the focus box is dismissed", async () => {
    const { editor, server } = await started();
    editor.inputAnswers = [undefined];
    assert.equal(await editor.run(CompactionCommands.compact, "thr_01"), undefined);
    assert.deepEqual(sent(server, Methods.sessionCompact), []);
    assert.deepEqual(editor.progress, []);
  });

  it("shows each refusal with its hint and opens nothing", async () => {
    const refusals = [
      { code: "nothing_to_compact", message: "thread thr_01 has 3 messages since its previous compaction" },
      { code: "compaction_in_progress", message: "compaction cmp_1 (operation key k1) of thread thr_01 is running" },
      { code: "summarizer_failed", message: "the summarizer failed" },
      { code: "thread_changed", message: "thread thr_01 received messages" },
    ];
    const { editor } = await started({ compact: refusals });
    for (let asked = 0; asked < refusals.length; asked += 1) {
      editor.inputAnswers = [""];
      assert.equal(await editor.run(CompactionCommands.compact, "thr_01"), undefined);
    }
    assert.deepEqual(editor.readOnly, []);
    assert.deepEqual(
      editor.messages.map((message) => [message.kind, message.text]),
      refusals.map((refusal) => [
        refusal.code === "nothing_to_compact" || refusal.code === "compaction_in_progress" ? "warning" : "error",
        compactionErrorText("thr_01", refusal),
      ]),
    );
  });

  it("offers Abandon and Retry for a pending compaction and resolves it with its operation key", async () => {
    const pending = {
      code: "compaction_pending",
      message: "compaction cmp_old (operation key key-1) of thread thr_01 stopped while its summarizer was running",
      details: { compaction_id: "cmp_old", operation_key: "key-1", thread_id: "thr_01", status: "pending_verification" },
    };
    const { editor, server, busyWhenSent } = await started({
      compact: [pending, pending, pending],
      resolve: ({ operation_key, action }) =>
        action === "retry"
          ? compaction({ compaction_id: "cmp_old", operation_key })
          : compaction({ compaction_id: "cmp_old", operation_key, status: "abandoned", summary: null }),
    });
    editor.inputAnswers = ["", "", ""];
    editor.notifyAnswers = [RETRY, ABANDON, undefined];
    const retried = (await editor.run(CompactionCommands.compact, "thr_01")) as Compaction;
    assert.deepEqual(editor.notifications[0], { kind: "error", text: compactionErrorText("thr_01", pending), actions: [ABANDON, RETRY] });
    assert.equal(retried.status, "completed");
    assert.equal(editor.readOnly.at(-1)?.name, "cmp_old.md");
    const abandoned = (await editor.run(CompactionCommands.compact, "thr_01")) as Compaction;
    assert.equal(abandoned.status, "abandoned");
    assert.equal(editor.readOnly.length, 1, "an abandoned compaction opens no document");
    assert.equal(editor.messages.at(-1)?.text, "rutter: compaction cmp_old of thread thr_01 is abandoned; nothing was stored");
    // Dismissed: nothing is resolved.
    assert.equal(await editor.run(CompactionCommands.compact, "thr_01"), undefined);
    assert.deepEqual(sent(server, Methods.sessionCompactionResolve), [
      { operation_key: "key-1", action: "retry" },
      { operation_key: "key-1", action: "abandon" },
    ]);
    assert.deepEqual(editor.progress.slice(-2), ["rutter: abandoning compaction key-1…", "rutter: compacting thread thr_01…"]);
    assert.ok(busyWhenSent.every((busy) => busy));
  });

  it("says there is no run to choose from the palette", async () => {
    const { editor, server } = await started({ runs: [] });
    assert.equal(await editor.run(CompactionCommands.compact), undefined);
    assert.equal(editor.messages.at(-1)?.text, 'rutter: no active run in the served workspaces; create one with "Rutter: Create Run…"');
    assert.deepEqual(sent(server, Methods.sessionCompact), []);
  });
});
