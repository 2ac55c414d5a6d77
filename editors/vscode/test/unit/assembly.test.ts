import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { startRutter } from "../../src/app";
import { AssemblyCommands, assemblyText, auditText, entryLine, reasonText } from "../../src/assembly";
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
      followed: { assembly_id: "asm_1", followed: ["AGENTS.md"], ignored: [], reported_by: "mcp", reported_at: "2026-12-03T19:05:00Z" },
    };
    const text = auditText({ run_id: "run_1", assemblies: [reported, { ...assembly(), assembly_id: "asm_0", followed: null }], has_more: true });
    assert.match(text, /^# Context audit of run run_1/);
    assert.match(text, /## asm_1 — 2026-12-03T19:00:00Z by lsp\n\n- Budget/);
    assert.match(text, /### Configured\n\n- Instructions: revision 2 of services\/api, 3 sources/);
    assert.match(text, /#### Included \(2\)/);
    assert.match(text, /### Followed\n\nReported by mcp at 2026-12-03T19:05:00Z:\n- followed: AGENTS\.md\n- ignored: none/);
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
