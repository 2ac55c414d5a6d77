import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { startRutter } from "../../src/app";
import {
  AssemblyCommands,
  MAX_BUDGET,
  RAISE_BUDGET,
  REMOVE_PINS,
  assemblyText,
  auditText,
  budgetError,
  entryLine,
  overflowOf,
  overflowText,
  reasonText,
} from "../../src/assembly";
import type { Assembly, AssemblyEntry, AuditRecord } from "../../src/protocol";
import { Methods } from "../../src/protocol";
import { FakeEditor, FakeServer, settle } from "../fakes";
import { run } from "../fixtures";

function entry(overrides: Partial<AssemblyEntry>): AssemblyEntry {
  return { kind: "memory", id: "mem_1", version: 1, scope: "user", sha256: "a".repeat(64), tokens: 40, decision: "included", reason: null, ...overrides };
}

function assembly(): Assembly {
  return {
    protocol_version: "context_assembly.v1",
    assembly_id: "asm_1",
    run_id: "run_1",
    thread_id: "thr_1",
    workspace_id: "ws",
    created_at: "2026-12-03T19:00:00Z",
    created_by: "lsp",
    created_by_person: "alice",
    estimator: "utf8-bytes/4",
    budget: { background: 1000, memory_cap: 250, memory: 40, required: 300, used: 340 },
    configured: {
      instructions: { revision: 2, fingerprint: "b".repeat(64), target_path: "services/api", sources: 3 },
      pins: 1,
      memory: { user: { active: 2, considered: 2, inactive: 1, inactive_listed: 1 }, project: { active: 0, considered: 0, inactive: 0, inactive_listed: 0 } },
    },
    entries: [
      entry({ kind: "instruction", id: "AGENTS.md", version: 2, scope: null, tokens: 300, text: "be brief" }),
      entry({ text: "remember" }),
      entry({ id: "mem_2", tokens: 900, decision: "omitted", reason: "quota", text: null }),
      entry({ id: "mem_3", tokens: null, decision: "omitted", reason: "disabled", text: null }),
    ],
    fingerprint: "c".repeat(64),
  };
}

describe("assembly formatters", () => {
  it("words each omission reason", () => {
    assert.equal(reasonText("quota"), "does not fit the memory sub-budget");
    assert.equal(reasonText("required_context"), "the budget is spent by pinned instructions and pins before memory");
    assert.equal(reasonText("instructions"), "instruction source cut by the budget");
    assert.equal(reasonText("disabled"), "disabled memory");
    assert.equal(reasonText("expired"), "expired memory");
    assert.equal(reasonText("new_reason"), "new_reason");
  });

  it("says each entry's decision, identity, tokens and digest", () => {
    assert.equal(entryLine(entry({})), "- included: memory `mem_1` v1 (user) · 40 tokens · sha256 aaaaaaaaaaaa");
    assert.equal(
      entryLine(entry({ id: "mem_3", tokens: null, decision: "omitted", reason: "expired" })),
      "- omitted: memory `mem_3` v1 (user) · not read · sha256 aaaaaaaaaaaa — expired: expired memory",
    );
  });

  it("lists included and omitted entries with the budget, never the delivered texts", () => {
    const text = assemblyText(assembly());
    const lines = text.split("\n");
    assert.equal(lines[0], "# Assembled context of run run_1");
    assert.ok(lines.includes("- Budget: 340 of 1000 tokens used (required context 300; memory sub-budget 40, capped at 250)"));
    assert.ok(lines.includes("### Included (2)"));
    assert.ok(lines.includes("### Omitted (2)"));
    assert.ok(lines.includes("- omitted: memory `mem_2` v1 (user) · 900 tokens · sha256 aaaaaaaaaaaa — quota: does not fit the memory sub-budget"));
    assert.ok(lines.includes("- user memories: 2 active (2 considered), 1 disabled or expired"));
    assert.doesNotMatch(text, /be brief|remember/);
  });

  it("keeps the audit's three facts apart, and says when nothing was reported followed", () => {
    const reported: AuditRecord = {
      ...assembly(),
      followed: { assembly_id: "asm_1", followed: ["AGENTS.md"], ignored: [], reported_by: "mcp", reported_by_person: null, reported_at: "2026-12-03T19:05:00Z" },
    };
    const text = auditText({ run_id: "run_1", assemblies: [reported, { ...assembly(), assembly_id: "asm_0", followed: null }], has_more: true });
    assert.match(text, /^# Context audit of run run_1/);
    assert.match(text, /## asm_1 — 2026-12-03T19:00:00Z by alice via lsp\n\n- Budget/);
    assert.match(text, /### Configured\n\n- Instructions: revision 2 of services\/api, 3 sources/);
    assert.match(text, /#### Included \(2\)/);
    assert.match(text, /### Followed\n\nReported by mcp, person unknown at 2026-12-03T19:05:00Z:\n- followed: AGENTS\.md\n- ignored: none/);
    assert.match(text, /Not reported: only an agent's later replies and tool receipts can say what was followed\./);
    assert.match(text, /Older assemblies are not shown/);
    assert.match(auditText({ run_id: "run_1", assemblies: [], has_more: false }), /No assembly stored for this run yet/);
  });
});

function setup(fail?: { code: string; message: string }) {
  const editor = new FakeEditor();
  const server = new FakeServer((method) => {
    if ((method === Methods.contextAssemble || method === Methods.contextAudit) && fail !== undefined) {
      throw Object.assign(new Error("x"), { data: fail });
    }
    switch (method) {
      case Methods.runs:
        return { runs: [run({ run_id: "run_1", goal: "tidy\nmore" })] };
      case Methods.contextAssemble:
        return assembly();
      case Methods.contextAudit:
        return { run_id: "run_1", assemblies: [], has_more: false };
      default:
        return { items: [], has_more: false, proposals: [], pins: [] };
    }
  });
  startRutter({ editor, server });
  return { editor, server };
}

describe("Show Assembled Context / Show Context Audit", () => {
  it("assembles for the run of the row and opens the document", async () => {
    const { editor, server } = setup();
    await settle();
    await editor.run(AssemblyCommands.assemble, { id: "run/run_1" });
    assert.deepEqual(server.sent.filter((sent) => sent.method === Methods.contextAssemble).map((sent) => sent.params), [{ run_id: "run_1" }]);
    assert.equal(editor.rendered.at(-1)?.name, "context-run_1.md");
    assert.match(editor.rendered.at(-1)?.text ?? "", /^# Assembled context of run run_1/);
    assert.deepEqual(editor.readOnly, [], "rendered, not opened as source");
  });

  it("picks the run from the palette, then opens the audit", async () => {
    const { editor, server } = setup();
    await settle();
    editor.pickAnswers = [(items) => items[0]?.value];
    await editor.run(AssemblyCommands.audit);
    assert.deepEqual(editor.picks[0]?.items.map((item) => item.label), ["tidy"]);
    assert.deepEqual(server.sent.filter((sent) => sent.method === Methods.contextAudit).map((sent) => sent.params), [{ run_id: "run_1" }]);
    assert.equal(editor.rendered.at(-1)?.name, "audit-run_1.md");
  });

  it("shows the typed reason of a refusal and opens nothing", async () => {
    const { editor } = setup({ code: "not_found", message: "no run run_9" });
    await settle();
    await editor.run(AssemblyCommands.assemble, "run_9");
    await editor.run(AssemblyCommands.audit, "run_9");
    assert.deepEqual(editor.rendered, []);
    assert.deepEqual(editor.messages.map((message) => message.text), [
      "rutter: cannot assemble the context of run run_9 (not_found): no run run_9",
      "rutter: cannot list the context audit of run run_9 (not_found): no run run_9",
    ]);
  });

  it("says there is no run to choose", async () => {
    const editor = new FakeEditor();
    startRutter({ editor, server: new FakeServer(() => ({ runs: [], items: [], has_more: false, proposals: [], pins: [] })) });
    await settle();
    await editor.run(AssemblyCommands.assemble);
    assert.equal(editor.messages.at(-1)?.text, "rutter: no active run in the served workspaces");
  });
});

const OVERFLOW = {
  code: "context_overflow",
  message: "the required context (pinned instructions, pins and the latest summary) needs 1300 tokens and the budget is 1000",
  details: {
    budget: 1000,
    needed: 1300,
    required: [
      { kind: "instruction", id: "AGENTS.md", tokens: 300 },
      { kind: "pin", id: "pin_big", tokens: 900 },
      { kind: "pin", id: "pin_small", tokens: 100 },
    ],
  },
  hint: { fix: "fit_required_context", needed: 1300 },
};

/** A server whose assembly overflows until `fits(params)` says the request fits. */
function overflowing(fits: (params: { run_id: string; budget?: number }, removed: string[]) => boolean, details = OVERFLOW.details) {
  const editor = new FakeEditor();
  const removed: string[] = [];
  const server = new FakeServer((method, params) => {
    switch (method) {
      case Methods.runs:
        return { runs: [run({ run_id: "run_1" })] };
      case Methods.contextAssemble:
        if (!fits(params as { run_id: string; budget?: number }, removed)) {
          throw Object.assign(new Error("x"), { data: { ...OVERFLOW, details } });
        }
        return assembly();
      case Methods.pinList:
        return {
          thread_id: "thr_1", run_id: "run_1", count: 3, total_chars: 10,
          pins: [
            { pin_id: "pin_big", thread_id: "thr_1", text: "the whole style guide\nand more", redacted: false, proposal_id: null, version: 3 },
            { pin_id: "pin_small", thread_id: "thr_1", text: "use tabs", redacted: false, proposal_id: null, version: 1 },
            { pin_id: "pin_free", thread_id: "thr_1", text: "not required", redacted: false, proposal_id: null, version: 1 },
          ],
        };
      case Methods.pinRemove:
        removed.push((params as { pin_id: string }).pin_id);
        return { pin_id: (params as { pin_id: string }).pin_id };
      default:
        return { items: [], has_more: false, proposals: [], pins: [] };
    }
  });
  startRutter({ editor, server });
  return { editor, server, removed };
}

function assembled(server: FakeServer): unknown[] {
  return server.sent.filter((sent) => sent.method === Methods.contextAssemble).map((sent) => sent.params);
}

describe("a context overflow and its fixes", () => {
  it("reads the figures of the error and words them with the fixes", () => {
    const overflow = overflowOf(OVERFLOW);
    assert.deepEqual(overflow, OVERFLOW.details);
    assert.equal(overflowOf({ code: "not_found", message: "x" }), undefined);
    assert.equal(
      overflowText("run_1", overflow ?? OVERFLOW.details),
      "rutter: the required context of run run_1 needs 1300 tokens and the budget is 1000; nothing is delivered rather than leaving out an instruction or a pin. " +
        "Required: instruction AGENTS.md (300 tokens), pin pin_big (900 tokens), pin pin_small (100 tokens). " +
        "Fix: remove pins, raise the budget, choose a model with a larger window.",
    );
    assert.equal(budgetError("2000"), undefined);
    for (const bad of ["", "0", "-5", "1.5", "many", String(MAX_BUDGET + 1)]) {
      assert.equal(budgetError(bad), `A whole number of tokens, 1-${MAX_BUDGET}`, bad);
    }
  });

  it("Remove Pins…: picks among the required pins, removes the chosen ones, assembles again with the same budget", async () => {
    const { editor, server, removed } = overflowing((_, gone) => gone.includes("pin_big"));
    await settle();
    editor.notifyAnswers = [REMOVE_PINS];
    editor.manyPickAnswers = [(items) => items.filter((item) => item.label === "the whole style guide").map((item) => item.value)];
    const result = await editor.run(AssemblyCommands.assemble, "run_1");
    assert.equal((result as Assembly).assembly_id, "asm_1");
    assert.deepEqual(editor.notifications[0]?.actions, [REMOVE_PINS, RAISE_BUDGET]);
    assert.equal(editor.notifications[0]?.kind, "error");
    assert.match(editor.notifications[0]?.text ?? "", /needs 1300 tokens and the budget is 1000/);
    // Only the pins the overflow names, with their tokens.
    assert.deepEqual(
      editor.manyPicks[0]?.items.map((item) => [item.label, item.description]),
      [["the whole style guide", "pin_big · 900 tokens"], ["use tabs", "pin_small · 100 tokens"]],
    );
    assert.deepEqual(removed, ["pin_big"]);
    assert.deepEqual(server.sent.filter((sent) => sent.method === Methods.pinRemove).map((sent) => sent.params), [{ pin_id: "pin_big", version: 3 }]);
    assert.deepEqual(assembled(server), [{ run_id: "run_1" }, { run_id: "run_1", budget: 1000 }]);
    assert.equal(editor.rendered.at(-1)?.name, "context-run_1.md");
  });

  it("Raise Budget…: asks the budget (the tokens needed offered), then assembles again with it", async () => {
    const { editor, server } = overflowing((params) => (params.budget ?? 0) >= 1300);
    await settle();
    editor.notifyAnswers = [RAISE_BUDGET];
    editor.inputAnswers = ["1500"];
    await editor.run(AssemblyCommands.assemble, "run_1");
    assert.equal(editor.inputs[0]?.value, "1300");
    assert.equal(editor.inputs[0]?.validate, budgetError);
    assert.deepEqual(assembled(server), [{ run_id: "run_1" }, { run_id: "run_1", budget: 1500 }]);
    assert.equal(editor.rendered.at(-1)?.name, "context-run_1.md");
    assert.deepEqual(editor.readOnly, [], "rendered, not opened as source");
  });

  it("offers only Raise Budget… when no pin is required, again after a budget still too small, and nothing when dismissed", async () => {
    const details = { budget: 1000, needed: 1300, required: [{ kind: "instruction", id: "AGENTS.md", tokens: 1300 }] };
    const { editor, server } = overflowing(() => false, details);
    await settle();
    editor.notifyAnswers = [RAISE_BUDGET, undefined];
    editor.inputAnswers = ["1200"];
    assert.equal(await editor.run(AssemblyCommands.assemble, "run_1"), undefined);
    assert.deepEqual(editor.notifications.map((shown) => shown.actions), [[RAISE_BUDGET], [RAISE_BUDGET]]);
    assert.match(editor.notifications[0]?.text ?? "", /Fix: raise the budget, choose a model with a larger window\./);
    assert.deepEqual(assembled(server), [{ run_id: "run_1" }, { run_id: "run_1", budget: 1200 }]);
    assert.deepEqual(editor.rendered, []);
    assert.deepEqual(editor.readOnly, []);
    assert.deepEqual(editor.messages, []);
  });
});
