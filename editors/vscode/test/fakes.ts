/**
 * Recording fakes of the ports (src/ports.ts). `FakeEditor` records what the extension shows
 * and answers dialogs from a script; `FakeServer` answers requests with a handler (or the
 * protocol tests put a real server behind `ServerPort`).
 */

import type {
  ActiveFile,
  Disposable,
  DocumentStore,
  EditorPort,
  ExtensionSettings,
  InputOptions,
  LivePick,
  LivePickOptions,
  MessageKind,
  PickItem,
  ReadOnlyText,
  SchemeDocument,
  ServerPort,
  StatusModel,
  ViewId,
  ViewNode,
} from "../src/ports";

export class Listeners<T extends unknown[]> {
  private readonly handlers = new Set<(...args: T) => void>();

  add(handler: (...args: T) => void): Disposable {
    this.handlers.add(handler);
    return { dispose: () => this.handlers.delete(handler) };
  }

  fire(...args: T): void {
    for (const handler of [...this.handlers]) {
      handler(...args);
    }
  }

  get size(): number {
    return this.handlers.size;
  }
}

export interface Sent {
  method: string;
  params: unknown;
}

export class FakeServer implements ServerPort {
  readonly sent: Sent[] = [];
  restarts = 0;
  logShown = 0;
  private readonly notifications = new Map<string, Listeners<[unknown]>>();
  private readonly started = new Listeners<[]>();

  constructor(public answer: (method: string, params: unknown) => unknown) {}

  async request<R>(method: string, params: unknown): Promise<R> {
    this.sent.push({ method, params });
    return (await this.answer(method, params)) as R;
  }

  onNotification(method: string, handler: (params: unknown) => void): Disposable {
    let listeners = this.notifications.get(method);
    if (listeners === undefined) {
      listeners = new Listeners();
      this.notifications.set(method, listeners);
    }
    return listeners.add(handler);
  }

  notify(method: string, params: unknown): void {
    this.notifications.get(method)?.fire(params);
  }

  readonly requestHandlers = new Map<string, (params: unknown) => Promise<unknown>>();

  onRequest(method: string, handler: (params: unknown) => Promise<unknown>): Disposable {
    this.requestHandlers.set(method, handler);
    return { dispose: () => this.requestHandlers.delete(method) };
  }

  /** A request from the server to the client. */
  async serverRequest(method: string, params: unknown): Promise<unknown> {
    const handler = this.requestHandlers.get(method);
    if (handler === undefined) {
      throw new Error(`no handler for ${method}`);
    }
    return handler(params);
  }

  onDidStart(handler: () => void): Disposable {
    return this.started.add(handler);
  }

  fireStarted(): void {
    this.started.fire();
  }

  restart(): Promise<void> {
    this.restarts += 1;
    return Promise.resolve();
  }

  showLog(): void {
    this.logShown += 1;
  }
}

export interface Shown {
  name: string;
  text: string;
  language: string;
}

export const DEFAULT_SETTINGS: ExtensionSettings = {
  serverCommand: "rutter-lsp",
  serverArgs: [],
  home: "",
  databaseUrl: "",
  logLevel: "info",
  agentDiagnostics: ["codex", "claude", "gemini", "copilot", "cursor"],
};

export class FakeEditor implements EditorPort {
  file: ActiveFile | undefined;
  readonly trees = new Map<ViewId, ViewNode[]>();
  readonly viewDescriptions = new Map<ViewId, string>();
  readonly contexts = new Map<string, boolean>();
  status: StatusModel | undefined;
  sessionStatus: StatusModel | undefined;
  readonly revealed: ViewId[] = [];
  readonly diffs: { left: ReadOnlyText; right: ReadOnlyText; title: string }[] = [];
  readonly messages: { kind: MessageKind; text: string }[] = [];
  readonly modals: { message: string; detail: string; actions: string[] }[] = [];
  readonly readOnly: Shown[] = [];
  /** Documents shown rendered (`showRendered`), in order. */
  readonly rendered: Shown[] = [];
  readonly untitled: { text: string; language: string }[] = [];
  readonly opened: string[] = [];
  readonly openedStore: { scheme: string; path: string }[] = [];
  readonly stores = new Map<string, DocumentStore>();
  readonly replaced: { scheme: string; path: string; saved: string; text: string }[] = [];
  readonly commands = new Map<string, (...args: unknown[]) => unknown>();
  readonly inputs: InputOptions[] = [];
  readonly picks: { items: PickItem<unknown>[]; placeholder: string }[] = [];
  readonly notifications: { kind: MessageKind; text: string; actions: string[] }[] = [];
  /** Scripted answers, consumed in order. */
  notifyAnswers: (string | undefined)[] = [];
  modalAnswers: (string | undefined)[] = [];
  inputAnswers: (string | undefined)[] = [];
  pickAnswers: ((items: PickItem<unknown>[]) => unknown)[] = [];
  settingsValue: ExtensionSettings = DEFAULT_SETTINGS;
  private readonly activeChanged = new Listeners<[]>();

  activeFile(): ActiveFile | undefined {
    return this.file;
  }

  setActiveFile(file: ActiveFile | undefined): void {
    this.file = file;
    this.activeChanged.fire();
  }

  onDidChangeActiveFile(handler: () => void): Disposable {
    return this.activeChanged.add(handler);
  }

  setTree(view: ViewId, nodes: ViewNode[]): void {
    this.trees.set(view, nodes);
  }

  setViewDescription(view: ViewId, text: string | undefined): void {
    if (text === undefined) {
      this.viewDescriptions.delete(view);
    } else {
      this.viewDescriptions.set(view, text);
    }
  }

  readonly badges = new Map<ViewId, { count: number | undefined; tooltip: string }>();

  setViewBadge(view: ViewId, count: number | undefined, tooltip: string): void {
    this.badges.set(view, { count, tooltip });
  }

  setContext(key: string, value: boolean): void {
    this.contexts.set(key, value);
  }

  setStatus(status: StatusModel | undefined): void {
    this.status = status;
  }

  setSessionStatus(status: StatusModel | undefined): void {
    this.sessionStatus = status;
  }

  revealView(view: ViewId): Promise<void> {
    this.revealed.push(view);
    return Promise.resolve();
  }

  showDiff(left: ReadOnlyText, right: ReadOnlyText, title: string): Promise<void> {
    this.diffs.push({ left, right, title });
    return Promise.resolve();
  }

  showMessage(kind: MessageKind, text: string): void {
    this.messages.push({ kind, text });
  }

  notify(kind: MessageKind, text: string, actions: string[]): Promise<string | undefined> {
    this.notifications.push({ kind, text, actions });
    return Promise.resolve(this.notifyAnswers.shift());
  }

  askModal(message: string, detail: string, actions: string[]): Promise<string | undefined> {
    this.modals.push({ message, detail, actions });
    return Promise.resolve(this.modalAnswers.shift());
  }

  pick<T>(items: PickItem<T>[], placeholder: string): Promise<T | undefined> {
    this.picks.push({ items, placeholder });
    const choose = this.pickAnswers.shift();
    return Promise.resolve(choose === undefined ? undefined : (choose(items) as T | undefined));
  }

  readonly manyPicks: { items: PickItem<unknown>[]; placeholder: string }[] = [];
  manyPickAnswers: ((items: PickItem<unknown>[]) => unknown[] | undefined)[] = [];

  pickMany<T>(items: PickItem<T>[], placeholder: string): Promise<T[] | undefined> {
    this.manyPicks.push({ items, placeholder });
    const choose = this.manyPickAnswers.shift();
    return Promise.resolve(choose === undefined ? undefined : (choose(items) as T[] | undefined));
  }

  /** The titles of the progress notifications, in order; `busy` while one runs. */
  readonly progress: string[] = [];
  busy = false;

  async withProgress<T>(title: string, task: () => Promise<T>): Promise<T> {
    this.progress.push(title);
    this.busy = true;
    try {
      return await task();
    } finally {
      this.busy = false;
    }
  }

  input(options: InputOptions): Promise<string | undefined> {
    this.inputs.push(options);
    return Promise.resolve(this.inputAnswers.shift());
  }

  showReadOnly(name: string, text: string, language: string): Promise<void> {
    this.readOnly.push({ name, text, language });
    return Promise.resolve();
  }

  showRendered(name: string, text: string): Promise<void> {
    this.rendered.push({ name, text, language: "markdown" });
    return Promise.resolve();
  }

  showUntitled(text: string, language: string): Promise<void> {
    this.untitled.push({ text, language });
    return Promise.resolve();
  }

  openFile(path: string): Promise<void> {
    this.opened.push(path);
    return Promise.resolve();
  }

  openStoreDocument(scheme: string, path: string): Promise<void> {
    this.openedStore.push({ scheme, path });
    return Promise.resolve();
  }

  registerDocumentStore(scheme: string, store: DocumentStore): Disposable {
    this.stores.set(scheme, store);
    return { dispose: () => this.stores.delete(scheme) };
  }

  replaceStoreDocument(scheme: string, path: string, saved: string, text: string): void {
    this.replaced.push({ scheme, path, saved, text });
  }

  registerCommand(id: string, handler: (...args: unknown[]) => unknown): Disposable {
    if (this.commands.has(id)) {
      throw new Error(`command ${id} registered twice`);
    }
    this.commands.set(id, handler);
    return { dispose: () => this.commands.delete(id) };
  }

  async run(id: string, ...args: unknown[]): Promise<unknown> {
    const handler = this.commands.get(id);
    if (handler === undefined) {
      throw new Error(`no command ${id}`);
    }
    return await handler(...args);
  }

  settings(): ExtensionSettings {
    return this.settingsValue;
  }

  /** The live picks opened, newest last. */
  readonly livePicks: FakeLivePick<unknown>[] = [];

  livePick<T>(options: LivePickOptions<T>): LivePick<T> {
    const pick = new FakeLivePick<T>(options);
    this.livePicks.push(pick);
    return pick;
  }

  readonly schemes = new Map<string, (path: string) => Promise<string>>();
  /** Documents opened with `openReadOnlyScheme`, with the text their scheme gave. */
  readonly schemeDocuments: { scheme: string; path: string; language: string; text: string }[] = [];
  /** The document of the active editor (set by `openReadOnlyScheme`, or by a test). */
  activeDocument: SchemeDocument | undefined;

  registerReadOnlyScheme(scheme: string, read: (path: string) => Promise<string>): Disposable {
    if (this.schemes.has(scheme)) {
      throw new Error(`scheme ${scheme} registered twice`);
    }
    this.schemes.set(scheme, read);
    return { dispose: () => this.schemes.delete(scheme) };
  }

  async openReadOnlyScheme(scheme: string, path: string, language: string): Promise<void> {
    const read = this.schemes.get(scheme);
    if (read === undefined) {
      throw new Error(`no scheme ${scheme}`);
    }
    this.schemeDocuments.push({ scheme, path, language, text: await read(path) });
    this.activeDocument = { scheme, path };
  }

  activeSchemeDocument(): SchemeDocument | undefined {
    return this.activeDocument;
  }

  readonly workspaceState = new Map<string, unknown>();

  workspaceValue(key: string): unknown {
    return this.workspaceState.get(key);
  }

  setWorkspaceValue(key: string, value: unknown): Promise<void> {
    this.workspaceState.set(key, value);
    return Promise.resolve();
  }

  tree(view: ViewId): ViewNode[] {
    return this.trees.get(view) ?? [];
  }
}

/** A live pick driven by the test: `type` and `accept` as the person would. */
export class FakeLivePick<T> implements LivePick<T> {
  items: PickItem<T>[] = [];
  busy = false;
  closed = false;
  /** Every list of items shown, in order. */
  readonly shown: PickItem<T>[][] = [];

  constructor(readonly options: LivePickOptions<T>) {}

  setItems(items: PickItem<T>[]): void {
    this.items = items;
    this.shown.push(items);
  }

  setBusy(busy: boolean): void {
    this.busy = busy;
  }

  close(): void {
    if (!this.closed) {
      this.closed = true;
      this.options.onDidHide();
    }
  }

  type(text: string): void {
    this.options.onDidChangeValue(text);
  }

  /** Accept the first item whose label matches. */
  accept(label: string | RegExp): void {
    const item = this.items.find((each) => (typeof label === "string" ? each.label === label : label.test(each.label)));
    if (item === undefined) {
      throw new Error(`no item ${String(label)} in ${this.items.map((each) => each.label).join(", ")}`);
    }
    this.options.onDidAccept(item.value);
  }
}

/** A `Schedule` that runs nothing until `flush`: the test decides when the quiet time is over. */
export class ManualSchedule {
  private pending: { run: () => void; cancelled: boolean }[] = [];

  readonly schedule = (run: () => void): (() => void) => {
    const entry = { run, cancelled: false };
    this.pending.push(entry);
    return () => {
      entry.cancelled = true;
    };
  };

  /** How many scheduled runs are waiting (not cancelled). */
  get waiting(): number {
    return this.pending.filter((entry) => !entry.cancelled).length;
  }

  flush(): void {
    const due = this.pending.splice(0);
    for (const entry of due) {
      if (!entry.cancelled) {
        entry.run();
      }
    }
  }
}

/** Resolves once every promise queued so far has settled (handlers fire-and-forget). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i += 1) {
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** The nodes of a tree, depth first, as "label — description" lines (for readable asserts). */
export function outline(nodes: ViewNode[], depth = 0): string[] {
  const lines: string[] = [];
  for (const node of nodes) {
    const description = node.description === undefined ? "" : ` — ${node.description}`;
    lines.push(`${"  ".repeat(depth)}${node.label}${description}`);
    lines.push(...outline(node.children ?? [], depth + 1));
  }
  return lines;
}
