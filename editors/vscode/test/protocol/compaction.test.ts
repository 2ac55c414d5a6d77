/**
 * Compaction and a context overflow against the real server, as a person does them in VS Code:
 * "Compact Thread…" on a node of the Session Tree (the focus asked, the request under a progress
 * notification, the summary opened read-only, the compaction then shown in the tree as a
 * projected node with what it covers), a second compaction refused `nothing_to_compact` with its
 * hint, and "Show Assembled Context" of a run whose pinned instructions and pins do not fit the
 * default budget: the `context_overflow` error with its figures and the fixes as buttons, "Raise
 * Budget…" assembling again with the budget typed, "Remove Pins…" removing the pins picked.
 * Every answer comes from the real server and is read through the extension's own types.
 */

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";

import { type Rutter, startRutter } from "../../src/app";
import { RAISE_BUDGET, REMOVE_PINS } from "../../src/assembly";
import { COMPACTION_HINTS } from "../../src/compaction";
import type { Compaction, Snapshot } from "../../src/protocol";
import { Methods } from "../../src/protocol";
import { FakeEditor, outline } from "../fakes";
import { RealServer, rutterCli, tempDir, uriOf, waitFor, writeTree } from "./harness";

interface Created {
  run_id: string;
  thread_id: string;
  root_node_id: string;
}

/** An instruction file of about `bytes` bytes (distinct lines, nothing to redact). */
function bulkRules(bytes: number): string {
  const lines: string[] = ["# Bulk service rules", ""];
  for (let rule = 1; lines.join("\n").length < bytes; rule += 1) {
    lines.push(`- Rule ${rule}: validate every field of record batch ${rule} before it is stored.`);
  }
  return `${lines.join("\n")}\n`;
}

describe("compaction and a context overflow against the real server", () => {
  let home: string;
  let root: string;
  let server: RealServer;
  let editor: FakeEditor;
  let rutter: Rutter;
  let created: Created;

  function cli(...args: string[]): string {
    return execFileSync(rutterCli(), args, { env: { ...process.env, RUTTER_HOME: home, RUTTER_DATABASE_URL: "" }, encoding: "utf8" });
  }

  const labels = () => outline(editor.tree("rutter.sessions"));

  before(async () => {
    home = tempDir("rutter-home-");
    root = path.join(tempDir("rutter-ws-"), "shop");
    writeTree(root, {
      "AGENTS.md": "root workflow\n",
      "main.go": "package main\n",
      "bulk/AGENTS.md": bulkRules(40_000),
      "bulk/load.go": "package bulk\n",
    });
    server = await RealServer.start({ folders: [root], home });
    const answer = await server.request<Snapshot>(Methods.effectiveInstructions, { textDocument: { uri: uriOf(path.join(root, "main.go")) } });
    assert.equal(answer.workspace_id, "shop");
    created = JSON.parse(cli("run", "create", "--workspace", "shop", "--goal", "fix the parser", "--json")) as Created;
    for (let number = 1; number <= 8; number += 1) {
      cli("session", "message", "add", created.thread_id, "--role", number % 2 === 1 ? "user" : "assistant", "--text", `step ${number}: keep the parser strict`);
    }
    editor = new FakeEditor();
    rutter = startRutter({ editor, server });
    const file = path.join(root, "main.go");
    editor.setActiveFile({ uri: uriOf(file), path: file, folder: root });
    await waitFor("the session tree", () => labels().length > 0);
  });

  after(async () => {
    rutter.dispose();
    const code = await server.stop();
    assert.equal(code, 0, server.logs.join(""));
  });

  it("compacts the thread of a Session Tree node and shows the summary and the compaction node", async () => {
    editor.inputAnswers.push("the parser");
    const result = (await editor.run("rutter.compactThread", { id: `node/${created.root_node_id}` })) as Compaction | undefined;
    assert.ok(result);
    assert.equal(result.status, "completed");
    assert.equal(result.thread_id, created.thread_id);
    assert.equal(result.compacted_message_count, 4);
    assert.equal(result.kept_message_ids.length, 4);
    assert.deepEqual(editor.progress, [`rutter: compacting thread ${created.thread_id}…`]);
    const shown = editor.readOnly.at(-1);
    assert.equal(shown?.name, `${result.compaction_id}.md`);
    assert.ok(shown?.text.includes("- Summarized: 4 older messages (all read)"), shown?.text);
    assert.ok(shown?.text.includes("## Summary\n\nSummary of 4 earlier messages of thread"), shown?.text);
    await waitFor("the compaction node", () => labels().some((line) => line.startsWith("  summary of 4 messages")));
    const line = labels().find((each) => each.startsWith("  summary of 4 messages"));
    assert.match(line ?? "", / — projected · \d{4}-\d\d-\d\d \d\d:\d\d UTC · 4 messages summarized \(all read\) · extractive$/);
    const node = rutter.sessions.current?.nodes.find((each) => each.node_id === result.compaction_id);
    assert.deepEqual(node?.compaction, { summarizer: "extractive", compacted_message_count: 4, unread_message_count: 0, kept_message_count: 4, summary_tokens: result.summary?.tokens });
    assert.equal(node?.parent_node_id, created.root_node_id);
  });

  it("shows a refusal with its code and hint", async () => {
    editor.inputAnswers.push("");
    assert.equal(await editor.run("rutter.compactThread", created.thread_id), undefined);
    const message = editor.messages.at(-1);
    assert.equal(message?.kind, "warning");
    assert.match(message?.text ?? "", new RegExp(`^rutter: no compaction of thread ${created.thread_id} \\(nothing_to_compact\\): `));
    assert.ok(message?.text.endsWith(COMPACTION_HINTS.nothing_to_compact ?? "?"), message?.text);
  });

  it("shows a context overflow with its figures, and assembles again with a raised budget or fewer pins", async () => {
    const bulk = JSON.parse(cli("run", "create", "--workspace", "shop", "--goal", "load the bulk records", "--target", "bulk/load.go", "--json")) as Created;
    for (const letter of ["a", "b", "c", "d"]) {
      cli("context", "pin", "add", bulk.thread_id, "--text", `${letter}: ${"keep the batch order stable. ".repeat(270)}`);
    }
    editor.notifyAnswers.push(RAISE_BUDGET);
    editor.inputAnswers.push("60000");
    await editor.run("rutter.showAssembledContext", bulk.run_id);
    const overflow = editor.notifications.at(-1);
    assert.equal(overflow?.kind, "error");
    assert.deepEqual(overflow?.actions, [REMOVE_PINS, RAISE_BUDGET]);
    assert.match(overflow?.text ?? "", new RegExp(`^rutter: the required context of run ${bulk.run_id} needs \\d+ tokens and the budget is 16384; `));
    assert.match(overflow?.text ?? "", /Required: instruction AGENTS\.md \(\d+ tokens\), instruction bulk\/AGENTS\.md \(\d+ tokens\), pin pin_\w+ \(\d+ tokens\)/);
    assert.match(overflow?.text ?? "", /Fix: remove pins, raise the budget, choose a model with a larger window\.$/);
    assert.equal(editor.rendered.at(-1)?.name, `context-${bulk.run_id}.md`);
    assert.match(editor.rendered.at(-1)?.text ?? "", /^- Budget: \d+ of 60000 tokens used/m);

    // Remove Pins…: all four picked, removed, and the context fits the default budget again.
    editor.notifyAnswers.push(REMOVE_PINS);
    editor.manyPickAnswers.push((items) => items.map((item) => item.value));
    const before = editor.rendered.length;
    await editor.run("rutter.showAssembledContext", bulk.run_id);
    assert.equal(editor.manyPicks.at(-1)?.items.length, 4);
    const pins = JSON.parse(cli("context", "pin", "list", bulk.thread_id, "--json")) as { pins: unknown[] };
    assert.deepEqual(pins.pins, []);
    assert.equal(editor.rendered.length, before + 1);
    assert.match(editor.rendered.at(-1)?.text ?? "", /^- Budget: \d+ of 16384 tokens used/m);
  });
});
