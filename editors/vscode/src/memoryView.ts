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
 *
 * With a served workspace, a "Pending Experience" section comes first: its experience
 * candidates (`rutter/memory/candidates`), each with its completion record, source note version
 * and references; expanding one shows the exact text it would save. Its context menu offers
 * "Confirm and Save to Project" (`rutter/memory/confirmCandidate` with the version, fingerprint
 * and note version shown, and `confirm: true`: the person's click is the confirmation) and
 * "Ignore". The view's badge counts the pending candidates. Nothing is saved otherwise.
 */

import type { CandidateList, ConfirmedCandidate, MemoryCandidate, MemoryList, MemoryRecord } from "./protocol";
import { Methods, typedError } from "./protocol";
import type { Disposable, Ports, ViewNode } from "./ports";
import { MEMORY_SCHEME, type MemoryController, STORE_REDACTED, memoryPath, scopeText } from "./memory";

export const MemoryViewCommands = {
  refresh: "rutter.refreshMemory",
  open: "rutter.openMemory",
  actions: "rutter.memoryActions",
  confirmCandidate: "rutter.confirmCandidate",
  ignoreCandidate: "rutter.ignoreCandidate",
} as const;

/** The params of each candidate request (one place to align with the server). */
export const CandidateParams = {
  list: (workspaceId: string) => ({ workspace_id: workspaceId }),
  confirm: (candidate: MemoryCandidate, redact = false) => ({
    id: candidate.candidate_id,
    version: candidate.version,
    fingerprint: candidate.fingerprint,
    source_version: candidate.source.note_version,
    confirm: true,
    ...(redact ? { redact_sensitive: true } : {}),
  }),
  ignore: (candidate: MemoryCandidate) => ({ id: candidate.candidate_id, version: candidate.version }),
};

const COMPLETION_TEXT: Record<string, string> = {
  run_completed: "run completed",
  reply_completed: "agent reply ended",
  delivery_checkpoint: "delivery checkpoint",
  delivery_report: "delivery report passed",
};

function detailNode(id: string, label: string, icon?: string): ViewNode {
  return { id, label, ...(icon !== undefined ? { icon } : {}) };
}

/** One candidate: its title, what completed, its note version; expanded: the exact text, its
 * references, completion record and source. */
export function candidateNode(candidate: MemoryCandidate): ViewNode {
  const id = `candidate/${candidate.candidate_id}`;
  const completion = COMPLETION_TEXT[candidate.completion.kind] ?? candidate.completion.kind;
  const source = candidate.source;
  const textLines = (candidate.content ?? "").split("\n").map((line, index) => detailNode(`${id}/text/${index}`, line === "" ? " " : line));
  const references = candidate.references.map((reference, index) => detailNode(`${id}/ref/${index}`, reference, "link"));
  return {
    id,
    label: candidate.title ?? candidate.candidate_id,
    description: [completion, `note v${source.note_version}`, ...(candidate.redacted ? ["redacted"] : [])].join(" · "),
    tooltip: `${candidate.confidence_note}\n\n${candidate.candidate_id}: note ${source.note_id} version ${source.note_version}, run ${source.run_id ?? "-"}, ${candidate.completion.kind} at ${candidate.completion.at}`,
    icon: "lightbulb",
    contextValue: "candidate.pending",
    children: [
      ...textLines,
      { id: `${id}/refs`, label: "References", description: String(candidate.references.length), icon: "references", children: references },
      detailNode(`${id}/completion`, `${completion} at ${candidate.completion.at}`, "pass"),
      detailNode(`${id}/source`, `run ${source.run_id ?? "-"} · note ${source.note_id} v${source.note_version}`, "note"),
      detailNode(`${id}/confidence`, candidate.confidence_note, "info"),
    ],
  };
}

/** The "Pending Experience" section (none when nothing waits). */
export function candidateSection(list: CandidateList): ViewNode[] {
  if (list.items.length === 0) {
    return [];
  }
  return [
    {
      id: "candidates",
      label: "Pending Experience",
      description: `${list.items.length}${list.truncated ? "+" : ""} to review`,
      tooltip: "What finished work recorded as decisions and summaries: nothing is saved to project memory until you confirm it.",
      icon: "lightbulb",
      expanded: true,
      children: list.items.map(candidateNode),
    },
  ];
}

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
  private candidates: MemoryCandidate[] = [];
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
      editor.registerCommand(MemoryViewCommands.confirmCandidate, (node) => this.confirmCandidate(node)),
      editor.registerCommand(MemoryViewCommands.ignoreCandidate, (node) => this.ignoreCandidate(node)),
    );
  }

  /** The candidates the view shows now (for tests). */
  get pending(): readonly MemoryCandidate[] {
    return this.candidates;
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
    const candidates = await this.listCandidates();
    if (asked === this.asked) {
      this.items = items;
      this.candidates = candidates?.items ?? [];
      nodes = [...(candidates === undefined ? [] : candidateSection(candidates)), ...nodes];
      const count = this.candidates.length;
      this.ports.editor.setViewBadge("rutter.memory", count, `${count} experience candidate${count === 1 ? "" : "s"} to review`);
      this.ports.editor.setTree("rutter.memory", nodes);
      this.ports.editor.setViewDescription("rutter.memory", this.shownWorkspace === undefined ? "user" : `user + ${this.shownWorkspace}`);
    }
  }

  /** The shown workspace's candidates; undefined without one or when they cannot be listed
   * (the memories are shown all the same). */
  private async listCandidates(): Promise<CandidateList | undefined> {
    if (this.shownWorkspace === undefined) {
      return undefined;
    }
    try {
      const list = await this.ports.server.request<CandidateList | undefined>(Methods.memoryCandidates, CandidateParams.list(this.shownWorkspace));
      return Array.isArray(list?.items) ? list : undefined;
    } catch {
      return undefined;
    }
  }

  private candidateOf(node: unknown): MemoryCandidate | undefined {
    const id = typeof node === "object" && node !== null ? (node as { id?: unknown }).id : undefined;
    return typeof id === "string" ? this.candidates.find((item) => `candidate/${item.candidate_id}` === id) : undefined;
  }

  /** "Confirm and Save to Project": saves exactly what the row shows (its version, fingerprint
   * and note version); a secret cut out of the note is saved redacted only if the person says so. */
  async confirmCandidate(node: unknown): Promise<void> {
    const candidate = this.candidateOf(node);
    if (candidate === undefined) {
      return;
    }
    const { server, editor } = this.ports;
    let redact = false;
    for (;;) {
      try {
        const confirmed = await server.request<ConfirmedCandidate>(Methods.memoryConfirmCandidate, CandidateParams.confirm(candidate, redact));
        editor.showMessage("info", `Saved to project memory: ${confirmed.memory?.title ?? candidate.title ?? candidate.candidate_id}`);
        break;
      } catch (error) {
        const info = typedError(error);
        if (info.code === "secret_detected" && !redact) {
          const answer = await editor.askModal(
            "The note had a secret cut out. Save the redacted text to project memory?",
            info.message,
            [STORE_REDACTED],
          );
          if (answer === STORE_REDACTED) {
            redact = true;
            continue;
          }
          break;
        }
        editor.showMessage(info.code === "candidate_stale" || info.code === "conflict" ? "warning" : "error", `${info.message} (${info.code})`);
        break;
      }
    }
    await this.refresh();
  }

  /** "Ignore": resolves the candidate without a memory. */
  async ignoreCandidate(node: unknown): Promise<void> {
    const candidate = this.candidateOf(node);
    if (candidate === undefined) {
      return;
    }
    try {
      await this.ports.server.request<MemoryCandidate>(Methods.memoryIgnoreCandidate, CandidateParams.ignore(candidate));
    } catch (error) {
      const info = typedError(error);
      this.ports.editor.showMessage("warning", `${info.message} (${info.code})`);
    }
    await this.refresh();
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
