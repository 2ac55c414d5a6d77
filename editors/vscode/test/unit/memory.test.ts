import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { startRutter } from "../../src/app";
import { MEMORY_SCHEME, MemoryCommands, memoryItem } from "../../src/memory";
import { renderMemory } from "../../src/memoryDocument";
import { SHOW_MESSAGE_REQUEST } from "../../src/messages";
import type { MemoryRecord } from "../../src/protocol";
import { Methods } from "../../src/protocol";
import { FakeEditor, FakeServer, settle } from "../fakes";
import { memory } from "../fixtures";

function setup(records: MemoryRecord[] = [memory()]) {
  const editor = new FakeEditor();
  let current = [...records];
  const server = new FakeServer((method, params) => {
    const p = params as Record<string, unknown>;
    switch (method) {
      case Methods.effectiveInstructions:
        return {
          protocol_version: "project_instruction_snapshot.v1", workspace_id: "shop", target_path: "a.go",
          fingerprint: "f".repeat(64), loaded_at: "", sources: [], ignored: [], conflicts: [],
        };
      case Methods.runs:
        return { runs: [] };
      case Methods.memoryList:
        return { items: current, has_more: false };
      case Methods.memoryGet:
        return current.find((record) => record.id === p.id);
      case Methods.memoryCreate:
        return memory({ id: "mem_new", title: p.title as string, content: p.content as string, version: 1, scope: p.scope as string });
      case Methods.memoryEdit: {
        const record = current.find((each) => each.id === p.id);
        if (record === undefined || record.version !== p.version) {
          throw Object.assign(new Error("stale"), {
            data: { code: "conflict", message: `memory ${String(p.id)} is at version ${record?.version ?? "?"}, not ${String(p.version)}: it changed since you read it` },
          });
        }
        const updated = { ...record, ...(p.title !== undefined ? { title: p.title as string } : {}), version: record.version + 1 };
        current = current.map((each) => (each.id === record.id ? updated : each));
        return updated;
      }
      case Methods.memorySetStatus:
        return { ...memory(), status: p.status as string, version: 4 };
      case Methods.memoryDelete:
        return { id: p.id, version: p.version, deleted: true, recoverable: false };
      case Methods.memoryExport:
        return { protocol_version: "context_memory_export.v1", exported_at: "now", scope: p.scope, scope_id: "shop", items: current, capability_grant: false };
      default:
        throw new Error(`unexpected ${method}`);
    }
  });
  const rutter = startRutter({ editor, server });
  editor.setActiveFile({ uri: "file:///w/a.go", path: "/w/a.go", folder: "/w" });
  return { editor, server, rutter, bump: (record: MemoryRecord) => (current = current.map((each) => (each.id === record.id ? record : each))) };
}

function sent(server: FakeServer, method: string): unknown[] {
  return server.sent.filter((each) => each.method === method).map((each) => each.params);
}

describe("memory commands", () => {
  it("lists memories in a quick pick and opens the chosen one for editing", async () => {
    const { editor, server } = setup();
    await settle();
    editor.pickAnswers = [(items) => items[0]?.value, () => "edit"];
    await editor.run(MemoryCommands.list);
    // The Memory view asked for the shown workspace's memories; the command for every one.
    assert.deepEqual(sent(server, Methods.memoryList).at(-1), { all: true });
    assert.equal(editor.picks[0]?.items[0]?.label, "Deploy checklist");
    assert.equal(editor.picks[0]?.items[0]?.description, "project shop · v3");
    assert.deepEqual(editor.picks[1]?.items.map((item) => item.label), ["Edit", "Disable", "Delete permanently"]);
    assert.deepEqual(editor.openedStore, [{ scheme: MEMORY_SCHEME, path: "/mem_01.md" }]);
  });

  it("saves an edit with the version it was opened at, and refuses a stale one", async () => {
    const { editor, server, bump } = setup();
    const store = editor.stores.get(MEMORY_SCHEME);
    assert.ok(store);
    const text = await store.read("/mem_01.md");
    assert.equal(text, renderMemory(memory()));
    await store.write("/mem_01.md", text.replace("title: Deploy checklist", "title: Release checklist"));
    assert.deepEqual(sent(server, Methods.memoryEdit), [{ id: "mem_01", version: 3, title: "Release checklist" }]);

    // The document now stands for version 4; someone else makes version 5 meanwhile.
    bump(memory({ title: "Release checklist", version: 5 }));
    await assert.rejects(
      store.write("/mem_01.md", text.replace("title: Deploy checklist", "title: Mine")),
      /memory mem_01 is at version 5, not 4: it changed since you read it \(conflict\)/,
    );
  });

  it("does not send an unchanged document", async () => {
    const { editor, server } = setup();
    const store = editor.stores.get(MEMORY_SCHEME);
    const text = (await store?.read("/mem_01.md")) ?? "";
    await store?.write("/mem_01.md", text);
    assert.deepEqual(sent(server, Methods.memoryEdit), []);
  });

  it("adds a memory: pick the scope, save the new document to create it, later saves edit it", async () => {
    const { editor, server } = setup();
    await settle();
    editor.pickAnswers = [(items) => items.find((item) => item.value === "project")?.value];
    const path = (await editor.run(MemoryCommands.add)) as string;
    assert.deepEqual(editor.picks[0]?.items.map((item) => item.label), ["User", "Project"]);
    const store = editor.stores.get(MEMORY_SCHEME);
    const template = (await store?.read(path)) ?? "";
    await store?.write(path, template.replace("title: ", "title: Use pnpm") + "never npm\n");
    assert.deepEqual(sent(server, Methods.memoryCreate), [
      { scope: "project", workspace_id: "shop", title: "Use pnpm", content: "never npm", references: [] },
    ]);
    assert.match(editor.messages.at(-1)?.text ?? "", /memory "Use pnpm" created \(mem_new\)/);
  });

  it("disables and enables with the version", async () => {
    const { editor, server } = setup([memory({ status: "disabled" })]);
    editor.pickAnswers = [(items) => items[0]?.value, () => "enable"];
    await editor.run(MemoryCommands.list);
    assert.equal(editor.picks[1]?.items[1]?.label, "Enable");
    assert.deepEqual(sent(server, Methods.memorySetStatus), [{ id: "mem_01", version: 3, status: "active" }]);
  });

  it("deletes with the version (the server asks first)", async () => {
    const { editor, server } = setup();
    editor.pickAnswers = [(items) => items[0]?.value, () => "delete"];
    await editor.run(MemoryCommands.list);
    assert.deepEqual(sent(server, Methods.memoryDelete), [{ id: "mem_01", version: 3 }]);
    assert.match(editor.messages.at(-1)?.text ?? "", /"Deploy checklist" was deleted permanently/);
  });

  it("exports to a JSON document", async () => {
    const { editor, server } = setup();
    await settle();
    editor.pickAnswers = [(items) => items[0]?.value, (items) => items[1]?.value];
    await editor.run(MemoryCommands.export);
    assert.deepEqual(sent(server, Methods.memoryExport), [{ scope: "user", all: true }]);
    assert.equal(editor.untitled[0]?.language, "json");
    const exported = JSON.parse(editor.untitled[0]?.text ?? "{}") as { protocol_version: string; capability_grant: boolean };
    assert.equal(exported.protocol_version, "context_memory_export.v1");
    assert.equal(exported.capability_grant, false);
  });

  it("marks disabled and expired memories in the list", () => {
    assert.equal(memoryItem(memory({ status: "disabled", expired: true, scope: "user", scope_id: "local-user" })).description, "user · v3 · disabled, expired");
  });
});

describe("the server's questions", () => {
  it("are asked in a modal dialog, without a second Cancel", async () => {
    const { editor, server } = setup();
    editor.modalAnswers = ["Delete permanently", undefined];
    const params = { type: 2, message: 'Delete memory "Deploy checklist" permanently?', actions: [{ title: "Delete permanently" }, { title: "Cancel" }] };
    assert.deepEqual(await server.serverRequest(SHOW_MESSAGE_REQUEST, params), { title: "Delete permanently" });
    assert.deepEqual(editor.modals[0], { message: 'Delete memory "Deploy checklist" permanently?', detail: "", actions: ["Delete permanently"] });
    assert.equal(await server.serverRequest(SHOW_MESSAGE_REQUEST, params), null);
  });
});
