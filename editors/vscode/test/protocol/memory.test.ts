/**
 * Memory against the real server, through the extension's own commands and document store:
 * add (a new document saved), list → edit (saved with the version; a stale save refused),
 * disable / enable, export, delete (the server's question answered in the modal).
 */

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { after, before, describe, it } from "node:test";

import { MEMORY_SCHEME, MemoryCommands } from "../../src/memory";
import { parseMemory } from "../../src/memoryDocument";
import type { DocumentStore } from "../../src/ports";
import type { MemoryExport, MemoryList, MemoryRecord } from "../../src/protocol";
import { Methods } from "../../src/protocol";
import { MemoryViewCommands } from "../../src/memoryView";
import { FakeEditor, outline } from "../fakes";
import { type MemoryWorkspace, RealServer, rutterCli, startMemoryWorkspace, stopMemoryWorkspace, waitFor } from "./harness";

describe("memory against the real server", () => {
  let home: string;
  let server: RealServer;
  let editor: FakeEditor;
  let store: DocumentStore;
  let created: MemoryRecord;

  function cli(...args: string[]): string {
    return execFileSync(rutterCli(), args, { env: { ...process.env, RUTTER_HOME: home, RUTTER_DATABASE_URL: "" }, encoding: "utf8" });
  }

  async function only(): Promise<MemoryRecord> {
    const list = await server.request<MemoryList>(Methods.memoryList, { all: true });
    assert.equal(list.items.length, 1);
    return list.items[0] as MemoryRecord;
  }

  let workspace: MemoryWorkspace;

  before(async () => {
    workspace = await startMemoryWorkspace();
    ({ home, server, editor, store } = workspace);
  });

  after(async () => {
    await stopMemoryWorkspace(workspace);
  });

  it("adds a project memory from a new document", async () => {
    editor.pickAnswers = [(items) => items.find((item) => item.value === "project")?.value];
    const documentPath = (await editor.run(MemoryCommands.add)) as string;
    const template = await store.read(documentPath);
    await store.write(
      documentPath,
      template.replace("title: ", "title: Use pnpm\nreference: docs/build.md\nretention: 30d") + "never npm in this repo\n",
    );
    created = await only();
    assert.equal(created.scope, "project");
    assert.equal(created.scope_id, "shop");
    assert.equal(created.title, "Use pnpm");
    assert.equal(created.content, "never npm in this repo");
    assert.deepEqual(created.references, ["docs/build.md"]);
    assert.equal(created.version, 1);
    assert.equal(created.created_by, "lsp");
    assert.ok(created.retention_until !== null);
    // The saved document now reads as the memory itself.
    assert.equal(parseMemory(await store.read(documentPath)).title, "Use pnpm");
  });

  it("shows it in the Memory view with the user memory the CLI adds, and opens it from there", async () => {
    await waitFor("the new memory in the view", () => editor.tree("rutter.memory").length === 1);
    assert.deepEqual(outline(editor.tree("rutter.memory")), ["Use pnpm — project shop · v1"]);
    assert.equal(editor.viewDescriptions.get("rutter.memory"), "user + shop");
    const added = JSON.parse(cli("context", "memory", "create", "--scope", "user", "--title", "Tabs", "--content", "indent with tabs", "--json")) as MemoryRecord;
    await editor.run(MemoryViewCommands.refresh);
    assert.deepEqual(new Set(outline(editor.tree("rutter.memory"))), new Set(["Use pnpm — project shop · v1", "Tabs — user · v1"]));
    const row = editor.tree("rutter.memory").find((node) => node.label === "Tabs");
    assert.ok(row?.command);
    await editor.run(row.command.command, ...row.command.arguments);
    assert.deepEqual(editor.openedStore.at(-1), { scheme: MEMORY_SCHEME, path: `/${added.id}.md` });
    // Deleted again with the CLI: the later steps count the memories.
    cli("context", "memory", "delete", added.id, "--version", "1", "--json");
  });

  it("lists it and edits it with the version it was opened at", async () => {
    editor.pickAnswers = [(items) => items[0]?.value, () => "edit"];
    await editor.run(MemoryCommands.list);
    assert.equal(editor.picks.at(-2)?.items[0]?.label, "Use pnpm");
    assert.equal(editor.picks.at(-2)?.items[0]?.description, "project shop · v1");
    const opened = editor.openedStore.at(-1);
    assert.deepEqual(opened, { scheme: MEMORY_SCHEME, path: `/${created.id}.md` });
    const text = await store.read(opened.path);
    await store.write(opened.path, text.replace("never npm in this repo", "never npm, never yarn"));
    const edited = await only();
    assert.equal(edited.version, 2);
    assert.equal(edited.content, "never npm, never yarn");
    assert.equal(edited.updated_by, "lsp");
  });

  it("refuses a save based on a version someone else changed, and keeps their edit", async () => {
    const documentPath = `/${created.id}.md`;
    const text = await store.read(documentPath); // version 2
    cli("context", "memory", "edit", created.id, "--version", "2", "--title", "Use pnpm only");
    await assert.rejects(
      store.write(documentPath, text.replace("never yarn", "never bun")),
      new RegExp(`memory ${created.id} is at version 3, not 2: it changed since you read it.*\\(conflict\\)$`),
    );
    const current = await only();
    assert.equal(current.version, 3);
    assert.equal(current.title, "Use pnpm only");
    assert.equal(current.content, "never npm, never yarn");
  });

  it("disables and enables it", async () => {
    editor.pickAnswers = [(items) => items[0]?.value, () => "disable"];
    await editor.run(MemoryCommands.list);
    assert.equal((await only()).status, "disabled");
    editor.pickAnswers = [(items) => items[0]?.value, () => "enable"];
    await editor.run(MemoryCommands.list);
    const enabled = await only();
    assert.equal(enabled.status, "active");
    assert.equal(enabled.version, 5);
  });

  it("exports the project's memories to a JSON document", async () => {
    editor.pickAnswers = [(items) => items.find((item) => item.value === "project")?.value, (items) => items[1]?.value];
    await editor.run(MemoryCommands.export);
    const exported = JSON.parse(editor.untitled.at(-1)?.text ?? "{}") as MemoryExport;
    assert.equal(exported.protocol_version, "context_memory_export.v1");
    assert.equal(exported.scope, "project");
    assert.equal(exported.scope_id, "shop");
    assert.equal(exported.capability_grant, false);
    assert.deepEqual(exported.items.map((item) => item.title), ["Use pnpm only"]);
  });

  it("keeps it when the person cancels the server's question, deletes it on Delete permanently", async () => {
    editor.pickAnswers = [(items) => items[0]?.value, () => "delete"];
    editor.modalAnswers = [undefined];
    await editor.run(MemoryCommands.list);
    const question = editor.modals.at(-1);
    assert.deepEqual(question?.actions, ["Delete permanently"]);
    assert.match(editor.messages.at(-1)?.text ?? "", /was kept/);
    assert.equal((await only()).status, "active");

    editor.pickAnswers = [(items) => items[0]?.value, () => "delete"];
    editor.modalAnswers = ["Delete permanently"];
    await editor.run(MemoryCommands.list);
    assert.match(editor.messages.at(-1)?.text ?? "", /was deleted permanently/);
    const list = await server.request<MemoryList>(Methods.memoryList, { all: true });
    assert.deepEqual(list.items, []);
  });
});
