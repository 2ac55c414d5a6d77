import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { startRutter } from "../../src/app";
import {
  DEBOUNCE_MS,
  HISTORY_SCHEME,
  HistoryCommands,
  LOAD_MORE_LABEL,
  PAGE_LIMIT,
  hitItem,
  hitItems,
  pagePath,
  readFailureText,
  scopeText,
  searchParams,
  snippetLine,
} from "../../src/history";
import type { HistoryHit, Snapshot } from "../../src/protocol";
import { Methods } from "../../src/protocol";
import { FakeEditor, FakeServer, ManualSchedule, settle } from "../fakes";
import { sessionTree } from "../sessionFixtures";

function hit(id: string, overrides: Partial<HistoryHit> = {}): HistoryHit {
  return { handle: `h-${id}`, source_kind: "message", source_id: id, version: 1, thread_id: "thr_1", recorded_at: "2026-12-05T10:00:00Z", snippet: `… parse_input_stream in ${id} …`, ...overrides };
}

describe("history formatters", () => {
  it("labels a hit with its source kind and ID, its version and the snippet on one line", () => {
    const item = hitItem(hit("msg_1", { source_kind: "memory", version: 3, snippet: "first\n  second\tthird" }));
    assert.equal(item.label, "memory msg_1");
    assert.equal(item.description, "v3");
    assert.equal(item.detail, "first second third");
  });

  it("cuts a long snippet at 200 characters", () => {
    const line = snippetLine("x".repeat(500));
    assert.equal(line.length, 200);
    assert.ok(line.endsWith("…"));
  });

  it("adds Load more… with the cursor while there are more, and says when nothing matched", () => {
    const items = hitItems([hit("a"), hit("b")], "cur-2");
    assert.deepEqual(items.map((item) => item.label), ["message a", "message b", LOAD_MORE_LABEL]);
    assert.deepEqual(items.at(-1)?.value, { kind: "more", cursor: "cur-2" });
    assert.equal(items.at(-1)?.description, "2 shown");
    assert.deepEqual(hitItems([], null).map((item) => item.label), ["No match"]);
  });

  it("asks for the run and the workspace where known, with the cursor", () => {
    assert.deepEqual(searchParams("q", {}), { query: "q", limit: PAGE_LIMIT });
    assert.deepEqual(searchParams("q", { workspaceId: "ws", runId: "run_1" }, "c"), {
      query: "q", limit: PAGE_LIMIT, run_id: "run_1", workspace_id: "ws", cursor: "c",
    });
    assert.equal(scopeText({}), "your user memories");
    assert.equal(scopeText({ workspaceId: "ws" }), "memories of ws and yours");
    assert.equal(scopeText({ workspaceId: "ws", runId: "run_1" }), "run run_1 and its lineage, memories of ws and yours");
  });

  it("names a page's document by kind, ID, version and page (no slash of the ID)", () => {
    assert.equal(pagePath(hit("a/b", { version: 2 }), 1, 3), "/message a_b v2 · page 1 of 3");
  });

  it("says conflict and gone plainly", () => {
    const h = hit("m1", { source_kind: "memory", version: 4 });
    assert.equal(
      readFailureText(h, { code: "conflict", message: "x" }),
      "rutter: memory m1 v4 changed since it was found (conflict); search again to read its current version",
    );
    assert.equal(
      readFailureText(h, { code: "gone", message: "x" }),
      "rutter: memory m1 v4 is gone (deleted, disabled, expired or no longer visible); nothing of it is shown",
    );
    assert.equal(readFailureText(h, { code: "usage", message: "bad page" }), "rutter: cannot read memory m1 v4 (usage): bad page");
  });
});

const FILE = { uri: "file:///w/a.go", path: "/w/a.go", folder: "/w" };

function snapshot(): Snapshot {
  return {
    protocol_version: "project_instruction_snapshot.v1", workspace_id: "ws_1", target_path: "a.go",
    fingerprint: "f".repeat(64), loaded_at: "", sources: [], ignored: [], conflicts: [],
  };
}

interface Script {
  search: (params: Record<string, unknown>) => unknown;
  read: (params: Record<string, unknown>) => unknown;
  tree?: boolean;
}

function setup(script: Script) {
  const editor = new FakeEditor();
  const schedule = new ManualSchedule();
  const server = new FakeServer((method, params) => {
    const p = params as Record<string, unknown>;
    switch (method) {
      case Methods.effectiveInstructions:
        return snapshot();
      case Methods.historySearch:
        return script.search(p);
      case Methods.historyRead:
        return script.read(p);
      case Methods.sessionRecent: {
        const tree = sessionTree();
        return { workspace_id: "ws_1", computed_at: "", items: script.tree === true ? [tree.nodes[0]] : [], has_more: false };
      }
      case Methods.sessionTree:
        return { ...sessionTree(), workspace_id: "ws_1" };
      default:
        return { runs: [], items: [], has_more: false, proposals: [], pins: [] };
    }
  });
  const rutter = startRutter({ editor, server }, { schedule: schedule.schedule });
  editor.setActiveFile(FILE);
  return { editor, server, schedule, rutter };
}

function searches(server: FakeServer) {
  return server.sent.filter((sent) => sent.method === Methods.historySearch).map((sent) => sent.params);
}

function pages(text: string, count: number) {
  return (p: Record<string, unknown>) => ({ handle: p.handle, page: p.page, pages: count, text: `${text} page ${String(p.page)}` });
}

describe("Search History…", () => {
  it("asks once the typing stops (debounced), in the active file's workspace, and drops an emptied text", async () => {
    const { editor, server, schedule } = setup({ search: () => ({ hits: [hit("msg_1")], next_cursor: null }), read: pages("t", 1) });
    await settle();
    await editor.run(HistoryCommands.search);
    const pick = editor.livePicks[0];
    assert.ok(pick);
    assert.equal(pick.options.title, "rutter: Search History");
    assert.equal(pick.options.placeholder, "Search memories of ws_1 and yours");
    pick.type("pa");
    pick.type("par");
    pick.type("parse");
    assert.equal(schedule.waiting, 1, "each keystroke cancels the one before");
    assert.deepEqual(searches(server), []);
    schedule.flush();
    await settle();
    assert.deepEqual(searches(server), [{ query: "parse", limit: PAGE_LIMIT, workspace_id: "ws_1" }]);
    assert.deepEqual(pick.items.map((item) => item.label), ["message msg_1"]);
    assert.equal(pick.busy, false);
    pick.type("   ");
    assert.equal(schedule.waiting, 0);
    assert.deepEqual(pick.items, []);
    assert.ok(DEBOUNCE_MS > 0);
  });

  it("searches the run the Session Tree shows when there is one", async () => {
    const { editor, server, schedule } = setup({ search: () => ({ hits: [], next_cursor: null }), read: pages("t", 1), tree: true });
    await settle();
    await editor.run(HistoryCommands.search);
    const pick = editor.livePicks[0];
    assert.ok(pick);
    pick.type("needle");
    schedule.flush();
    await settle();
    const runId = sessionTree().run_id;
    assert.deepEqual(searches(server), [{ query: "needle", limit: PAGE_LIMIT, run_id: runId, workspace_id: "ws_1" }]);
    assert.deepEqual(pick.items.map((item) => item.label), ["No match"]);
  });

  it("drops the answer to an older text", async () => {
    const pending: ((value: unknown) => void)[] = [];
    const { editor, schedule } = setup({
      search: (p) => new Promise((resolve) => pending.push(() => resolve({ hits: [hit(String(p.query))], next_cursor: null }))),
      read: pages("t", 1),
    });
    await settle();
    await editor.run(HistoryCommands.search);
    const pick = editor.livePicks[0];
    assert.ok(pick);
    pick.type("old");
    schedule.flush();
    pick.type("new");
    schedule.flush();
    await settle();
    assert.equal(pending.length, 2);
    pending[1]?.(undefined);
    await settle();
    pending[0]?.(undefined);
    await settle();
    assert.deepEqual(pick.items.map((item) => item.label), ["message new"]);
  });

  it("loads more with the cursor, appending, until there is no next cursor", async () => {
    const { editor, server, schedule } = setup({
      search: (p) => (p.cursor === undefined
        ? { hits: [hit("a"), hit("b")], next_cursor: "c1" }
        : { hits: [hit("c")], next_cursor: null }),
      read: pages("t", 1),
    });
    await settle();
    await editor.run(HistoryCommands.search);
    const pick = editor.livePicks[0];
    assert.ok(pick);
    pick.type("stream");
    schedule.flush();
    await settle();
    assert.deepEqual(pick.items.map((item) => item.label), ["message a", "message b", LOAD_MORE_LABEL]);
    pick.accept(LOAD_MORE_LABEL);
    await settle();
    assert.deepEqual(searches(server).at(-1), { query: "stream", limit: PAGE_LIMIT, workspace_id: "ws_1", cursor: "c1" });
    assert.deepEqual(pick.items.map((item) => item.label), ["message a", "message b", "message c"]);
    assert.equal(pick.closed, false);
  });

  it("shows a failed search as one row with the typed reason", async () => {
    const { editor, schedule } = setup({
      search: () => {
        throw Object.assign(new Error("x"), { data: { code: "usage", message: "the query is longer than 256 characters" } });
      },
      read: pages("t", 1),
    });
    await settle();
    await editor.run(HistoryCommands.search);
    const pick = editor.livePicks[0];
    assert.ok(pick);
    pick.type("q");
    schedule.flush();
    await settle();
    assert.deepEqual(pick.items.map((item) => [item.label, item.detail]), [["Search failed (usage)", "the query is longer than 256 characters"]]);
  });

  it("opens the chosen hit read-only, one document per page, with next and previous", async () => {
    const { editor, server, schedule } = setup({ search: () => ({ hits: [hit("msg_9", { version: 2 })], next_cursor: null }), read: pages("body", 2) });
    await settle();
    await editor.run(HistoryCommands.search);
    const pick = editor.livePicks[0];
    assert.ok(pick);
    pick.type("body");
    schedule.flush();
    await settle();
    pick.accept("message msg_9");
    await settle();
    assert.equal(pick.closed, true);
    assert.deepEqual(editor.schemeDocuments.at(-1), {
      scheme: HISTORY_SCHEME, path: "/message msg_9 v2 · page 1 of 2", language: "plaintext", text: "body page 1",
    });
    await editor.run(HistoryCommands.previousPage);
    assert.equal(editor.messages.at(-1)?.text, "rutter: this is the first page (1 of 2)");
    await editor.run(HistoryCommands.nextPage);
    assert.equal(editor.schemeDocuments.at(-1)?.text, "body page 2");
    assert.equal(editor.schemeDocuments.at(-1)?.path, "/message msg_9 v2 · page 2 of 2");
    await editor.run(HistoryCommands.nextPage);
    assert.equal(editor.messages.at(-1)?.text, "rutter: this is the last page (2 of 2)");
    assert.deepEqual(
      server.sent.filter((sent) => sent.method === Methods.historyRead).map((sent) => sent.params),
      [{ handle: "h-msg_9", page: 1 }, { handle: "h-msg_9", page: 2 }],
    );
  });

  it("shows conflict or gone as a message and opens no text", async () => {
    let code = "conflict";
    const { editor, schedule, rutter } = setup({
      search: () => ({ hits: [hit("mem_1", { source_kind: "memory" })], next_cursor: null }),
      read: () => {
        throw Object.assign(new Error("x"), { data: { code, message: "changed" } });
      },
    });
    await settle();
    await editor.run(HistoryCommands.search);
    const pick = editor.livePicks[0];
    assert.ok(pick);
    pick.type("secret");
    schedule.flush();
    await settle();
    pick.accept("memory mem_1");
    await settle();
    assert.deepEqual(editor.schemeDocuments, []);
    assert.deepEqual(editor.messages.at(-1), {
      kind: "warning",
      text: "rutter: memory mem_1 v1 changed since it was found (conflict); search again to read its current version",
    });
    code = "gone";
    assert.equal(await rutter.history.open(hit("mem_1", { source_kind: "memory" }), 1), false);
    assert.match(editor.messages.at(-1)?.text ?? "", /is gone .*nothing of it is shown$/);
    assert.deepEqual(editor.schemeDocuments, []);
  });

  it("says so when no history page is in front, and a page no longer known shows no other text", async () => {
    const { editor, rutter } = setup({ search: () => ({ hits: [], next_cursor: null }), read: pages("t", 1) });
    await settle();
    await editor.run(HistoryCommands.nextPage);
    assert.equal(editor.messages.at(-1)?.text, "rutter: open a history page first (Rutter: Search History…)");
    assert.match(rutter.history.pageText("/memory x v1 · page 1 of 1"), /no longer open; search again/);
  });
});
