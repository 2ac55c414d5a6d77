/**
 * Memory commands: "Add Memory", "List Memories" (quick pick → edit / disable / enable /
 * delete), "Export Memories" (to a JSON document).
 *
 * A memory opens as a document of the `rutter-memory` scheme (see memoryDocument.ts): opening
 * reads it from the server, saving sends the changed fields with the version it was opened
 * at, so an edit made elsewhere in between is refused (the save fails with the server's
 * message) instead of being overwritten. A save refused for secrets (`secret_detected`) asks
 * in a modal dialog whether to store the text with them redacted (`redact_sensitive`); the
 * document then shows the stored text. Delete is confirmed by the server itself
 * (`window/showMessageRequest`, shown as a modal dialog, see app.ts).
 */

import type { DeletedMemory, ErrorInfo, MemoryExport, MemoryList, MemoryRecord } from "./protocol";
import { Methods, typedError } from "./protocol";
import type { Disposable, DocumentStore, PickItem, Ports } from "./ports";
import { type MemoryFields, changesOf, parseMemory, renderMemory, renderNewMemory } from "./memoryDocument";

export const MEMORY_SCHEME = "rutter-memory";
export const MemoryCommands = {
  add: "rutter.addMemory",
  list: "rutter.listMemories",
  export: "rutter.exportMemories",
} as const;

export type Scope = "user" | "project";

/** The answers of the question after a save refused for secrets. */
export const STORE_REDACTED = "Store with the secrets redacted";
export const KEEP_EDITING = "Keep editing";

/** The params of each memory request (one place to align with the server). */
export const MemoryParams = {
  list: (all: boolean) => ({ all }),
  get: (id: string) => ({ id }),
  /** `redact`: store the text with each secret replaced by `[REDACTED:<kind>]`. */
  create: (
    scope: Scope,
    workspaceId: string | undefined,
    fields: { title: string; content: string; references: string[]; retention?: string },
    redact = false,
  ) => ({
    scope,
    ...(scope === "project" ? { workspace_id: workspaceId } : {}),
    title: fields.title,
    content: fields.content,
    references: fields.references,
    ...(fields.retention !== undefined ? { retention: fields.retention } : {}),
    ...(redact ? { redact_sensitive: true } : {}),
  }),
  edit: (id: string, version: number, changes: object, redact = false) => ({
    id,
    version,
    ...changes,
    ...(redact ? { redact_sensitive: true } : {}),
  }),
  setStatus: (id: string, version: number, status: "active" | "disabled") => ({ id, version, status }),
  delete: (id: string, version: number) => ({ id, version }),
  export: (scope: Scope, workspaceId: string | undefined, all: boolean) => ({
    scope,
    ...(scope === "project" ? { workspace_id: workspaceId } : {}),
    all,
  }),
};

type Action = "edit" | "disable" | "enable" | "delete";

/** Where the scope of a record is, in words. */
export function scopeText(record: MemoryRecord): string {
  return record.scope === "project" ? `project ${record.scope_id}` : "user";
}

export function memoryItem(record: MemoryRecord): PickItem<MemoryRecord> {
  const state = [record.status === "disabled" ? "disabled" : undefined, record.expired ? "expired" : undefined]
    .filter((part) => part !== undefined)
    .join(", ");
  const firstLine = record.content.split("\n", 1)[0] ?? "";
  return {
    label: record.title,
    description: `${scopeText(record)} · v${record.version}${state ? ` · ${state}` : ""}`,
    detail: firstLine.length > 120 ? `${firstLine.slice(0, 119)}…` : firstLine,
    value: record,
  };
}

export function actionItems(record: MemoryRecord): PickItem<Action>[] {
  return [
    { label: "Edit", description: "open it; save to store the edit", value: "edit" },
    record.status === "disabled"
      ? { label: "Enable", description: "deliver it again", value: "enable" }
      : { label: "Disable", description: "keep it, but never deliver it", value: "disable" },
    { label: "Delete permanently", description: "cannot be recovered", value: "delete" },
  ];
}

/** Path of a memory's document: `/<id>.md`; new ones `/new/<n>/<scope>[/<workspace>].md`. */
export function memoryPath(id: string): string {
  return `/${id}.md`;
}

/** A refusal for secrets the server can store redacted: in the title or the content (a
 * reference is never stored redacted, so the question would only be refused again). */
export function offersRedaction(error: ErrorInfo): boolean {
  return error.code === "secret_detected" && error.details?.field !== "reference";
}

/** The error a refused save fails with: VS Code shows its message; the document stays dirty. */
function saveFailure(error: ErrorInfo): Error {
  return new Error(error.code === "request_failed" ? error.message : `${error.message} (${error.code})`);
}

interface OpenDocument {
  id?: string;
  version?: number;
  record?: MemoryRecord;
  scope?: Scope;
  workspaceId?: string;
}

export class MemoryController implements Disposable, DocumentStore {
  private readonly documents = new Map<string, OpenDocument>();
  private created = 0;
  private readonly disposables: Disposable[] = [];
  /** Called after the editor created, edited, enabled, disabled or deleted a memory. */
  onDidChange: () => void = () => undefined;

  constructor(
    private readonly ports: Ports,
    /** The workspace of the active file, for project memory. */
    private readonly workspaceId: () => string | undefined,
  ) {
    const { editor } = ports;
    this.disposables.push(
      editor.registerDocumentStore(MEMORY_SCHEME, this),
      editor.registerCommand(MemoryCommands.add, () => this.add()),
      editor.registerCommand(MemoryCommands.list, () => this.list()),
      editor.registerCommand(MemoryCommands.export, () => this.export()),
    );
  }

  private request<R>(method: string, params: unknown): Promise<R> {
    return this.ports.server.request<R>(method, params);
  }

  private fail(what: string, error: unknown): void {
    const info = typedError(error);
    this.ports.editor.showMessage("error", `rutter: ${what}: ${info.message}`);
  }

  /** Ask user or project (project memory belongs to the active file's workspace). */
  private async pickScope(purpose: string): Promise<{ scope: Scope; workspaceId?: string } | undefined> {
    const workspaceId = this.workspaceId();
    const items: PickItem<Scope>[] = [{ label: "User", description: "yours, in every workspace", value: "user" }];
    if (workspaceId !== undefined) {
      items.push({ label: "Project", description: `workspace ${workspaceId}`, value: "project" });
    }
    const scope = await this.ports.editor.pick(items, purpose);
    if (scope === undefined) {
      return undefined;
    }
    return scope === "project" ? { scope, workspaceId } : { scope };
  }

  /** "Add Memory": a new memory document; saving it creates the memory. */
  async add(): Promise<string | undefined> {
    const picked = await this.pickScope("Add a memory to");
    if (picked === undefined) {
      return undefined;
    }
    this.created += 1;
    const path = `/new/${this.created}/${picked.scope}${picked.workspaceId !== undefined ? `/${picked.workspaceId}` : ""}.md`;
    this.documents.set(path, { scope: picked.scope, workspaceId: picked.workspaceId });
    await this.ports.editor.openStoreDocument(MEMORY_SCHEME, path);
    return path;
  }

  /** "List Memories": pick one, then what to do with it. */
  async list(): Promise<void> {
    let list: MemoryList;
    try {
      list = await this.request<MemoryList>(Methods.memoryList, MemoryParams.list(true));
    } catch (error) {
      this.fail("cannot list memories", error);
      return;
    }
    if (list.items.length === 0) {
      this.ports.editor.showMessage("info", 'rutter: no memory yet; add one with "Rutter: Add Memory"');
      return;
    }
    const record = await this.ports.editor.pick(
      list.items.map(memoryItem),
      list.has_more ? "Memories (the most recently updated; more exist)" : "Memories",
    );
    if (record === undefined) {
      return;
    }
    await this.act(record);
  }

  /** What to do with `record`: edit, disable or enable, delete (a pick). */
  async act(record: MemoryRecord): Promise<void> {
    const action = await this.ports.editor.pick(actionItems(record), `${record.title} (${scopeText(record)}, version ${record.version})`);
    switch (action) {
      case "edit":
        await this.ports.editor.openStoreDocument(MEMORY_SCHEME, memoryPath(record.id));
        return;
      case "disable":
      case "enable":
        await this.setStatus(record, action === "enable" ? "active" : "disabled");
        return;
      case "delete":
        await this.delete(record);
        return;
      default:
        return;
    }
  }

  async setStatus(record: MemoryRecord, status: "active" | "disabled"): Promise<MemoryRecord | undefined> {
    try {
      const updated = await this.request<MemoryRecord>(Methods.memorySetStatus, MemoryParams.setStatus(record.id, record.version, status));
      this.ports.editor.showMessage("info", `rutter: "${updated.title}" is ${updated.status === "active" ? "enabled" : "disabled"} (version ${updated.version})`);
      this.onDidChange();
      return updated;
    } catch (error) {
      this.fail(`"${record.title}" was not ${status === "active" ? "enabled" : "disabled"}`, error);
      return undefined;
    }
  }

  /** The server asks for the confirmation (a modal dialog) before it deletes. */
  async delete(record: MemoryRecord): Promise<DeletedMemory | undefined> {
    try {
      const deleted = await this.request<DeletedMemory>(Methods.memoryDelete, MemoryParams.delete(record.id, record.version));
      if (deleted.deleted) {
        this.ports.editor.showMessage("info", `rutter: "${record.title}" was deleted permanently`);
        this.documents.delete(memoryPath(record.id));
        this.onDidChange();
      } else {
        this.ports.editor.showMessage("info", `rutter: "${record.title}" was kept`);
      }
      return deleted;
    } catch (error) {
      this.fail(`"${record.title}" was not deleted`, error);
      return undefined;
    }
  }

  /** "Export Memories": a `context_memory_export.v1` JSON document. */
  async export(): Promise<MemoryExport | undefined> {
    const picked = await this.pickScope("Export the memories of");
    if (picked === undefined) {
      return undefined;
    }
    const all = await this.ports.editor.pick<boolean>(
      [
        { label: "Active only", value: false },
        { label: "All", description: "with disabled and expired ones", value: true },
      ],
      "Which memories",
    );
    if (all === undefined) {
      return undefined;
    }
    try {
      const exported = await this.request<MemoryExport>(Methods.memoryExport, MemoryParams.export(picked.scope, picked.workspaceId, all));
      await this.ports.editor.showUntitled(`${JSON.stringify(exported, null, 2)}\n`, "json");
      return exported;
    } catch (error) {
      this.fail("cannot export memories", error);
      return undefined;
    }
  }

  // -- the documents (DocumentStore of the rutter-memory scheme) -------------------------

  async read(path: string): Promise<string> {
    const known = this.documents.get(path);
    const id = known?.id ?? (path.startsWith("/new/") ? undefined : path.replace(/^\//, "").replace(/\.md$/, ""));
    if (id === undefined) {
      return renderNewMemory(known?.scope ?? "user", known?.workspaceId);
    }
    const record = await this.request<MemoryRecord>(Methods.memoryGet, MemoryParams.get(id));
    // The version this document now shows is the one its next save is checked against.
    this.documents.set(path, { ...known, id: record.id, version: record.version, record });
    return renderMemory(record);
  }

  async write(path: string, text: string): Promise<void> {
    const fields = parseMemory(text);
    const known = this.documents.get(path);
    const creating = known?.id === undefined;
    let record: MemoryRecord | undefined;
    try {
      record = await this.save(path, known, fields, false);
      if (record !== undefined && creating) {
        this.ports.editor.showMessage("info", `rutter: memory "${record.title}" created (${record.id})`);
      }
    } catch (error) {
      const refusal = typedError(error);
      if (!offersRedaction(refusal)) {
        throw saveFailure(refusal);
      }
      record = await this.saveRedacted(path, known, fields, text, refusal);
    }
    if (record !== undefined) {
      this.documents.set(path, { ...known, id: record.id, version: record.version, record });
      this.onDidChange();
    }
  }

  /** Create or edit; undefined when an edit changes nothing (then nothing is sent). */
  private async save(path: string, known: OpenDocument | undefined, fields: MemoryFields, redact: boolean): Promise<MemoryRecord | undefined> {
    if (known?.id === undefined || known.version === undefined || known.record === undefined) {
      if (!path.startsWith("/new/") || known?.scope === undefined) {
        throw new Error("reopen the memory from \"Rutter: List Memories\" to edit it");
      }
      return this.request<MemoryRecord>(Methods.memoryCreate, MemoryParams.create(known.scope, known.workspaceId, fields, redact));
    }
    const changes = changesOf(known.record, fields);
    if (Object.keys(changes).length === 0) {
      return undefined;
    }
    return this.request<MemoryRecord>(Methods.memoryEdit, MemoryParams.edit(known.id, known.version, changes, redact));
  }

  /** After a refusal for secrets: ask, then store the text redacted, or fail the save. */
  private async saveRedacted(
    path: string,
    known: OpenDocument | undefined,
    fields: MemoryFields,
    text: string,
    refusal: ErrorInfo,
  ): Promise<MemoryRecord | undefined> {
    const answer = await this.ports.editor.askModal(
      `rutter: ${refusal.message}`,
      `"${STORE_REDACTED}" stores the text with each secret replaced by [REDACTED:<kind>]; the document then shows what was stored. "${KEEP_EDITING}" stores nothing.`,
      [STORE_REDACTED, KEEP_EDITING],
    );
    if (answer !== STORE_REDACTED) {
      // Only a failed save keeps the text in VS Code (the document stays dirty).
      throw new Error(`not stored: the text holds secrets; remove them, or save again and choose "${STORE_REDACTED}"`);
    }
    let record: MemoryRecord | undefined;
    try {
      record = await this.save(path, known, fields, true);
    } catch (error) {
      // A second refusal (another reason) fails the save; it is not asked again.
      throw saveFailure(typedError(error));
    }
    if (record !== undefined) {
      this.ports.editor.showMessage("info", `rutter: memory "${record.title}" stored with its secrets redacted (${record.id}, version ${record.version})`);
      // The secret must not stay in the editor either: the document shows what was stored.
      this.ports.editor.replaceStoreDocument(MEMORY_SCHEME, path, text, renderMemory(record));
    }
    return record;
  }

  dispose(): void {
    for (const disposable of this.disposables.splice(0)) {
      disposable.dispose();
    }
  }
}
