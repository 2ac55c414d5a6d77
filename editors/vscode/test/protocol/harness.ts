/**
 * The real rutter language server, started from Node over stdio with vscode-jsonrpc and
 * initialized the way VS Code's language client does (similar capabilities, workspace
 * folders named after their directory, the `rutter` configuration section as VS Code
 * answers it). It implements `ServerPort`, so the extension's own controllers can run on it.
 *
 * The server is `../../.venv/bin/rutter-lsp` of this repository, or `RUTTER_LSP_COMMAND`.
 */

import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";

import {
  type MessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  createMessageConnection,
} from "vscode-jsonrpc/node";

import assert from "node:assert/strict";

import { type Rutter, startRutter } from "../../src/app";
import { MEMORY_SCHEME } from "../../src/memory";
import type { Disposable, DocumentStore, ExtensionSettings, ServerPort } from "../../src/ports";
import { serverLaunch, serverSettings } from "../../src/settings";
import { DEFAULT_SETTINGS, FakeEditor, Listeners } from "../fakes";

export const REPO = path.resolve(__dirname, "../../../..");

export function serverCommand(): string {
  return process.env.RUTTER_LSP_COMMAND ?? path.join(REPO, ".venv", "bin", "rutter-lsp");
}

export function rutterCli(): string {
  return process.env.RUTTER_CLI_COMMAND ?? path.join(REPO, ".venv", "bin", "rutter");
}

export function uriOf(file: string): string {
  return pathToFileURL(file).href;
}

/** A temporary directory (realpath: the server stores roots resolved). */
export function tempDir(prefix: string): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}

/** Write `files` (relative path → content) under `root`. */
export function writeTree(root: string, files: Record<string, string | Buffer>): void {
  for (const [relative, content] of Object.entries(files)) {
    const file = path.join(root, relative);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
  }
}

/** Capabilities like those VS Code 1.91's language client (v9) sends. */
export const VSCODE_CAPABILITIES = {
  general: {
    positionEncodings: ["utf-16"],
    markdown: { parser: "marked", version: "1.1.0" },
    staleRequestSupport: { cancel: true, retryOnContentModified: [] },
  },
  workspace: {
    applyEdit: true,
    workspaceEdit: { documentChanges: true },
    didChangeConfiguration: { dynamicRegistration: true },
    didChangeWatchedFiles: { dynamicRegistration: true, relativePatternSupport: true },
    executeCommand: { dynamicRegistration: true },
    configuration: true,
    workspaceFolders: true,
    codeLens: { refreshSupport: true },
    diagnostics: { refreshSupport: true },
    semanticTokens: { refreshSupport: true },
  },
  textDocument: {
    synchronization: { dynamicRegistration: true, willSave: true, willSaveWaitUntil: true, didSave: true },
    hover: { dynamicRegistration: true, contentFormat: ["markdown", "plaintext"] },
    codeLens: { dynamicRegistration: true },
    codeAction: {
      dynamicRegistration: true,
      isPreferredSupport: true,
      disabledSupport: true,
      dataSupport: true,
      resolveSupport: { properties: ["edit"] },
      codeActionLiteralSupport: {
        codeActionKind: {
          valueSet: ["", "quickfix", "refactor", "refactor.extract", "refactor.inline", "refactor.rewrite", "source", "source.organizeImports"],
        },
      },
      honorsChangeAnnotations: false,
    },
    publishDiagnostics: {
      relatedInformation: true,
      versionSupport: false,
      tagSupport: { valueSet: [1, 2] },
      codeDescriptionSupport: true,
      dataSupport: true,
    },
    diagnostic: { dynamicRegistration: true, relatedDocumentSupport: false },
  },
  window: {
    showMessage: { messageActionItem: { additionalPropertiesSupport: true } },
    showDocument: { support: true },
    workDoneProgress: true,
  },
};

export interface MessageRequest {
  type: number;
  message: string;
  actions?: { title: string }[];
}

export interface Options {
  folders: string[];
  home: string;
  settings?: Partial<ExtensionSettings>;
  /** Answers `window/showMessageRequest` (default: dismiss). */
  answerMessage?: (request: MessageRequest) => string | undefined;
}

export class RealServer implements ServerPort {
  readonly logs: string[] = [];
  readonly shownMessages: { type: number; message: string }[] = [];
  readonly messageRequests: MessageRequest[] = [];
  readonly shownDocuments: { uri: string; external?: boolean; takeFocus?: boolean }[] = [];
  readonly diagnostics = new Map<string, unknown[]>();
  readonly registrations: { id: string; method: string; registerOptions?: unknown }[] = [];
  capabilities: Record<string, unknown> = {};
  private readonly notifications = new Map<string, Listeners<[unknown]>>();
  private readonly started = new Listeners<[]>();
  private readonly requestHandlers = new Map<string, (params: unknown) => Promise<unknown>>();
  answerMessage: (request: MessageRequest) => string | undefined;

  private constructor(
    readonly process: ChildProcess,
    readonly connection: MessageConnection,
    readonly settings: ExtensionSettings,
    answerMessage: ((request: MessageRequest) => string | undefined) | undefined,
  ) {
    this.answerMessage = answerMessage ?? (() => undefined);
  }

  /** Start the server the way the extension does (its launch settings) and initialize it. */
  static async start(options: Options): Promise<RealServer> {
    const settings: ExtensionSettings = {
      ...DEFAULT_SETTINGS,
      serverCommand: serverCommand(),
      home: options.home,
      ...options.settings,
    };
    const launch = serverLaunch(settings, { ...process.env, RUTTER_DATABASE_URL: undefined });
    const child = spawn(launch.command, launch.args, { env: launch.env, stdio: ["pipe", "pipe", "pipe"] });
    const connection = createMessageConnection(
      new StreamMessageReader(child.stdout),
      new StreamMessageWriter(child.stdin),
    );
    const server = new RealServer(child, connection, settings, options.answerMessage);
    child.stderr.on("data", (chunk: Buffer) => server.logs.push(chunk.toString()));
    server.listen();
    connection.listen();
    const folders = options.folders.map((folder) => ({ uri: uriOf(folder), name: path.basename(folder) }));
    const result = await connection.sendRequest<{ capabilities: Record<string, unknown> }>("initialize", {
      processId: process.pid,
      clientInfo: { name: "Visual Studio Code", version: "1.91.0" },
      locale: "en",
      rootPath: options.folders[0] ?? null,
      rootUri: folders[0]?.uri ?? null,
      capabilities: VSCODE_CAPABILITIES,
      initializationOptions: { rutter: serverSettings(settings) },
      trace: "off",
      workspaceFolders: folders,
    });
    server.capabilities = result.capabilities;
    await connection.sendNotification("initialized", {});
    server.started.fire();
    return server;
  }

  private listen(): void {
    const connection = this.connection;
    // What VS Code answers for `workspace/configuration` section "rutter": the whole section,
    // with the extension's own keys next to the server's.
    connection.onRequest("workspace/configuration", (params: { items: { section?: string }[] }) =>
      params.items.map((item) =>
        item.section === "rutter"
          ? {
              server: { command: this.settings.serverCommand, args: this.settings.serverArgs },
              home: this.settings.home,
              databaseUrl: this.settings.databaseUrl,
              logLevel: this.settings.logLevel,
              agentDiagnostics: this.settings.agentDiagnostics,
            }
          : null,
      ),
    );
    connection.onRequest("client/registerCapability", (params: { registrations: { id: string; method: string; registerOptions?: unknown }[] }) => {
      this.registrations.push(...params.registrations);
      return null;
    });
    connection.onRequest("client/unregisterCapability", () => null);
    connection.onRequest("window/workDoneProgress/create", () => null);
    connection.onRequest("workspace/diagnostic/refresh", () => null);
    connection.onRequest("workspace/codeLens/refresh", () => null);
    connection.onRequest("window/showMessageRequest", (params: MessageRequest) => {
      this.messageRequests.push(params);
      // The extension's own handler (app.ts) when it registered one, as in VS Code.
      const own = this.requestHandlers.get("window/showMessageRequest");
      if (own !== undefined) {
        return own(params);
      }
      const title = this.answerMessage(params);
      return title === undefined ? null : { title };
    });
    connection.onRequest("window/showDocument", (params: { uri: string; external?: boolean; takeFocus?: boolean }) => {
      this.shownDocuments.push(params);
      return { success: true };
    });
    connection.onNotification("window/showMessage", (params: { type: number; message: string }) => {
      this.shownMessages.push(params);
    });
    connection.onNotification("window/logMessage", (params: { message: string }) => {
      this.logs.push(params.message);
    });
    connection.onNotification("textDocument/publishDiagnostics", (params: { uri: string; diagnostics: unknown[] }) => {
      this.diagnostics.set(params.uri, params.diagnostics);
    });
    connection.onNotification("$/progress", () => undefined);
    connection.onNotification((method: string, params: unknown) => {
      this.notifications.get(method)?.fire(params);
    });
  }

  async request<R>(method: string, params: unknown): Promise<R> {
    return this.connection.sendRequest<R>(method, params);
  }

  onNotification(method: string, handler: (params: unknown) => void): Disposable {
    let listeners = this.notifications.get(method);
    if (listeners === undefined) {
      listeners = new Listeners();
      this.notifications.set(method, listeners);
    }
    return listeners.add(handler);
  }

  onRequest(method: string, handler: (params: unknown) => Promise<unknown>): Disposable {
    this.requestHandlers.set(method, handler);
    return { dispose: () => this.requestHandlers.delete(method) };
  }

  onDidStart(handler: () => void): Disposable {
    return this.started.add(handler);
  }

  restart(): Promise<void> {
    return Promise.reject(new Error("not supported by the test server"));
  }

  showLog(): void {}

  async open(file: string, languageId = "markdown"): Promise<string> {
    const uri = uriOf(file);
    await this.connection.sendNotification("textDocument/didOpen", {
      textDocument: { uri, languageId, version: 1, text: fs.readFileSync(file, "utf8") },
    });
    return uri;
  }

  /** What VS Code's file watcher sends for the server's registered watchers. */
  async changed(files: { file: string; type: 1 | 2 | 3 }[]): Promise<void> {
    await this.connection.sendNotification("workspace/didChangeWatchedFiles", {
      changes: files.map(({ file, type }) => ({ uri: uriOf(file), type })),
    });
  }

  async executeCommand<R>(command: string, args: unknown[]): Promise<R> {
    return this.connection.sendRequest<R>("workspace/executeCommand", { command, arguments: args });
  }

  async stop(): Promise<number | null> {
    const exited = new Promise<number | null>((resolve) => {
      if (this.process.exitCode !== null) {
        resolve(this.process.exitCode);
      } else {
        this.process.once("exit", (code) => resolve(code));
      }
    });
    try {
      await this.connection.sendRequest("shutdown");
      await this.connection.sendNotification("exit");
    } catch {
      this.process.kill();
    }
    const code = await exited;
    this.connection.dispose();
    return code;
  }
}

/** Wait until `check` returns a value (bounded: fails the test after `timeoutMs`). */
export async function waitFor<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 20000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) {
      return value;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A workspace "shop" served by a real server, with the extension started on it (a fake
 * editor showing shop/main.go) and the extension's memory document store. */
export interface MemoryWorkspace {
  home: string;
  root: string;
  server: RealServer;
  editor: FakeEditor;
  rutter: Rutter;
  store: DocumentStore;
}

export async function startMemoryWorkspace(): Promise<MemoryWorkspace> {
  const home = tempDir("rutter-home-");
  const root = path.join(tempDir("rutter-ws-"), "shop");
  writeTree(root, { "AGENTS.md": "root workflow\n", "main.go": "package main\n" });
  const server = await RealServer.start({ folders: [root], home });
  const editor = new FakeEditor();
  const rutter = startRutter({ editor, server });
  const file = path.join(root, "main.go");
  editor.setActiveFile({ uri: uriOf(file), path: file, folder: root });
  await waitFor("the workspace", () => rutter.instructions.workspaceId);
  const store = editor.stores.get(MEMORY_SCHEME);
  assert.ok(store);
  return { home, root, server, editor, rutter, store };
}

/** Dispose the extension and stop the server, which must exit with status 0. */
export async function stopMemoryWorkspace(workspace: MemoryWorkspace): Promise<void> {
  workspace.rutter.dispose();
  const code = await workspace.server.stop();
  assert.equal(code, 0, workspace.server.logs.join(""));
}
