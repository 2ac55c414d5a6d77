/**
 * History search and read in VS Code (docs/reference/history.md): "Search History…"
 * (`rutter.history.search`, the search button of the Session Tree view and the palette) opens a
 * QuickPick that asks `rutter/historySearch` as the person types (debounced; an answer to an
 * older text is dropped), in the active file's workspace and, where one is known, the run the
 * Session Tree view shows (its lineage's notes, messages, receipts, summaries and checkpoints).
 * Each hit is labelled with its source kind and ID, its version, and the server's snippet;
 * "Load more…" asks the next page with the opaque cursor. The chosen hit is read with
 * `rutter/historyRead` and opened as a read-only `rutter-history:` document, one per page;
 * "Next Page" / "Previous Page" (the document's title bar) read the neighbouring page, checked
 * again by the server. A source changed since it was found (`conflict`) or gone (`gone`:
 * deleted, disabled, expired, no longer visible) is a message, and no text is shown.
 */

import type { ErrorInfo, HistoryHit, HistoryHits, HistoryPage } from "./protocol";
import { Methods, typedError } from "./protocol";
import type { Disposable, LivePick, PickItem, Ports } from "./ports";

export const HISTORY_SCHEME = "rutter-history";

export const HistoryCommands = {
  search: "rutter.history.search",
  nextPage: "rutter.history.nextPage",
  previousPage: "rutter.history.previousPage",
} as const;

/** Quiet time after a keystroke before the server is asked. */
export const DEBOUNCE_MS = 250;
/** Hits per page of the pick. */
export const PAGE_LIMIT = 20;
const SNIPPET_CHARS = 200;

/** Where the search looks: the active file's workspace, and the current run where known. */
export interface HistoryScope {
  workspaceId?: string;
  runId?: string;
}

/** Runs `run` after `ms`; the returned function cancels it. Tests pass a manual one. */
export type Schedule = (run: () => void, ms: number) => () => void;

export const timerSchedule: Schedule = (run, ms) => {
  const timer = setTimeout(run, ms);
  return () => clearTimeout(timer);
};

/** What a row of the pick stands for. */
export type HistoryChoice =
  | { kind: "hit"; hit: HistoryHit }
  | { kind: "more"; cursor: string }
  | { kind: "none" };

/** A snippet on one line, at most 200 characters. */
export function snippetLine(snippet: string): string {
  const line = snippet.replace(/\s+/g, " ").trim();
  return line.length > SNIPPET_CHARS ? `${line.slice(0, SNIPPET_CHARS - 1)}…` : line;
}

/** A hit as a row: source kind and ID, its version, and the snippet. */
export function hitItem(hit: HistoryHit): PickItem<HistoryChoice> {
  return {
    label: `${hit.source_kind} ${hit.source_id}`,
    description: `v${hit.version}`,
    detail: snippetLine(hit.snippet),
    value: { kind: "hit", hit },
  };
}

export const LOAD_MORE_LABEL = "Load more…";

/** The rows of the hits found so far, then "Load more…" while there are more. */
export function hitItems(hits: HistoryHit[], nextCursor: string | null): PickItem<HistoryChoice>[] {
  const items: PickItem<HistoryChoice>[] = hits.map(hitItem);
  if (hits.length === 0) {
    items.push({ label: "No match", description: "nothing in this history contains the text", value: { kind: "none" } });
  }
  if (nextCursor !== null) {
    items.push({
      label: LOAD_MORE_LABEL,
      description: `${hits.length} shown`,
      value: { kind: "more", cursor: nextCursor },
    });
  }
  return items;
}

/** A failed search as one row (the typed reason, never the query). */
export function failureItem(error: ErrorInfo): PickItem<HistoryChoice> {
  return { label: `Search failed (${error.code})`, detail: error.message, value: { kind: "none" } };
}

/** What the pick says it searches. */
export function scopeText(scope: HistoryScope): string {
  if (scope.runId !== undefined) {
    return `run ${scope.runId} and its lineage, memories of ${scope.workspaceId ?? "its workspace"} and yours`;
  }
  if (scope.workspaceId !== undefined) {
    return `memories of ${scope.workspaceId} and yours`;
  }
  return "your user memories";
}

/** The params of `rutter/historySearch`. */
export function searchParams(query: string, scope: HistoryScope, cursor?: string): Record<string, unknown> {
  const params: Record<string, unknown> = { query, limit: PAGE_LIMIT };
  if (scope.runId !== undefined) {
    params.run_id = scope.runId;
  }
  if (scope.workspaceId !== undefined) {
    params.workspace_id = scope.workspaceId;
  }
  if (cursor !== undefined) {
    params.cursor = cursor;
  }
  return params;
}

/** The path of a page's document (its tab shows it): kind, ID, version, page of pages. */
export function pagePath(hit: HistoryHit, page: number, pages: number): string {
  const id = hit.source_id.replace(/[\\/]/g, "_");
  return `/${hit.source_kind} ${id} v${hit.version} · page ${page} of ${pages}`;
}

/** Why a source cannot be read (no text of it is shown). */
export function readFailureText(hit: HistoryHit, error: ErrorInfo): string {
  const what = `${hit.source_kind} ${hit.source_id} v${hit.version}`;
  switch (error.code) {
    case "conflict":
      return `rutter: ${what} changed since it was found (conflict); search again to read its current version`;
    case "gone":
      return `rutter: ${what} is gone (deleted, disabled, expired or no longer visible); nothing of it is shown`;
    default:
      return `rutter: cannot read ${what} (${error.code}): ${error.message}`;
  }
}

interface OpenPage {
  hit: HistoryHit;
  page: number;
  pages: number;
  text: string;
}

export class HistoryController implements Disposable {
  private readonly disposables: Disposable[] = [];
  private readonly pages = new Map<string, OpenPage>();

  constructor(
    private readonly ports: Ports,
    private readonly scope: () => HistoryScope,
    private readonly schedule: Schedule = timerSchedule,
  ) {
    const { editor } = ports;
    this.disposables.push(
      editor.registerReadOnlyScheme(HISTORY_SCHEME, (path) => Promise.resolve(this.pageText(path))),
      editor.registerCommand(HistoryCommands.search, () => this.search()),
      editor.registerCommand(HistoryCommands.nextPage, () => this.turn(1)),
      editor.registerCommand(HistoryCommands.previousPage, () => this.turn(-1)),
    );
  }

  /** Open the search pick; resolves once it is open (it stays open while the person types). */
  search(): Promise<void> {
    const scope = this.scope();
    let cancel: (() => void) | undefined;
    let asked = 0;
    let query = "";
    let hits: HistoryHit[] = [];
    const ask = async (cursor?: string): Promise<void> => {
      const question = ++asked;
      pick.setBusy(true);
      let items: PickItem<HistoryChoice>[];
      try {
        const answer = await this.ports.server.request<HistoryHits>(
          Methods.historySearch,
          searchParams(query, scope, cursor),
        );
        if (question !== asked) {
          return;
        }
        hits = cursor === undefined ? answer.hits : [...hits, ...answer.hits];
        items = hitItems(hits, answer.next_cursor);
      } catch (error) {
        if (question !== asked) {
          return;
        }
        hits = [];
        items = [failureItem(typedError(error))];
      }
      pick.setItems(items);
      pick.setBusy(false);
    };
    const pick: LivePick<HistoryChoice> = this.ports.editor.livePick<HistoryChoice>({
      title: "rutter: Search History",
      placeholder: `Search ${scopeText(scope)}`,
      onDidChangeValue: (text) => {
        cancel?.();
        cancel = undefined;
        query = text.trim();
        if (query === "") {
          asked += 1;
          hits = [];
          pick.setItems([]);
          pick.setBusy(false);
          return;
        }
        cancel = this.schedule(() => void ask(), DEBOUNCE_MS);
      },
      onDidAccept: (choice) => {
        if (choice.kind === "more") {
          void ask(choice.cursor);
        } else if (choice.kind === "hit") {
          pick.close();
          void this.open(choice.hit, 1);
        }
      },
      onDidHide: () => {
        cancel?.();
        asked += 1;
      },
    });
    return Promise.resolve();
  }

  /** Read `page` of a hit's source and open it; a failure is a message and opens nothing. */
  async open(hit: HistoryHit, page: number): Promise<boolean> {
    const { editor, server } = this.ports;
    let answer: HistoryPage;
    try {
      answer = await server.request<HistoryPage>(Methods.historyRead, { handle: hit.handle, page });
    } catch (error) {
      editor.showMessage("warning", readFailureText(hit, typedError(error)));
      return false;
    }
    const path = pagePath(hit, answer.page, answer.pages);
    this.pages.set(path, { hit, page: answer.page, pages: answer.pages, text: answer.text });
    await editor.openReadOnlyScheme(HISTORY_SCHEME, path, "plaintext");
    return true;
  }

  /** The next (1) or previous (-1) page of the history document in the active editor. */
  async turn(step: 1 | -1): Promise<void> {
    const { editor } = this.ports;
    const document = editor.activeSchemeDocument();
    const open = document?.scheme === HISTORY_SCHEME ? this.pages.get(document.path) : undefined;
    if (open === undefined) {
      editor.showMessage("info", "rutter: open a history page first (Rutter: Search History…)");
      return;
    }
    const page = open.page + step;
    if (page < 1 || page > open.pages) {
      editor.showMessage("info", `rutter: this is the ${step > 0 ? "last" : "first"} page (${open.page} of ${open.pages})`);
      return;
    }
    await this.open(open.hit, page);
  }

  /** A page's text as read; a document no longer known says so (never another text). */
  pageText(path: string): string {
    return this.pages.get(path)?.text ?? "rutter: this history page is no longer open; search again (Rutter: Search History…)\n";
  }

  dispose(): void {
    for (const disposable of this.disposables.splice(0)) {
      disposable.dispose();
    }
  }
}
