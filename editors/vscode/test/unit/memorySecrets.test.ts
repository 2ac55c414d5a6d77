import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { startRutter } from "../../src/app";
import { KEEP_EDITING, MEMORY_SCHEME, MemoryCommands, STORE_REDACTED, offersRedaction } from "../../src/memory";
import { parseMemory, renderMemory } from "../../src/memoryDocument";
import type { DocumentStore } from "../../src/ports";
import type { MemoryRecord } from "../../src/protocol";
import { Methods } from "../../src/protocol";
import { FakeEditor, FakeServer, settle } from "../fakes";
import { memory } from "../fixtures";

const TOKEN = `ghp_${"a1B2c3D4e5".repeat(3)}F6g7H8`;
const REFUSAL = "secrets found (github_token x1 in the content); memory never keeps a secret";

function refused(code: string, message: string, details?: object): Error {
  return Object.assign(new Error(message), { data: { code, message, ...(details ? { details } : {}) } });
}

/** A server that refuses a token in the content unless asked to redact it; `second`: how a
 * redacted save is refused instead (another reason). */
function setup(second?: Error) {
  const editor = new FakeEditor();
  let current: MemoryRecord = memory();
  const store = (params: Record<string, unknown>, record: MemoryRecord): MemoryRecord => {
    const content = (params.content as string | undefined) ?? record.content;
    if (content.includes(TOKEN)) {
      if (params.redact_sensitive !== true) {
        throw refused("secret_detected", REFUSAL, { findings: [{ field: "content", kind: "github_token", count: 1 }] });
      }
      if (second !== undefined) {
        throw second;
      }
      return { ...record, ...(params.title !== undefined ? { title: params.title as string } : {}), content: content.replaceAll(TOKEN, "[REDACTED:github_token]"), redacted: true };
    }
    return { ...record, ...(params.title !== undefined ? { title: params.title as string } : {}), content };
  };
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
      case Methods.memoryGet:
        return current;
      case Methods.memoryCreate:
        return store(p, memory({ id: "mem_new", scope: "user", scope_id: "local-user", references: [], version: 1 }));
      case Methods.memoryEdit:
        current = store(p, { ...current, version: current.version + 1 });
        return current;
      default:
        throw new Error(`unexpected ${method}`);
    }
  });
  startRutter({ editor, server });
  editor.setActiveFile({ uri: "file:///w/a.go", path: "/w/a.go", folder: "/w" });
  const documents = editor.stores.get(MEMORY_SCHEME) as DocumentStore;
  return { editor, server, documents };
}

function sent(server: FakeServer, method: string): unknown[] {
  return server.sent.filter((each) => each.method === method).map((each) => each.params);
}

async function newDocument(editor: FakeEditor, documents: DocumentStore): Promise<{ path: string; text: string }> {
  await settle();
  editor.pickAnswers = [(items) => items[0]?.value];
  const path = (await editor.run(MemoryCommands.add)) as string;
  const template = await documents.read(path);
  return { path, text: template.replace("title: ", "title: Deploy") + `use ${TOKEN} to push\n` };
}

describe("a memory save refused for secrets", () => {
  it("asks, and on Store with the secrets redacted resends with redact_sensitive; the document shows the stored text", async () => {
    const { editor, server, documents } = setup();
    const { path, text } = await newDocument(editor, documents);
    editor.modalAnswers = [STORE_REDACTED];
    await documents.write(path, text); // the save succeeds

    assert.deepEqual(editor.modals, [{
      message: `rutter: ${REFUSAL}`,
      detail: `"${STORE_REDACTED}" stores the text with each secret replaced by [REDACTED:<kind>]; the document then shows what was stored. "${KEEP_EDITING}" stores nothing.`,
      actions: [STORE_REDACTED, KEEP_EDITING],
    }]);
    const base = { scope: "user", title: "Deploy", content: `use ${TOKEN} to push`, references: [] };
    assert.deepEqual(sent(server, Methods.memoryCreate), [base, { ...base, redact_sensitive: true }]);

    // Once the save ended, the document is replaced by what was stored: no token left.
    assert.equal(editor.replaced.length, 1);
    const replaced = editor.replaced[0];
    assert.equal(replaced?.scheme, MEMORY_SCHEME);
    assert.equal(replaced?.path, path);
    assert.equal(replaced?.saved, text);
    assert.equal(parseMemory(replaced.text).content, "use [REDACTED:github_token] to push");
    assert.match(replaced.text, /stored redacted/);
    assert.ok(!replaced.text.includes(TOKEN));
    assert.match(editor.messages.at(-1)?.text ?? "", /memory "Deploy" stored with its secrets redacted \(mem_new, version 1\)/);
    assert.deepEqual(editor.messages.filter((message) => message.kind === "error"), []);

    // Saving the replaced text (as the editor does) sends nothing: it is what is stored.
    await documents.write(path, replaced.text);
    assert.equal(sent(server, Methods.memoryCreate).length, 2);
    assert.deepEqual(sent(server, Methods.memoryEdit), []);
  });

  it("redacts an edit the same way, with the version it was opened at", async () => {
    const { editor, server, documents } = setup();
    const text = await documents.read("/mem_01.md");
    editor.modalAnswers = [STORE_REDACTED];
    await documents.write("/mem_01.md", text.replace("2. push", `2. push with ${TOKEN}`));
    assert.deepEqual(sent(server, Methods.memoryEdit), [
      { id: "mem_01", version: 3, content: `1. tag\n2. push with ${TOKEN}\n` },
      { id: "mem_01", version: 3, content: `1. tag\n2. push with ${TOKEN}\n`, redact_sensitive: true },
    ]);
    assert.equal(editor.replaced[0]?.text, renderMemory(memory({ version: 4, content: "1. tag\n2. push with [REDACTED:github_token]\n", redacted: true })));
    // The next save is checked against the version stored redacted.
    await documents.write("/mem_01.md", (editor.replaced[0]?.text ?? "").replace("title: Deploy checklist", "title: Release"));
    assert.deepEqual(sent(server, Methods.memoryEdit).at(-1), { id: "mem_01", version: 4, title: "Release" });
  });

  for (const answer of [KEEP_EDITING, undefined]) {
    it(`stores nothing on ${answer ?? "a dismissed dialog"}: the save fails calmly and the text stays`, async () => {
      const { editor, server, documents } = setup();
      const { path, text } = await newDocument(editor, documents);
      editor.modalAnswers = [answer];
      await assert.rejects(
        documents.write(path, text),
        (error: Error) => error.message === `not stored: the text holds secrets; remove them, or save again and choose "${STORE_REDACTED}"`,
      );
      assert.equal(sent(server, Methods.memoryCreate).length, 1);
      assert.deepEqual(editor.replaced, []);
      assert.deepEqual(editor.messages.filter((message) => message.kind !== "info"), []);

      // The document is still a new one: saving it without the token creates the memory.
      await documents.write(path, text.replace(TOKEN, "the deploy key"));
      assert.deepEqual(sent(server, Methods.memoryCreate).at(-1), { scope: "user", title: "Deploy", content: "use the deploy key to push", references: [] });
      assert.equal(editor.modals.length, 1);
    });
  }

  it("shows a second refusal of another kind as the save's error, without asking again", async () => {
    const conflict = refused("conflict", "memory mem_01 is at version 4, not 3: it changed since you read it");
    const { editor, server, documents } = setup(conflict);
    const text = await documents.read("/mem_01.md");
    editor.modalAnswers = [STORE_REDACTED, STORE_REDACTED];
    await assert.rejects(
      documents.write("/mem_01.md", text.replace("2. push", TOKEN)),
      /^Error: memory mem_01 is at version 4, not 3: it changed since you read it \(conflict\)$/,
    );
    assert.equal(editor.modals.length, 1);
    assert.equal(sent(server, Methods.memoryEdit).length, 2);
    assert.deepEqual(editor.replaced, []);
  });

  it("does not offer redaction for a secret in a reference (references are never stored redacted)", () => {
    assert.equal(offersRedaction({ code: "secret_detected", message: "m", details: { findings: [] } }), true);
    assert.equal(offersRedaction({ code: "secret_detected", message: "m", details: { field: "reference", kinds: ["github_token"] } }), false);
    assert.equal(offersRedaction({ code: "sensitive_source", message: "m" }), false);
  });
});
