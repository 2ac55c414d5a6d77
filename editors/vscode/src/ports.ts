/**
 * Everything the extension needs from VS Code and from the language client, as plain
 * interfaces. `src/vscodeApi.ts` implements them on the real API; unit tests implement them
 * with recording fakes, and the protocol tests put a real server behind `ServerPort`.
 * Nothing here imports `vscode`.
 */

export interface Disposable {
  dispose(): void;
}

/** A command a tree item runs when clicked. */
export interface NodeCommand {
  command: string;
  title: string;
  arguments: unknown[];
}

/** One row of a tree view, with its children (a node with children is collapsible). */
export interface ViewNode {
  /** Unique within the view and stable across refreshes (keeps expansion state). */
  id: string;
  label: string;
  description?: string;
  tooltip?: string;
  /** A codicon name (`file`, `warning`, `error`, …). */
  icon?: string;
  /** A theme color for the icon (`problemsWarningIcon.foreground`, …). */
  iconColor?: string;
  /** `viewItem` in `when` clauses of context menus. */
  contextValue?: string;
  command?: NodeCommand;
  children?: ViewNode[];
  expanded?: boolean;
}

export type ViewId = "rutter.instructions" | "rutter.runs" | "rutter.memory" | "rutter.sessions" | "rutter.proposals";

/** Every view of the rutter view container (activity bar), in the order package.json lists them. */
export const VIEW_IDS: readonly ViewId[] = [
  "rutter.instructions",
  "rutter.runs",
  "rutter.memory",
  "rutter.sessions",
  "rutter.proposals",
];

export interface StatusModel {
  text: string;
  tooltip: string;
  /** Shown with the warning background. */
  warning: boolean;
  command: string;
}

export interface ActiveFile {
  /** The document URI as the language client sends it. */
  uri: string;
  /** The file system path (platform separators). */
  path: string;
  /** The path of the workspace folder holding it, if any. */
  folder?: string;
}

export interface ExtensionSettings {
  serverCommand: string;
  serverArgs: string[];
  home: string;
  databaseUrl: string;
  logLevel: string;
  /** The agents whose profiles diagnose instruction files (`[]`: none). */
  agentDiagnostics: string[];
}

/** The language server, across restarts. */
export interface ServerPort {
  /** A custom request; rejects when the server is not running or answers with an error. */
  request<R>(method: string, params: unknown): Promise<R>;
  /** A server notification handler that stays registered across restarts. */
  onNotification(method: string, handler: (params: unknown) => void): Disposable;
  /** Answer a server → client request (replaces the client's own handler; kept across
   * restarts). */
  onRequest(method: string, handler: (params: unknown) => Promise<unknown>): Disposable;
  /** Called each time the server has started (and after every restart). */
  onDidStart(handler: () => void): Disposable;
  restart(): Promise<void>;
  showLog(): void;
}

export type MessageKind = "info" | "warning" | "error";

export interface PickItem<T> {
  label: string;
  description?: string;
  detail?: string;
  value: T;
}

export interface InputOptions {
  title: string;
  prompt: string;
  value?: string;
  placeholder?: string;
  /** An error message for the text, or undefined when it is acceptable. */
  validate?: (text: string) => string | undefined;
}

/** A document store behind a URI scheme: read on open, written on save. */
export interface DocumentStore {
  read(path: string): Promise<string>;
  /** Throws an Error whose message VS Code shows when the save is refused. */
  write(path: string, text: string): Promise<void>;
}

/** A read-only document of generated text (`name` appears in its tab). */
export interface ReadOnlyText {
  name: string;
  text: string;
}

/** What a live QuickPick tells its owner (see `EditorPort.livePick`). */
export interface LivePickOptions<T> {
  title: string;
  placeholder: string;
  /** The typed text changed (called for every keystroke; the owner debounces). */
  onDidChangeValue(text: string): void;
  /** An item was chosen; the pick stays open until the owner closes it. */
  onDidAccept(value: T): void;
  /** The pick was closed (by the person or by `close`). */
  onDidHide(): void;
}

/** A QuickPick whose items its owner replaces while it is open (search as you type). */
export interface LivePick<T> {
  setItems(items: PickItem<T>[]): void;
  /** The progress bar of the pick. */
  setBusy(busy: boolean): void;
  close(): void;
}

/** A document open in an editor of a scheme registered with `registerReadOnlyScheme`. */
export interface SchemeDocument {
  scheme: string;
  path: string;
}

export interface EditorPort {
  activeFile(): ActiveFile | undefined;
  onDidChangeActiveFile(handler: () => void): Disposable;
  setTree(view: ViewId, nodes: ViewNode[]): void;
  /** The text beside a view's title (e.g. the file it shows); undefined clears it. */
  setViewDescription(view: ViewId, text: string | undefined): void;
  /** The count badge of a view's icon (0 or undefined: none), with its tooltip. */
  setViewBadge(view: ViewId, count: number | undefined, tooltip: string): void;
  /** A context key for `when` clauses of package.json (menus, buttons). */
  setContext(key: string, value: boolean): void;
  setStatus(status: StatusModel | undefined): void;
  /** The second status bar item: the current run's last checkpoint. */
  setSessionStatus(status: StatusModel | undefined): void;
  /** Reveal (focus) a view of the extension. */
  revealView(view: ViewId): Promise<void>;
  /** VS Code's diff editor over two read-only documents of generated text. */
  showDiff(left: ReadOnlyText, right: ReadOnlyText, title: string): Promise<void>;
  showMessage(kind: MessageKind, text: string): void;
  /** A notification (not modal) with actions; resolves to the chosen one, undefined when it
   * is dismissed. */
  notify(kind: MessageKind, text: string, actions: string[]): Promise<string | undefined>;
  /** A modal dialog; resolves to the chosen action, undefined on cancel. */
  askModal(message: string, detail: string, actions: string[]): Promise<string | undefined>;
  pick<T>(items: PickItem<T>[], placeholder: string): Promise<T | undefined>;
  /** A quick pick of several items (check boxes); undefined when it is dismissed. */
  pickMany<T>(items: PickItem<T>[], placeholder: string): Promise<T[] | undefined>;
  /** Run `task` with a progress notification titled `title` until it settles; its result. */
  withProgress<T>(title: string, task: () => Promise<T>): Promise<T>;
  input(options: InputOptions): Promise<string | undefined>;
  /** Show text in a read-only document (`name` appears in its tab). */
  showReadOnly(name: string, text: string, language: string): Promise<void>;
  /** Show Markdown text rendered (the editor's Markdown preview) from a read-only document
   * named `name`; showing the same name again replaces its text and the preview follows. */
  showRendered(name: string, text: string): Promise<void>;
  /** Show text in a new untitled document the user may save anywhere. */
  showUntitled(text: string, language: string): Promise<void>;
  /** Open a file of the file system (absolute path) in an editor. */
  openFile(path: string): Promise<void>;
  /** Open `scheme:path` of a store registered with `registerDocumentStore`. */
  openStoreDocument(scheme: string, path: string): Promise<void>;
  registerDocumentStore(scheme: string, store: DocumentStore): Disposable;
  /** Once the save of `saved` to the open document `scheme:path` (in progress) has completed,
   * replace its whole text with `text` and save it again: the store kept another text than
   * the one saved (e.g. with secrets redacted). Nothing happens if the document is not open. */
  replaceStoreDocument(scheme: string, path: string, saved: string, text: string): void;
  registerCommand(id: string, handler: (...args: unknown[]) => unknown): Disposable;
  settings(): ExtensionSettings;
  /** A QuickPick its owner fills as the person types. */
  livePick<T>(options: LivePickOptions<T>): LivePick<T>;
  /** Read-only documents of `scheme`: `read(path)` gives the text each time one is opened. */
  registerReadOnlyScheme(scheme: string, read: (path: string) => Promise<string>): Disposable;
  /** Open `scheme:path` (registered with `registerReadOnlyScheme`) in a read-only editor. */
  openReadOnlyScheme(scheme: string, path: string, language: string): Promise<void>;
  /** The document of the active editor when it is of one of the registered schemes. */
  activeSchemeDocument(): SchemeDocument | undefined;
  /** A value kept in the workspace state (across restarts of the window). */
  workspaceValue(key: string): unknown;
  setWorkspaceValue(key: string, value: unknown): Promise<void>;
}

export interface Ports {
  server: ServerPort;
  editor: EditorPort;
}
