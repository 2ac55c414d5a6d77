import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { startRutter } from "../../src/app";
import { MEMORY_SCHEME } from "../../src/memory";
import { MemoryViewCommands, memoryNode, memoryNodes } from "../../src/memoryView";
import type { MemoryRecord } from "../../src/protocol";
import { Methods } from "../../src/protocol";
import { FakeEditor, FakeServer, outline, settle } from "../fakes";
import { memory } from "../fixtures";

describe("memory rows", () => {
  it("show the title, the scope, the version and what keeps it from being delivered", () => {
    assert.deepEqual(
      outline(
        memoryNodes({
          items: [
            memory(),
            memory({ id: "mem_02", title: "Tabs", scope: "user", scope_id: "", version: 1, status: "disabled" }),
            memory({ id: "mem_03", title: "Old", expired: true }),
          ],
          has_more: true,
        }),
      ),
      [
        "Deploy checklist — project shop · v3",
        "Tabs — user · v1 · disabled",
        "Old — project shop · v3 · expired",
        'More memories exist — see "Rutter: List Memories"',
      ],
    );
  });

  it("open the memory on click, and hold its first lines and ID in the tooltip", () => {
    const long = memory({ content: Array.from({ length: 12 }, (_, i) => `line ${i + 1}`).join("\n") });
    const node = memoryNode(long);
    assert.deepEqual(node.command, { command: MemoryViewCommands.open, title: "Open", arguments: ["mem_01"] });
    assert.match(node.tooltip ?? "", /^line 1\n[^]*line 8\n…\n\nmem_01 \(project shop, version 3\)$/);
    assert.doesNotMatch(node.tooltip ?? "", /line 9/);
    assert.equal(node.contextValue, "memory.active");
    assert.equal(memoryNode(memory({ status: "disabled" })).contextValue, "memory.disabled");
  });
});

describe("the memory view", () => {
  function setup(workspace: string | undefined) {
    const editor = new FakeEditor();
    let items: MemoryRecord[] = [memory()];
    const server = new FakeServer((method, params) => {
      switch (method) {
        case Methods.effectiveInstructions:
          if (workspace === undefined) {
            throw Object.assign(new Error("x"), { data: { code: "not_registered", message: "not served" } });
          }
          return {
            protocol_version: "project_instruction_snapshot.v1", workspace_id: workspace, target_path: "a.go",
            fingerprint: "f".repeat(64), loaded_at: "", sources: [], ignored: [], conflicts: [],
          };
        case Methods.runs:
          return { runs: [] };
        case Methods.memoryList:
          return { items, has_more: false };
        case Methods.memorySetStatus: {
          const p = params as { status: string };
          items = [{ ...memory(), status: p.status, version: 4 }];
          return items[0];
        }
        default:
          throw new Error(`unexpected ${method}`);
      }
    });
    const rutter = startRutter({ editor, server });
    editor.setActiveFile({ uri: "file:///w/a.go", path: "/w/a.go", folder: "/w" });
    return { editor, server, rutter };
  }

  function listed(server: FakeServer): unknown[] {
    return server.sent.filter((each) => each.method === Methods.memoryList).map((each) => each.params);
  }

  it("lists the user and project memory of the shown file's workspace, and opens a row", async () => {
    const { editor, server } = setup("shop");
    await settle();
    assert.deepEqual(listed(server), [{ all: true, workspace_id: "shop" }]);
    assert.deepEqual(outline(editor.tree("rutter.memory")), ["Deploy checklist — project shop · v3"]);
    assert.equal(editor.viewDescriptions.get("rutter.memory"), "user + shop");
    await editor.run(MemoryViewCommands.open, "mem_01");
    assert.deepEqual(editor.openedStore, [{ scheme: MEMORY_SCHEME, path: "/mem_01.md" }]);
  });

  it("lists only user memory outside a served workspace, and asks again on refresh and start", async () => {
    const { editor, server } = setup(undefined);
    server.fireStarted();
    await settle();
    assert.deepEqual(listed(server).at(-1), { all: true, scope: "user" });
    assert.equal(editor.viewDescriptions.get("rutter.memory"), "user");
    const count = listed(server).length;
    await editor.run(MemoryViewCommands.refresh);
    assert.equal(listed(server).length, count + 1);
  });

  it("acts on a row from its context menu, and shows the change", async () => {
    const { editor, server } = setup("shop");
    await settle();
    editor.pickAnswers = [() => "disable"];
    await editor.run(MemoryViewCommands.actions, editor.tree("rutter.memory")[0]);
    await settle();
    assert.deepEqual(editor.picks[0]?.items.map((item) => item.label), ["Edit", "Disable", "Delete permanently"]);
    assert.equal(server.sent.filter((each) => each.method === Methods.memorySetStatus).length, 1);
    assert.deepEqual(outline(editor.tree("rutter.memory")), ["Deploy checklist — project shop · v4 · disabled"]);
  });

  it("shows a failed list as one error row", async () => {
    const { editor, server } = setup("shop");
    server.answer = () => {
      throw Object.assign(new Error("x"), { data: { code: "store_busy", message: "the store is busy" } });
    };
    await editor.run(MemoryViewCommands.refresh);
    assert.deepEqual(outline(editor.tree("rutter.memory")), ["Memory cannot be listed — store_busy"]);
  });
});
