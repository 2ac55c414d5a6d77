import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { startRutter } from "../../src/app";
import { STORE_REDACTED } from "../../src/memory";
import { CandidateParams, MemoryViewCommands, candidateSection } from "../../src/memoryView";
import type { MemoryCandidate } from "../../src/protocol";
import { Methods } from "../../src/protocol";
import { FakeEditor, FakeServer, outline, settle } from "../fakes";
import { memory } from "../fixtures";

function candidate(overrides: Partial<MemoryCandidate> = {}): MemoryCandidate {
  return {
    candidate_id: "cand_01_1",
    protocol_version: "context_memory_candidate.v1",
    workspace_id: "shop",
    version: 1,
    fingerprint: "f".repeat(64),
    status: "pending",
    title: "Decision: Use the streaming parser",
    content: "Use the streaming parser\nThe old one loads whole files.",
    references: ["src/parser.py"],
    redacted: false,
    source: { note_id: "note_01", note_version: 2, run_id: "run_01", thread_id: "thr_01" },
    completion: { kind: "reply_completed", at: "2026-12-05T10:00:00Z" },
    confidence_note: "A finished reply only proves the reply ended: check the conclusion and where it applies.",
    review: null,
    ...overrides,
  };
}

describe("the Pending Experience section", () => {
  it("shows each candidate with its completion, note version and, expanded, the exact text", () => {
    assert.deepEqual(outline(candidateSection({ workspace_id: "shop", items: [candidate()], scanned: 3, truncated: false })), [
      "Pending Experience — 1 to review",
      "  Decision: Use the streaming parser — agent reply ended · note v2",
      "    Use the streaming parser",
      "    The old one loads whole files.",
      "    References — 1",
      "      src/parser.py",
      "    agent reply ended at 2026-12-05T10:00:00Z",
      "    run run_01 · note note_01 v2",
      "    A finished reply only proves the reply ended: check the conclusion and where it applies.",
    ]);
    assert.deepEqual(candidateSection({ workspace_id: "shop", items: [], scanned: 0, truncated: false }), []);
  });

  it("confirms exactly what it shows, with confirm: true", () => {
    assert.deepEqual(CandidateParams.confirm(candidate()), {
      id: "cand_01_1", version: 1, fingerprint: "f".repeat(64), source_version: 2, confirm: true,
    });
    assert.deepEqual(CandidateParams.ignore(candidate()), { id: "cand_01_1", version: 1 });
  });
});

describe("the memory view with candidates", () => {
  function setup() {
    const editor = new FakeEditor();
    let pending: MemoryCandidate[] = [candidate(), candidate({ candidate_id: "cand_02_1", title: "Summary: done", redacted: true })];
    const server = new FakeServer((method, params) => {
      switch (method) {
        case Methods.effectiveInstructions:
          return {
            protocol_version: "project_instruction_snapshot.v1", workspace_id: "shop", target_path: "a.go",
            fingerprint: "f".repeat(64), loaded_at: "", sources: [], ignored: [], conflicts: [],
          };
        case Methods.runs:
          return { runs: [] };
        case Methods.memoryList:
          return { items: [memory()], has_more: false };
        case Methods.memoryCandidates:
          return { workspace_id: "shop", items: pending, scanned: pending.length, truncated: false };
        case Methods.memoryConfirmCandidate: {
          const p = params as { id: string; redact_sensitive?: boolean };
          const found = pending.find((item) => item.candidate_id === p.id);
          if (found?.redacted === true && p.redact_sensitive !== true) {
            throw Object.assign(new Error("x"), { data: { code: "secret_detected", message: "secrets found" } });
          }
          pending = pending.filter((item) => item.candidate_id !== p.id);
          return { candidate: { ...found, status: "confirmed" }, memory: memory({ title: found?.title ?? "" }) };
        }
        case Methods.memoryIgnoreCandidate: {
          const p = params as { id: string };
          pending = pending.filter((item) => item.candidate_id !== p.id);
          return { ...candidate(), status: "ignored" };
        }
        default:
          throw new Error(`unexpected ${method}`);
      }
    });
    startRutter({ editor, server });
    editor.setActiveFile({ uri: "file:///w/a.go", path: "/w/a.go", folder: "/w" });
    return { editor, server };
  }

  it("lists the candidates above the memories, with a badge, and confirms or ignores from a row", async () => {
    const { editor, server } = setup();
    await settle();
    const tree = editor.tree("rutter.memory");
    assert.equal(tree[0]?.label, "Pending Experience");
    assert.equal(tree[1]?.label, "Deploy checklist");
    assert.deepEqual(editor.badges.get("rutter.memory"), { count: 2, tooltip: "2 experience candidates to review" });
    const [first, second] = tree[0]?.children ?? [];
    assert.equal(first?.contextValue, "candidate.pending");

    await editor.run(MemoryViewCommands.confirmCandidate, first);
    await settle();
    const confirms = server.sent.filter((each) => each.method === Methods.memoryConfirmCandidate);
    assert.deepEqual(confirms.map((each) => each.params), [CandidateParams.confirm(candidate())]);
    assert.match(editor.messages.at(-1)?.text ?? "", /^Saved to project memory: Decision: Use the streaming parser$/);
    assert.deepEqual(editor.badges.get("rutter.memory")?.count, 1);

    // A secret cut out of the note: saved redacted only when the person says so.
    editor.modalAnswers = [undefined];
    await editor.run(MemoryViewCommands.confirmCandidate, editor.tree("rutter.memory")[0]?.children?.[0]);
    await settle();
    assert.equal(server.sent.filter((each) => each.method === Methods.memoryConfirmCandidate).length, 2);
    assert.equal(editor.modals.at(-1)?.actions[0], STORE_REDACTED);
    assert.equal(editor.badges.get("rutter.memory")?.count, 1);
    editor.modalAnswers = [STORE_REDACTED];
    await editor.run(MemoryViewCommands.confirmCandidate, editor.tree("rutter.memory")[0]?.children?.[0]);
    await settle();
    const last = server.sent.filter((each) => each.method === Methods.memoryConfirmCandidate).at(-1);
    assert.deepEqual(last?.params, CandidateParams.confirm(candidate({ candidate_id: "cand_02_1" }), true));
    assert.equal(editor.badges.get("rutter.memory")?.count, 0);
    assert.equal(editor.tree("rutter.memory")[0]?.label, "Deploy checklist");
    assert.ok(second !== undefined);
  });

  it("ignores a candidate without saving anything", async () => {
    const { editor, server } = setup();
    await settle();
    await editor.run(MemoryViewCommands.ignoreCandidate, editor.tree("rutter.memory")[0]?.children?.[0]);
    await settle();
    assert.deepEqual(server.sent.filter((each) => each.method === Methods.memoryIgnoreCandidate).map((each) => each.params), [
      { id: "cand_01_1", version: 1 },
    ]);
    assert.equal(server.sent.filter((each) => each.method === Methods.memoryConfirmCandidate).length, 0);
    assert.equal(editor.badges.get("rutter.memory")?.count, 1);
  });
});
