/**
 * Protocol tests of agent profiles (issue 20) against the real server, as VS Code reaches it:
 * `rutter/effectiveInstructions` with a `profile`, the command with one, and the agents'
 * diagnostics in a pulled report.
 */

import assert from "node:assert/strict";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";

import { RealServer, tempDir, uriOf, writeTree } from "./harness";

interface Source {
  path: string;
  why: string;
  truncation: { byte: number; line: number; lost_bytes: number } | null;
}

interface View {
  agent: string;
  sources: Source[];
}

interface Report {
  kind: string;
  items: { code: string; source: string; severity: number; message: string; range: { start: { line: number } } }[];
}

describe("agent profiles against the real server", () => {
  let server: RealServer;
  let root: string;

  before(async () => {
    const home = tempDir("rutter-home-");
    root = path.join(tempDir("rutter-ws-"), "shop");
    writeTree(root, {
      "AGENTS.md": "r".repeat(30_000) + "\n",
      "CLAUDE.md": "claude rules\n",
      "svc/AGENTS.md": Array.from({ length: 600 }, (_, n) => `rule ${String(n).padStart(4, "0")}\n`).join(""),
      "svc/main.go": "package main\n",
    });
    server = await RealServer.start({ folders: [root], home });
  });

  after(async () => {
    const code = await server.stop();
    assert.equal(code, 0, server.logs.join(""));
  });

  it("answers what one agent, or each, would load, and where Codex cuts", async () => {
    const main = path.join(root, "svc/main.go");
    await server.open(main, "go");
    const codex = await server.request<View>("rutter/effectiveInstructions", {
      textDocument: { uri: uriOf(main) },
      profile: "codex",
    });
    assert.equal(codex.agent, "codex");
    assert.deepEqual(
      codex.sources.map((source) => [source.path, source.truncation]),
      [
        ["AGENTS.md", null],
        ["svc/AGENTS.md", { byte: 2767, line: 277, lost_bytes: 3233 }],
      ],
    );
    const every = await server.executeCommand<{ profiles: View[] }>("rutter.effectiveInstructions", [uriOf(main), "all"]);
    assert.deepEqual(
      every.profiles.map((view) => view.agent),
      ["codex", "claude", "gemini", "copilot", "cursor"],
    );
  });

  it("reports the agents' diagnostics in the pulled report", async () => {
    const cut = await server.open(path.join(root, "svc/AGENTS.md"));
    const report = await server.request<Report>("textDocument/diagnostic", { textDocument: { uri: cut } });
    const item = report.items.find((entry) => entry.code === "budget_cut");
    assert.ok(item, JSON.stringify(report.items));
    assert.equal(item.severity, 2);
    assert.equal(item.source, "rutter");
    assert.equal(item.range.start.line, 276);
    assert.match(item.message, /^Codex will cut this file at line 277 \(byte 2767\)/);

    const agents = await server.open(path.join(root, "AGENTS.md"));
    const notes = await server.request<Report>("textDocument/diagnostic", { textDocument: { uri: agents } });
    assert.deepEqual(
      notes.items.map((entry) => [entry.code, entry.severity]),
      [["not_read", 3]],
    );
  });
});
