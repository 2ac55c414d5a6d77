/**
 * The one module that uses the VS Code API and the language client: it implements the ports
 * of `ports.ts`. Everything else is plain TypeScript, unit-tested with fakes.
 */

import * as vscode from "vscode";
import {
  LanguageClient,
  type LanguageClientOptions,
  RevealOutputChannelOn,
  type ServerOptions,
  State,
} from "vscode-languageclient/node";

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
} from "./ports";
import { VIEW_IDS } from "./ports";
import { SECTION, needsRestart, readSettings, serverLaunch, serverSettings } from "./settings";

export type ExtensionContext = vscode.ExtensionContext;

const CLIENT_ID = "rutter";
const CLIENT_NAME = "Rutter";
const REVIEW_SCHEME = "rutter-review";
/** Read-only documents of continuity nodes' snapshots (the two sides of a compare). */
const SESSION_SCHEME = "rutter-session";

function readVscodeSettings(): ExtensionSettings {
  const config = vscode.workspace.getConfiguration(SECTION);
  return readSettings((key) => config.get(key));
}

// -- the language server ------------------------------------------------------------------

/** Starts `rutter-lsp` through the language client, restarts it, and keeps the handlers of
 * server notifications across restarts. */
export class ServerHost implements ServerPort, vscode.Disposable {
  private client: LanguageClient | undefined;
  private readonly handlers = new Map<string, Set<(params: unknown) => void>>();
  private readonly requestHandlers = new Map<string, (params: unknown) => Promise<unknown>>();
  private readonly started = new Set<() => void>();
  private queue: Promise<void> = Promise.resolve();
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(private readonly output: vscode.LogOutputChannel) {
    this.subscriptions.push(
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (needsRestart((section) => event.affectsConfiguration(section))) {
          this.output.info("server settings changed: restarting the server");
          void this.restart();
        }
      }),
    );
  }

  /** Start, stop and restart run one at a time, in order. */
  private serialize(step: () => Promise<void>): Promise<void> {
    this.queue = this.queue.then(step, step);
    return this.queue;
  }

  start(): Promise<void> {
    return this.serialize(() => this.startNow());
  }

  restart(): Promise<void> {
    return this.serialize(async () => {
      await this.stopNow();
      await this.startNow();
    });
  }

  stop(): Promise<void> {
    return this.serialize(() => this.stopNow());
  }

  private async startNow(): Promise<void> {
    const settings = readVscodeSettings();
    const launch = serverLaunch(settings, process.env);
    const serverOptions: ServerOptions = {
      command: launch.command,
      args: launch.args,
      options: { env: launch.env },
    };
    const clientOptions: LanguageClientOptions = {
      // The stack is wanted for every file; instruction files get hover, lens, diagnostics.
      documentSelector: [{ scheme: "file" }],
      initializationOptions: { [SECTION]: serverSettings(settings) },
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
    };
    const client = new LanguageClient(CLIENT_ID, CLIENT_NAME, serverOptions, clientOptions);
    for (const [method, handlers] of this.handlers) {
      client.onNotification(method, (params: unknown) => {
        for (const handler of handlers) {
          handler(params);
        }
      });
    }
    // Registered before start: applied after the client's built-in handlers, so they win.
    for (const [method, handler] of this.requestHandlers) {
      client.onRequest(method, (params: unknown) => handler(params));
    }
    client.onDidChangeState((event) => {
      // Also after the client's own restart of a crashed server.
      if (event.newState === State.Running) {
        for (const handler of this.started) {
          handler();
        }
      }
    });
    this.client = client;
    this.output.info(`starting ${[launch.command, ...launch.args].join(" ")}${settings.home ? ` (RUTTER_HOME=${settings.home})` : ""}`);
    try {
      await client.start();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.output.error(`cannot start the server: ${message}`);
      void vscode.window
        .showErrorMessage(
          `rutter: cannot start the language server \`${launch.command}\`: ${message}. Put rutter-lsp on PATH or set rutter.server.command.`,
          "Open Settings",
          "Show Log",
        )
        .then((choice) => {
          if (choice === "Open Settings") {
            void vscode.commands.executeCommand("workbench.action.openSettings", "rutter.server");
          } else if (choice === "Show Log") {
            this.output.show();
          }
        });
    }
  }

  private async stopNow(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client === undefined) {
      return;
    }
    try {
      await client.stop();
    } catch (error) {
      this.output.warn(`stopping the server: ${String(error)}`);
    }
  }

  async request<R>(method: string, params: unknown): Promise<R> {
    await this.queue;
    const client = this.client;
    if (client === undefined || client.state !== State.Running) {
      throw new Error('the rutter language server is not running (see "Rutter: Show Server Log")');
    }
    return client.sendRequest<R>(method, params);
  }

  onNotification(method: string, handler: (params: unknown) => void): Disposable {
    let handlers = this.handlers.get(method);
    if (handlers === undefined) {
      handlers = new Set();
      this.handlers.set(method, handlers);
      const all = handlers;
      // A client already started gets the method now; later clients get it in startNow.
      this.client?.onNotification(method, (params: unknown) => {
        for (const each of all) {
          each(params);
        }
      });
    }
    handlers.add(handler);
    const registered = handlers;
    return { dispose: () => registered.delete(handler) };
  }

  onRequest(method: string, handler: (params: unknown) => Promise<unknown>): Disposable {
    this.requestHandlers.set(method, handler);
    this.client?.onRequest(method, (params: unknown) => handler(params));
    return { dispose: () => this.requestHandlers.delete(method) };
  }

  onDidStart(handler: () => void): Disposable {
    this.started.add(handler);
    return { dispose: () => this.started.delete(handler) };
  }

  showLog(): void {
    this.output.show();
  }

  dispose(): void {
    for (const subscription of this.subscriptions.splice(0)) {
      subscription.dispose();
    }
  }
}

// -- views, status bar, dialogs, documents -------------------------------------------------

class NodeTree implements vscode.TreeDataProvider<ViewNode> {
  private roots: ViewNode[] = [];
  private readonly changed = new vscode.EventEmitter<ViewNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;

  set(nodes: ViewNode[]): void {
    this.roots = nodes;
    this.changed.fire(undefined);
  }

  getTreeItem(node: ViewNode): vscode.TreeItem {
    const state =
      node.children === undefined
        ? vscode.TreeItemCollapsibleState.None
        : node.expanded === true
          ? vscode.TreeItemCollapsibleState.Expanded
          : vscode.TreeItemCollapsibleState.Collapsed;
    const item = new vscode.TreeItem(node.label, state);
    item.id = node.id;
    item.description = node.description;
    item.tooltip = node.tooltip;
    item.contextValue = node.contextValue;
    if (node.icon !== undefined) {
      item.iconPath = new vscode.ThemeIcon(
        node.icon,
        node.iconColor === undefined ? undefined : new vscode.ThemeColor(node.iconColor),
      );
    }
    if (node.command !== undefined) {
      item.command = node.command;
    }
    return item;
  }

  getChildren(node?: ViewNode): ViewNode[] {
    return node === undefined ? this.roots : (node.children ?? []);
  }

  dispose(): void {
    this.changed.dispose();
  }
}

/** Read-only documents of text the extension generates (review of a refresh, …). */
class ReviewDocuments implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  put(uri: vscode.Uri, text: string): void {
    this.texts.set(uri.path, text);
    this.changed.fire(uri);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.path) ?? "";
  }
}

/** Read-only documents whose text the extension reads each time one is opened. */
class SchemeDocuments implements vscode.TextDocumentContentProvider {
  constructor(private readonly read: (path: string) => Promise<string>) {}

  provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    return this.read(uri.path);
  }
}

/** A `DocumentStore` as a file system: opening reads, saving writes (a refused save shows
 * the store's message and keeps the editor dirty). */
class StoreFileSystem implements vscode.FileSystemProvider {
  private readonly changed = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.changed.event;
  private readonly stats = new Map<string, { mtime: number; size: number }>();

  constructor(private readonly store: DocumentStore) {}

  private touch(uri: vscode.Uri, size: number): void {
    const previous = this.stats.get(uri.path)?.mtime ?? 0;
    this.stats.set(uri.path, { mtime: Math.max(Date.now(), previous + 1), size });
  }

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }

  stat(uri: vscode.Uri): vscode.FileStat {
    const stat = this.stats.get(uri.path) ?? { mtime: Date.now(), size: 0 };
    return { type: vscode.FileType.File, ctime: 0, mtime: stat.mtime, size: stat.size };
  }

  readDirectory(): [string, vscode.FileType][] {
    return [];
  }

  createDirectory(): void {
    throw vscode.FileSystemError.NoPermissions("rutter documents have no directories");
  }

  async readFile(uri: vscode.Uri): Promise<Uint8Array> {
    try {
      const bytes = new TextEncoder().encode(await this.store.read(uri.path));
      this.touch(uri, bytes.length);
      return bytes;
    } catch (error) {
      throw vscode.FileSystemError.Unavailable(error instanceof Error ? error.message : String(error));
    }
  }

  async writeFile(uri: vscode.Uri, content: Uint8Array): Promise<void> {
    try {
      await this.store.write(uri.path, new TextDecoder().decode(content));
    } catch (error) {
      throw vscode.FileSystemError.NoPermissions(error instanceof Error ? error.message : String(error));
    }
    this.touch(uri, content.length);
    // Re-read: the saved document shows what the store now holds (its new version).
    this.changed.fire([{ type: vscode.FileChangeType.Changed, uri }]);
  }

  delete(): void {
    throw vscode.FileSystemError.NoPermissions("delete it with its command");
  }

  rename(): void {
    throw vscode.FileSystemError.NoPermissions("rutter documents cannot be renamed");
  }
}

function showStatus(item: vscode.StatusBarItem, status: StatusModel | undefined): void {
  if (status === undefined) {
    item.hide();
    return;
  }
  item.text = status.text;
  item.tooltip = status.tooltip;
  item.command = status.command;
  item.backgroundColor = status.warning ? new vscode.ThemeColor("statusBarItem.warningBackground") : undefined;
  item.show();
}

export class VscodeEditor implements EditorPort, vscode.Disposable {
  private readonly trees = new Map<ViewId, NodeTree>();
  private readonly treeViews = new Map<ViewId, vscode.TreeView<ViewNode>>();
  private readonly status: vscode.StatusBarItem;
  private readonly sessionStatus: vscode.StatusBarItem;
  private readonly reviews = new ReviewDocuments();
  /** Same provider class, its own scheme: compare's documents never mix with reviews. */
  private readonly sessionDocuments = new ReviewDocuments();
  private readonly subscriptions: vscode.Disposable[] = [];
  private lastFile: vscode.Uri | undefined;
  private readonly readOnlySchemes = new Set<string>();

  constructor(private readonly state: vscode.Memento) {
    for (const view of VIEW_IDS) {
      const tree = new NodeTree();
      const treeView = vscode.window.createTreeView(view, { treeDataProvider: tree });
      this.trees.set(view, tree);
      this.treeViews.set(view, treeView);
      this.subscriptions.push(treeView, tree);
    }
    this.status = vscode.window.createStatusBarItem("rutter.status", vscode.StatusBarAlignment.Right, 100);
    this.status.name = "rutter: effective instructions";
    this.sessionStatus = vscode.window.createStatusBarItem("rutter.sessionStatus", vscode.StatusBarAlignment.Right, 99);
    this.sessionStatus.name = "rutter: last checkpoint";
    this.subscriptions.push(
      this.status,
      this.sessionStatus,
      vscode.workspace.registerTextDocumentContentProvider(REVIEW_SCHEME, this.reviews),
      vscode.workspace.registerTextDocumentContentProvider(SESSION_SCHEME, this.sessionDocuments),
    );
    this.lastFile = this.fileEditorUri(vscode.window.activeTextEditor);
  }

  private fileEditorUri(editor: vscode.TextEditor | undefined): vscode.Uri | undefined {
    const uri = editor?.document.uri;
    return uri?.scheme === "file" ? uri : undefined;
  }

  activeFile(): ActiveFile | undefined {
    const uri = this.lastFile;
    if (uri === undefined) {
      return undefined;
    }
    const folder = vscode.workspace.getWorkspaceFolder(uri);
    return { uri: uri.toString(), path: uri.fsPath, folder: folder?.uri.fsPath };
  }

  onDidChangeActiveFile(handler: () => void): Disposable {
    // The last file editor stays "active" while focus is in a view, the output or a
    // document of another scheme, so the view keeps showing its stack.
    const subscriptions = [
      vscode.window.onDidChangeActiveTextEditor((editor) => {
        const uri = this.fileEditorUri(editor);
        if (uri !== undefined && uri.toString() !== this.lastFile?.toString()) {
          this.lastFile = uri;
          handler();
        }
      }),
      vscode.workspace.onDidCloseTextDocument((document) => {
        if (document.uri.toString() === this.lastFile?.toString()) {
          this.lastFile = this.fileEditorUri(vscode.window.activeTextEditor);
          handler();
        }
      }),
    ];
    return {
      dispose: () => {
        for (const each of subscriptions) {
          each.dispose();
        }
      },
    };
  }

  setTree(view: ViewId, nodes: ViewNode[]): void {
    this.trees.get(view)?.set(nodes);
  }

  setViewDescription(view: ViewId, text: string | undefined): void {
    const treeView = this.treeViews.get(view);
    if (treeView !== undefined) {
      treeView.description = text;
    }
  }

  setViewBadge(view: ViewId, count: number | undefined, tooltip: string): void {
    const treeView = this.treeViews.get(view);
    if (treeView !== undefined) {
      treeView.badge = count === undefined || count === 0 ? undefined : { value: count, tooltip };
    }
  }

  setContext(key: string, value: boolean): void {
    void vscode.commands.executeCommand("setContext", key, value);
  }

  setStatus(status: StatusModel | undefined): void {
    showStatus(this.status, status);
  }

  setSessionStatus(status: StatusModel | undefined): void {
    showStatus(this.sessionStatus, status);
  }

  async revealView(view: ViewId): Promise<void> {
    await vscode.commands.executeCommand(`${view}.focus`);
  }

  async showDiff(left: ReadOnlyText, right: ReadOnlyText, title: string): Promise<void> {
    const uris = [left, right].map((side) => {
      const uri = vscode.Uri.from({ scheme: SESSION_SCHEME, path: `/${side.name}` });
      this.sessionDocuments.put(uri, side.text);
      return uri;
    });
    await vscode.commands.executeCommand("vscode.diff", uris[0], uris[1], title, { preview: true });
  }

  showMessage(kind: MessageKind, text: string): void {
    const show =
      kind === "error"
        ? vscode.window.showErrorMessage
        : kind === "warning"
          ? vscode.window.showWarningMessage
          : vscode.window.showInformationMessage;
    void show(text);
  }

  async notify(kind: MessageKind, text: string, actions: string[]): Promise<string | undefined> {
    const show =
      kind === "error"
        ? vscode.window.showErrorMessage
        : kind === "warning"
          ? vscode.window.showWarningMessage
          : vscode.window.showInformationMessage;
    return show(text, ...actions);
  }

  async askModal(message: string, detail: string, actions: string[]): Promise<string | undefined> {
    return vscode.window.showWarningMessage(message, { modal: true, detail }, ...actions);
  }

  async pick<T>(items: PickItem<T>[], placeholder: string): Promise<T | undefined> {
    type Choice = vscode.QuickPickItem & { item: PickItem<T> };
    const choices: Choice[] = items.map((item) => ({
      label: item.label,
      description: item.description,
      detail: item.detail,
      item,
    }));
    const chosen = await vscode.window.showQuickPick<Choice>(
      choices,
      { placeHolder: placeholder, matchOnDescription: true, matchOnDetail: true },
    );
    return chosen?.item.value;
  }

  async pickMany<T>(items: PickItem<T>[], placeholder: string): Promise<T[] | undefined> {
    type Choice = vscode.QuickPickItem & { item: PickItem<T> };
    const choices: Choice[] = items.map((item) => ({
      label: item.label,
      description: item.description,
      detail: item.detail,
      item,
    }));
    const chosen = await vscode.window.showQuickPick<Choice>(choices, {
      placeHolder: placeholder,
      matchOnDescription: true,
      matchOnDetail: true,
      canPickMany: true,
    });
    return chosen?.map((choice) => choice.item.value);
  }

  async withProgress<T>(title: string, task: () => Promise<T>): Promise<T> {
    return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable: false }, () => task());
  }

  async input(options: InputOptions): Promise<string | undefined> {
    return vscode.window.showInputBox({
      title: options.title,
      prompt: options.prompt,
      value: options.value,
      placeHolder: options.placeholder,
      ignoreFocusOut: true,
      validateInput: options.validate,
    });
  }

  async showReadOnly(name: string, text: string, language: string): Promise<void> {
    const uri = vscode.Uri.from({ scheme: REVIEW_SCHEME, path: `/${name}` });
    this.reviews.put(uri, text);
    const document = await vscode.workspace.openTextDocument(uri);
    await vscode.languages.setTextDocumentLanguage(document, language);
    await vscode.window.showTextDocument(document, { preview: true });
  }

  async showRendered(name: string, text: string): Promise<void> {
    const uri = vscode.Uri.from({ scheme: REVIEW_SCHEME, path: `/${name}` });
    this.reviews.put(uri, text);
    // Loaded first: the preview renders the document VS Code holds, and a content change
    // (the same name shown again) reaches the preview as a change of that document.
    const document = await vscode.workspace.openTextDocument(uri);
    await vscode.languages.setTextDocumentLanguage(document, "markdown");
    try {
      // Locked: the preview keeps this document when another Markdown file becomes active.
      await vscode.commands.executeCommand("markdown.showPreview", uri, [uri], { locked: true });
    } catch {
      // The built-in Markdown extension is disabled: the source, read-only, still reads.
      await vscode.window.showTextDocument(document, { preview: true });
    }
  }

  async showUntitled(text: string, language: string): Promise<void> {
    const document = await vscode.workspace.openTextDocument({ content: text, language });
    await vscode.window.showTextDocument(document);
  }

  async openFile(path: string): Promise<void> {
    await vscode.window.showTextDocument(vscode.Uri.file(path), { preview: true });
  }

  async openStoreDocument(scheme: string, path: string): Promise<void> {
    const document = await vscode.workspace.openTextDocument(vscode.Uri.from({ scheme, path }));
    await vscode.window.showTextDocument(document, { preview: false });
  }

  registerDocumentStore(scheme: string, store: DocumentStore): Disposable {
    return vscode.workspace.registerFileSystemProvider(scheme, new StoreFileSystem(store), {
      isCaseSensitive: true,
    });
  }

  replaceStoreDocument(scheme: string, path: string, saved: string, text: string): void {
    const uri = vscode.Uri.from({ scheme, path }).toString();
    if (!vscode.workspace.textDocuments.some((document) => document.uri.toString() === uri)) {
      return;
    }
    // Edited only after the save in progress has ended: an edit during it would leave the
    // document dirty, holding the text the store did not keep.
    const subscription = vscode.workspace.onDidSaveTextDocument(async (document) => {
      if (document.uri.toString() !== uri) {
        return;
      }
      subscription.dispose();
      const current = document.getText();
      if (current !== saved) {
        return; // not that save (or already re-read from the store): leave the text alone
      }
      const edit = new vscode.WorkspaceEdit();
      edit.replace(document.uri, new vscode.Range(document.positionAt(0), document.positionAt(current.length)), text);
      if (await vscode.workspace.applyEdit(edit)) {
        await document.save();
      }
    });
    this.subscriptions.push(subscription);
  }

  registerCommand(id: string, handler: (...args: unknown[]) => unknown): Disposable {
    return vscode.commands.registerCommand(id, handler);
  }

  settings(): ExtensionSettings {
    return readVscodeSettings();
  }

  livePick<T>(options: LivePickOptions<T>): LivePick<T> {
    type Choice = vscode.QuickPickItem & { value: T };
    const pick = vscode.window.createQuickPick<Choice>();
    pick.title = options.title;
    pick.placeholder = options.placeholder;
    // The server matched the text already: every row is shown (`alwaysShow`), whatever
    // VS Code's own filter would say of it.
    pick.matchOnDescription = false;
    pick.matchOnDetail = false;
    const subscriptions = [
      pick.onDidChangeValue((text) => options.onDidChangeValue(text)),
      pick.onDidAccept(() => {
        const chosen = pick.selectedItems[0] ?? pick.activeItems[0];
        if (chosen !== undefined) {
          options.onDidAccept(chosen.value);
        }
      }),
    ];
    subscriptions.push(
      pick.onDidHide(() => {
        for (const each of subscriptions.splice(0)) {
          each.dispose();
        }
        options.onDidHide();
        pick.dispose();
      }),
    );
    pick.show();
    return {
      setItems: (items) => {
        pick.items = items.map((item) => ({
          label: item.label,
          description: item.description,
          detail: item.detail,
          // Shown whatever the typed text: the rows are the server's matches.
          alwaysShow: true,
          value: item.value,
        }));
      },
      setBusy: (busy) => {
        pick.busy = busy;
      },
      close: () => pick.hide(),
    };
  }

  registerReadOnlyScheme(scheme: string, read: (path: string) => Promise<string>): Disposable {
    this.readOnlySchemes.add(scheme);
    const registration = vscode.workspace.registerTextDocumentContentProvider(scheme, new SchemeDocuments(read));
    return {
      dispose: () => {
        this.readOnlySchemes.delete(scheme);
        registration.dispose();
      },
    };
  }

  async openReadOnlyScheme(scheme: string, path: string, language: string): Promise<void> {
    const document = await vscode.workspace.openTextDocument(vscode.Uri.from({ scheme, path }));
    await vscode.languages.setTextDocumentLanguage(document, language);
    await vscode.window.showTextDocument(document, { preview: false });
  }

  activeSchemeDocument(): SchemeDocument | undefined {
    const uri = vscode.window.activeTextEditor?.document.uri;
    return uri !== undefined && this.readOnlySchemes.has(uri.scheme) ? { scheme: uri.scheme, path: uri.path } : undefined;
  }

  workspaceValue(key: string): unknown {
    return this.state.get<unknown>(key);
  }

  async setWorkspaceValue(key: string, value: unknown): Promise<void> {
    await this.state.update(key, value);
  }

  dispose(): void {
    for (const subscription of this.subscriptions.splice(0)) {
      subscription.dispose();
    }
  }
}

/** The ports on the real API; `output` is the "Rutter" log channel. */
export function createPorts(context: vscode.ExtensionContext): { server: ServerHost; editor: VscodeEditor } {
  const output = vscode.window.createOutputChannel(CLIENT_NAME, { log: true });
  const server = new ServerHost(output);
  const editor = new VscodeEditor(context.workspaceState);
  context.subscriptions.push(output, server, editor);
  return { server, editor };
}
