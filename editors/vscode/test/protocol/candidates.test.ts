/**
 * Experience candidates against the real server, through the Memory view: a referenced decision
 * of a run that completed (written with the CLI) appears under "Pending Experience" with the
 * badge; "Confirm and Save to Project" makes it a project memory the view then lists; "Ignore"
 * resolves another without one.
 */

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { after, before, describe, it } from "node:test";

import type { MemoryList } from "../../src/protocol";
import { Methods } from "../../src/protocol";
import { MemoryViewCommands } from "../../src/memoryView";
import { type MemoryWorkspace, rutterCli, startMemoryWorkspace, stopMemoryWorkspace } from "./harness";

describe("experience candidates against the real server", () => {
  let workspace: MemoryWorkspace;

  function cli(...args: string[]): string {
    return execFileSync(rutterCli(), args, {
      env: { ...process.env, RUTTER_HOME: workspace.home, RUTTER_DATABASE_URL: "" },
      encoding: "utf8",
    });
  }

  before(async () => {
    workspace = await startMemoryWorkspace();
    const run = JSON.parse(cli("run", "create", "--workspace", "shop", "--goal", "g", "--json")) as { run_id: string; thread_id: string };
    for (const text of ["Use pnpm, never npm", "Pin the Go toolchain"]) {
      cli("session", "note", "add", run.thread_id, "--kind", "decision", "--text", text, "--reference", "main.go");
    }
    cli("run", "status", run.run_id, "running");
    cli("run", "status", run.run_id, "completed");
  });

  after(async () => {
    await stopMemoryWorkspace(workspace);
  });

  it("shows the candidates, confirms one into project memory and ignores the other", async () => {
    const { editor, server } = workspace;
    await editor.run(MemoryViewCommands.refresh);
    const section = editor.tree("rutter.memory")[0];
    assert.equal(section?.label, "Pending Experience");
    assert.deepEqual(editor.badges.get("rutter.memory")?.count, 2);
    const rows = section?.children ?? [];
    const pnpm = rows.find((row) => row.label === "Decision: Use pnpm, never npm");
    assert.ok(pnpm);
    assert.equal(pnpm.description, "run completed · note v1");
    assert.equal(pnpm.children?.[0]?.label, "Use pnpm, never npm");

    await editor.run(MemoryViewCommands.confirmCandidate, pnpm);
    const memories = await server.request<MemoryList>(Methods.memoryList, { scope: "project", workspace_id: "shop" });
    assert.deepEqual(
      memories.items.map((item) => [item.title, item.content, item.created_by, item.references]),
      [["Decision: Use pnpm, never npm", "Use pnpm, never npm", "lsp", ["main.go"]]],
    );
    assert.deepEqual(editor.badges.get("rutter.memory")?.count, 1);
    assert.ok(editor.tree("rutter.memory").some((node) => node.label === "Decision: Use pnpm, never npm" && node.id.startsWith("memory/")));

    const rest = editor.tree("rutter.memory")[0]?.children?.[0];
    assert.equal(rest?.label, "Decision: Pin the Go toolchain");
    await editor.run(MemoryViewCommands.ignoreCandidate, rest);
    assert.equal(editor.badges.get("rutter.memory")?.count, 0);
    assert.notEqual(editor.tree("rutter.memory")[0]?.label, "Pending Experience");
    const remaining = await server.request<MemoryList>(Methods.memoryList, { scope: "project", workspace_id: "shop" });
    assert.equal(remaining.items.length, 1);
  });
});
