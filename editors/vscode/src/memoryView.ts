/**
 * The "Memory" view: the memories delivered with the file the Instructions view shows, your
 * user memory and its workspace's project memory (`rutter/memory/list` with that
 * `workspace_id`, disabled and expired ones included and marked), most recently updated first
 * as the server lists them. Without a served file: your user memory only.
 *
 * Each row is the memory's title, described by its scope (`user` or `project <workspace>`),
 * its version and `disabled` / `expired` when it is; the tooltip holds its text's first lines
 * and its ID. A click opens it as an editable document (memory.ts); the context menu's
 * "Memory Actions…" offers edit, disable or enable, and delete. The view asks again after
 * each server start, when the shown file moves to another workspace, after every change the
 * editor makes, and on its refresh button.
 */

import type { MemoryList, MemoryRecord } from "./protocol";
import { Methods, typedError } from "./protocol";
import type { Disposable, Ports, ViewNode } from "./ports";
import { MEMORY_SCHEME, type MemoryController, memoryPath, scopeText } from "./memory";

export const MemoryViewCommands = {
  refresh: "rutter.refreshMemory",
  open: "rutter.openMemory",
  actions: "rutter.memoryActions",
} as const;

const TOOLTIP_LINES = 8;

export function memoryNode(record: MemoryRecord): ViewNode {
  const marks = [record.status === "disabled" ? "disabled" : undefined, record.expired ? "expired" : undefined].filter(
    (mark) => mark !== undefined,
  );
  const lines = record.content.split("\n");
  const shown = lines.slice(0, TOOLTIP_LINES).join("\n");
  return {
    id: `memory/${record.id}`,
    label: record.title,
    description: [scopeText(record), `v${record.version}`, ...marks].join(" · "),
    tooltip: `${shown}${lines.length > TOOLTIP_LINES ? "\n…" : ""}\n\n${record.id} (${scopeText(record)}, version ${record.version}${marks.length > 0 ? `, ${marks.join(", ")}` : ""})`,
    icon: record.status === "disabled" || record.expired ? "circle-slash" : record.scope === "project" ? "repo" : "account",
    contextValue: record.status === "disabled" ? "memory.disabled" : "memory.active",
    command: { command: MemoryViewCommands.open, title: "Open", arguments: [record.id] },
  };
}

export function memoryNodes(list: MemoryList): ViewNode[] {
  const nodes = list.items.map(memoryNode);
  if (list.has_more) {
    nodes.push({
      id: "memory/more",
      label: "More memories exist",
      description: 'see "Rutter: List Memories"',
      icon: "ellipsis",
    });
  }
  return nodes;
}

export class MemoryView implements Disposable {
  private items: MemoryRecord[] = [];
  private shownWorkspace: string | undefined;
  private asked = 0;
  private readonly disposables: Disposable[] = [];

  constructor(
    private readonly ports: Ports,
    private readonly memory: MemoryController,
  ) {
    const { editor, server } = ports;
    memory.onDidChange = () => void this.refresh();
    this.disposables.push(
      server.onDidStart(() => void this.refresh()),
      editor.registerCommand(MemoryViewCommands.refresh, () => this.refresh()),
      editor.registerCommand(MemoryViewCommands.open, (id) =>
        typeof id === "string" ? editor.openStoreDocument(MEMORY_SCHEME, memoryPath(id)) : undefined,
      ),
      editor.registerCommand(MemoryViewCommands.actions, (node) => this.actions(node)),
    );
  }

  /** The memories the view shows now (for tests). */
  get current(): readonly MemoryRecord[] {
    return this.items;
  }

  /** The Instructions view shows a file of `workspace` (undefined: none served). */
  workspaceShown(workspace: string | undefined): void {
    if (workspace !== this.shownWorkspace) {
      this.shownWorkspace = workspace;
      void this.refresh();
    }
  }

  async refresh(): Promise<void> {
    const asked = ++this.asked;
    const params = { all: true, ...(this.shownWorkspace !== undefined ? { workspace_id: this.shownWorkspace } : { scope: "user" }) };
    let nodes: ViewNode[];
    let items: MemoryRecord[] = [];
    try {
      const list = await this.ports.server.request<MemoryList>(Methods.memoryList, params);
      items = list.items;
      nodes = memoryNodes(list);
    } catch (error) {
      const info = typedError(error);
      nodes = [{ id: "memory/error", label: "Memory cannot be listed", description: info.code, tooltip: info.message, icon: "error" }];
    }
    if (asked === this.asked) {
      this.items = items;
      this.ports.editor.setTree("rutter.memory", nodes);
      this.ports.editor.setViewDescription("rutter.memory", this.shownWorkspace === undefined ? "user" : `user + ${this.shownWorkspace}`);
    }
  }

  /** "Memory Actions…" of a row: edit, disable or enable, delete. */
  async actions(node: unknown): Promise<void> {
    const id = typeof node === "object" && node !== null ? (node as { id?: unknown }).id : undefined;
    const record = typeof id === "string" ? this.items.find((item) => `memory/${item.id}` === id) : undefined;
    if (record === undefined) {
      return;
    }
    await this.memory.act(record);
  }

  dispose(): void {
    for (const disposable of this.disposables.splice(0)) {
      disposable.dispose();
    }
  }
}
