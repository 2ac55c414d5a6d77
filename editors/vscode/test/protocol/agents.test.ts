/**
 * Issues 16 and 20 in VS Code against the real server: history search → read through the
 * extension's search pick and `rutter-history:` documents (a changed source is a conflict, a
 * disabled one gone, neither shows text); the Instructions view's agent switch and the
 * side-by-side of every agent; the assembled context and its audit of a run; and
 * `rutter.agentDiagnostics` reaching the server.
 */

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";

import { type Rutter, startRutter } from "../../src/app";
import { AgentCommands } from "../../src/agents";
import { AssemblyCommands } from "../../src/assembly";
import { HISTORY_SCHEME, HistoryCommands } from "../../src/history";
import type { CreatedRun, HistoryHit, MemoryRecord } from "../../src/protocol";
import { Methods } from "../../src/protocol";
import { FakeEditor, ManualSchedule, outline } from "../fakes";
import { RealServer, tempDir, uriOf, waitFor, writeTree } from "./harness";

/** 1,300 lines of 24 bytes: 31,200 bytes, so Codex's 32 KiB budget cuts the nested file. */
const ROOT_RULES = Array.from({ length: 1300 }, (_, i) => `root rule ${String(i).padStart(5, "0")} keep it\n`).join("");
const API_RULES = Array.from({ length: 400 }, (_, i) => `api rule ${String(i).padStart(4, "0")}\n`).join("");

describe("history, agents and assembly against the real server", () => {
  let root: string;
  let server: RealServer;
  let editor: FakeEditor;
  let rutter: Rutter;
  const schedule = new ManualSchedule();
  const target = () => path.join(root, "services/api/main.go");

  before(async () => {
    const home = tempDir("rutter-home-");
    root = path.join(tempDir("rutter-ws-"), "yard");
    writeTree(root, {
      "AGENTS.md": ROOT_RULES,
      "CLAUDE.md": "claude rules\n",
      "services/api/AGENTS.md": API_RULES,
      "services/api/main.go": "package api\n",
    });
    // A real repository: the agents' walks stop at its root.
    execFileSync("git", ["init", "-q", root]);
    server = await RealServer.start({ folders: [root], home, settings: { agentDiagnostics: ["codex"] } });
    editor = new FakeEditor();
    rutter = startRutter({ editor, server }, { schedule: schedule.schedule });
    editor.setActiveFile({ uri: uriOf(target()), path: target(), folder: root });
    await waitFor("the stack", () => editor.status?.text === "rutter: 3");
  });

  after(async () => {
    rutter.dispose();
    const code = await server.stop();
    assert.equal(code, 0, server.logs.join(""));
  });

  it("switches the Instructions view to Codex: its order, where it cuts, and why", async () => {
    assert.equal(await editor.run(AgentCommands.choose, "codex"), "codex");
    const lines = outline(editor.tree("rutter.instructions"));
    assert.equal(lines[0], "Codex: 2 sources in its load order; 1 cut");
    assert.match(lines[1] ?? "", /^1\. AGENTS\.md — Codex started in the file.s directory reads/);
    assert.match(lines[2] ?? "", /^2\. services\/api\/AGENTS\.md — cut at line 113, 3\.9 KiB lost · Codex started in/);
    assert.equal(editor.viewDescriptions.get("rutter.instructions"), "services/api/main.go · Codex");
    assert.equal(editor.status?.text, "rutter: 3", "the status bar keeps counting the default stack");
    await editor.run(AgentCommands.choose, "claude");
    assert.deepEqual(outline(editor.tree("rutter.instructions")).slice(0, 2).map((line) => line.split(" — ")[0]), [
      "Claude Code: 1 source in its load order",
      "1. CLAUDE.md",
    ]);
    await editor.run(AgentCommands.choose, "default");
    assert.match(outline(editor.tree("rutter.instructions"))[0] ?? "", /^3 sources in delivery order/);
  });

  it("puts every agent side by side for the file", async () => {
    await editor.run(AgentCommands.compare);
    const text = editor.rendered.at(-1)?.text ?? "";
    const lines = text.split("\n");
    assert.equal(lines[0], "# What each agent loads for services/api/main.go");
    assert.ok(lines.includes("| File | Codex | Claude Code | Gemini CLI | Copilot | Cursor | Loaded by |"), text);
    assert.ok(lines.includes("| CLAUDE.md | — | 1 | — | — | — | only 1 of 5 |"), text);
    assert.ok(lines.some((line) => line.startsWith("| services/api/AGENTS.md | 2 ✂ cut at line 113, 3.9 KiB lost | — |")), text);
  });

  it("passes rutter.agentDiagnostics: Codex's cut is a diagnostic on the file it cuts, no other agent's", async () => {
    const uri = await server.open(path.join(root, "services/api/AGENTS.md"));
    type Diagnostic = { code?: string; message: string };
    const items = await waitFor("Codex's diagnostic", async () => {
      const report = await server.connection.sendRequest<{ items: Diagnostic[] }>("textDocument/diagnostic", {
        textDocument: { uri },
      });
      return report.items.some((item) => item.message.startsWith("Codex will cut this file at line 113")) ? report.items : undefined;
    });
    // Cursor and Copilot read this file too, but only Codex was chosen.
    assert.deepEqual(items.filter((item) => /^(Claude Code|Gemini CLI|Copilot|Cursor)\b/.test(item.message)), []);
  });

  let memory: MemoryRecord;

  async function searchFor(query: string): Promise<HistoryHit[]> {
    await editor.run(HistoryCommands.search);
    const pick = editor.livePicks.at(-1);
    assert.ok(pick);
    pick.type(query);
    schedule.flush();
    const items = await waitFor("the hits", () => (pick.shown.length > 0 ? pick.items : undefined));
    return items.flatMap((item) => {
      const value = item.value as { kind: string; hit?: HistoryHit };
      return value.kind === "hit" && value.hit !== undefined ? [value.hit] : [];
    });
  }

  it("finds a memory as you type and opens it read-only as a rutter-history: page", async () => {
    const workspaceId = rutter.instructions.workspaceId;
    assert.ok(workspaceId);
    memory = await server.request<MemoryRecord>(Methods.memoryCreate, {
      scope: "project", workspace_id: workspaceId, title: "stream parsing", content: "删除后不可恢复的 parse_input_stream 要先备份",
    });
    const hits = await searchFor("input_stream");
    assert.deepEqual(hits.map((hit) => [hit.source_kind, hit.source_id, hit.version]), [["memory", memory.id, 1]]);
    const pick = editor.livePicks.at(-1);
    assert.ok(pick);
    assert.equal(pick.items[0]?.label, `memory ${memory.id}`);
    assert.match(pick.items[0]?.detail ?? "", /input_stream/);
    pick.accept(`memory ${memory.id}`);
    const opened = await waitFor("the page", () => editor.schemeDocuments.at(-1));
    assert.equal(opened.scheme, HISTORY_SCHEME);
    assert.equal(opened.path, `/memory ${memory.id} v1 · page 1 of 1`);
    assert.match(opened.text, /删除后不可恢复的 parse_input_stream/);
    await editor.run(HistoryCommands.nextPage);
    assert.equal(editor.messages.at(-1)?.text, "rutter: this is the last page (1 of 1)");
    // A CJK query shorter than 3 characters still matches.
    assert.deepEqual((await searchFor("备份")).map((hit) => hit.source_id), [memory.id]);
  });

  it("shows a changed source as a conflict and a disabled one as gone, with no text", async () => {
    const [hit] = await searchFor("input_stream");
    assert.ok(hit);
    const documents = editor.schemeDocuments.length;
    memory = await server.request<MemoryRecord>(Methods.memoryEdit, { id: memory.id, version: 1, content: "parse_input_stream: back up first" });
    assert.equal(await rutter.history.open(hit, 1), false);
    assert.equal(
      editor.messages.at(-1)?.text,
      `rutter: memory ${memory.id} v1 changed since it was found (conflict); search again to read its current version`,
    );
    const [fresh] = await searchFor("input_stream");
    assert.ok(fresh);
    assert.equal(fresh.version, 2);
    await server.request(Methods.memorySetStatus, { id: memory.id, version: 2, status: "disabled" });
    assert.equal(await rutter.history.open(fresh, 1), false);
    assert.equal(
      editor.messages.at(-1)?.text,
      `rutter: memory ${memory.id} v2 is gone (deleted, disabled, expired or no longer visible); nothing of it is shown`,
    );
    assert.equal(editor.schemeDocuments.length, documents);
    assert.deepEqual(await searchFor("input_stream"), []);
  });

  it("shows a run's assembled context and then its audit", async () => {
    const workspaceId = rutter.instructions.workspaceId;
    assert.ok(workspaceId);
    await server.request<MemoryRecord>(Methods.memoryCreate, {
      scope: "project", workspace_id: workspaceId, title: "tests", content: "run go test ./... before a commit",
    });
    const run = await server.request<CreatedRun>(Methods.createRun, {
      workspace_id: workspaceId, goal: "tidy the parser", target: "services/api/main.go",
    });
    await editor.run(AssemblyCommands.assemble, { run_id: run.run_id });
    const assembled = editor.rendered.at(-1);
    assert.equal(assembled?.name, `context-${run.run_id}.md`);
    const text = assembled?.text ?? "";
    assert.match(text, new RegExp(`^# Assembled context of run ${run.run_id}`));
    assert.match(text, /^- included: instruction `AGENTS\.md` v1 · \d+ tokens · sha256 [0-9a-f]{12}$/m);
    assert.match(text, /^- included: memory `mem_\w+` v1 \(project\) · \d+ tokens/m);
    assert.match(text, /^- omitted: memory `mem_\w+` v3 \(project\) · not read · sha256 [0-9a-f]{12} — disabled: disabled memory$/m);
    assert.doesNotMatch(text, /go test/, "the document lists entries, not delivered texts");
    await editor.run(AssemblyCommands.audit, { id: `run/${run.run_id}` });
    const audit = editor.rendered.at(-1)?.text ?? "";
    assert.match(audit, new RegExp(`^# Context audit of run ${run.run_id}`));
    assert.match(audit, /^## asm_\w+ — \S+ by \S+ via lsp$/m);
    assert.match(audit, /Not reported: only an agent's later replies/);
  });
});
