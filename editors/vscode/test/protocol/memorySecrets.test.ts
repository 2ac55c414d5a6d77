/**
 * A memory holding a secret, saved through the extension's document store against the real
 * server: the server refuses it (`secret_detected`); "Keep editing" stores nothing; "Store
 * with the secrets redacted" resends with `redact_sensitive` and the document is replaced by
 * the stored text, which holds `[REDACTED:github_token]` and no token.
 */

import assert from "node:assert/strict";
import { randomInt } from "node:crypto";
import { after, before, describe, it } from "node:test";

import { KEEP_EDITING, MemoryCommands, STORE_REDACTED } from "../../src/memory";
import { parseMemory } from "../../src/memoryDocument";
import type { DocumentStore } from "../../src/ports";
import type { MemoryList, MemoryRecord } from "../../src/protocol";
import { Methods, typedError } from "../../src/protocol";
import { FakeEditor } from "../fakes";
import { type MemoryWorkspace, RealServer, startMemoryWorkspace, stopMemoryWorkspace } from "./harness";

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** A GitHub token of the valid shape, fresh for each run (never a real credential). */
function githubToken(): string {
  return `ghp_${Array.from({ length: 36 }, () => ALPHABET[randomInt(ALPHABET.length)]).join("")}`;
}

describe("a memory holding a secret, against the real server", () => {
  let server: RealServer;
  let editor: FakeEditor;
  let store: DocumentStore;
  const token = githubToken();

  async function memories(): Promise<MemoryRecord[]> {
    return (await server.request<MemoryList>(Methods.memoryList, { all: true })).items;
  }

  async function newDocument(): Promise<{ documentPath: string; text: string }> {
    editor.pickAnswers = [(items) => items.find((item) => item.value === "project")?.value];
    const documentPath = (await editor.run(MemoryCommands.add)) as string;
    const template = await store.read(documentPath);
    return { documentPath, text: template.replace("title: ", "title: Push access") + `push with ${token}\n` };
  }

  let workspace: MemoryWorkspace;

  before(async () => {
    workspace = await startMemoryWorkspace();
    ({ server, editor, store } = workspace);
  });

  after(async () => {
    await stopMemoryWorkspace(workspace);
  });

  it("is refused with secret_detected, naming the kind", async () => {
    const params = { scope: "user", title: "Push access", content: `push with ${token}` };
    const refusal = await server.request(Methods.memoryCreate, params).then(
      () => assert.fail("a token was stored"),
      (error: unknown) => typedError(error),
    );
    assert.equal(refusal.code, "secret_detected");
    assert.match(refusal.message, /github_token/);
    assert.ok(!refusal.message.includes(token));
    assert.deepEqual(await memories(), []);
  });

  it("stores nothing when the person keeps editing", async () => {
    const { documentPath, text } = await newDocument();
    editor.modalAnswers = [KEEP_EDITING];
    await assert.rejects(store.write(documentPath, text), /^Error: not stored: the text holds secrets/);
    assert.match(editor.modals.at(-1)?.message ?? "", /^rutter: secrets found \(github_token x1 in the content\)/);
    assert.deepEqual(editor.modals.at(-1)?.actions, [STORE_REDACTED, KEEP_EDITING]);
    assert.deepEqual(editor.replaced, []);
    assert.deepEqual(await memories(), []);
  });

  it("stores the text redacted when asked, and the document shows what was stored", async () => {
    const { documentPath, text } = await newDocument();
    editor.modalAnswers = [STORE_REDACTED];
    await store.write(documentPath, text);

    const stored = await memories();
    assert.equal(stored.length, 1);
    const record = stored[0] as MemoryRecord;
    assert.equal(record.content, "push with [REDACTED:github_token]");
    assert.equal(record.redacted, true);
    assert.equal(record.scope_id, "shop");
    assert.ok(!JSON.stringify(stored).includes(token));

    const replaced = editor.replaced.at(-1);
    assert.equal(replaced?.path, documentPath);
    assert.equal(replaced.saved, text);
    assert.equal(parseMemory(replaced.text).content, "push with [REDACTED:github_token]");
    assert.ok(!replaced.text.includes(token));
    // Saving the replaced document stores nothing new, and it reads back the same.
    await store.write(documentPath, replaced.text);
    assert.equal((await memories())[0]?.version, 1);
    assert.equal(await store.read(documentPath), replaced.text);
  });

  it("redacts an edit the same way", async () => {
    const [record] = await memories();
    assert.ok(record);
    const documentPath = `/${record.id}.md`;
    const text = await store.read(documentPath);
    editor.modalAnswers = [STORE_REDACTED];
    await store.write(documentPath, text.replace("title: Push access", `title: Push access ${token}`));
    const [edited] = await memories();
    assert.equal(edited?.version, 2);
    assert.equal(edited.title, "Push access [REDACTED:github_token]");
    assert.ok(!JSON.stringify(edited).includes(token));
    assert.equal(parseMemory(editor.replaced.at(-1)?.text ?? "").title, "Push access [REDACTED:github_token]");
  });
});
