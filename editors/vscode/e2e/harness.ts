/**
 * A real VS Code for the end-to-end suite: code-server (installed by `e2e/install.mjs` into its
 * version-keyed cache) with the freshly built `rutter.vsix`, the example monorepo of
 * `docs/examples/monorepo` (copied, made a git repository) as its folder, and Debian's Chromium
 * driven by playwright-core.
 *
 * Everything lives under one temporary directory: HOME, the XDG directories, code-server's
 * user-data and extensions directories, RUTTER_HOME and the workspace. code-server runs in its
 * own process group, which `stop()` ends whole (the extension host and the language server
 * included), also when a test failed.
 *
 * Screenshots go to `e2e/artifacts/` (gitignored), one per step, numbered in order.
 */

import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";

import { type Browser, type Page, chromium } from "playwright-core";

export const EXTENSION_DIR = path.resolve(__dirname, "..");
export const REPO = path.resolve(EXTENSION_DIR, "../..");
export const ARTIFACTS = path.join(EXTENSION_DIR, "e2e", "artifacts");
export const VSIX = process.env.RUTTER_E2E_VSIX ?? path.join(EXTENSION_DIR, "rutter.vsix");
export const EXAMPLE = path.join(REPO, "docs", "examples", "monorepo");
/** The folder name, and so the workspace name the extension registers. */
export const WORKSPACE = "monorepo";
/** A generous bound for anything the editor does; waits are for events, never for time. */
export const PATIENCE = 60_000;

/** Debian's Chromium and the flags it needs here (issue 19); playwright-core launches it with
 * a fresh temporary profile each time. */
const CHROMIUM = process.env.RUTTER_E2E_CHROMIUM ?? "/usr/bin/chromium";
const CHROMIUM_FLAGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-dev-shm-usage",
];
export const VIEWPORT = { width: 1280, height: 800 };

function cacheRoot(): string {
  if (process.env.RUTTER_E2E_CACHE) {
    return path.resolve(process.env.RUTTER_E2E_CACHE);
  }
  return path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "rutter-e2e");
}

/** The launcher installed by e2e/install.mjs (keep the version in step with it). */
export function codeServerBin(): string {
  return path.join(cacheRoot(), "code-server-4.100.3", "node_modules", ".bin", "code-server");
}

export function rutterCli(): string {
  return process.env.RUTTER_CLI_COMMAND ?? path.join(REPO, ".venv", "bin", "rutter");
}

export function rutterLsp(): string {
  return process.env.RUTTER_LSP_COMMAND ?? path.join(REPO, ".venv", "bin", "rutter-lsp");
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === "object") {
          resolve(address.port);
        } else {
          reject(new Error("no port"));
        }
      });
    });
  });
}

function git(root: string, ...args: string[]): void {
  execFileSync("git", ["-C", root, "-c", "user.name=rutter e2e", "-c", "user.email=e2e@rutter.invalid", ...args], {
    stdio: "ignore",
  });
}

/** Resolves when `output` has printed a line matching `pattern`; rejects if it exits first. */
function waitForOutput(child: ChildProcess, pattern: RegExp, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = "";
    const timer = setTimeout(() => reject(new Error(`${what}: no "${pattern.source}" after ${PATIENCE} ms:\n${seen}`)), PATIENCE);
    const onData = (chunk: Buffer): void => {
      seen += chunk.toString("utf8");
      if (pattern.test(seen)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (${code ?? signal}) before "${pattern.source}":\n${seen}`));
    });
  });
}

export interface EditorOptions {
  /** Workspace-relative file opened first (none: only the folder). */
  readonly prefix?: string;
}

/** A running code-server with the extension, a browser page on it, and the test's own data. */
export class Editor {
  private step = 0;

  private constructor(
    readonly base: string,
    readonly root: string,
    readonly home: string,
    readonly page: Page,
    private readonly browser: Browser,
    private readonly server: ChildProcess,
    readonly url: string,
  ) {}

  static async start(): Promise<Editor> {
    for (const file of [codeServerBin(), VSIX, rutterCli(), rutterLsp()]) {
      if (!fs.existsSync(file)) {
        throw new Error(`${file} is missing: run e2e/install.mjs, npm run package and make sync first`);
      }
    }
    fs.rmSync(ARTIFACTS, { recursive: true, force: true });
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "rutter-e2e-")));
    const dirs = {
      home: path.join(base, "home"),
      config: path.join(base, "xdg", "config"),
      data: path.join(base, "xdg", "data"),
      cache: path.join(base, "xdg", "cache"),
      state: path.join(base, "xdg", "state"),
      userData: path.join(base, "user-data"),
      extensions: path.join(base, "extensions"),
      rutterHome: path.join(base, "rutter-home"),
    };
    for (const dir of Object.values(dirs)) {
      fs.mkdirSync(dir, { recursive: true });
    }
    const root = path.join(base, "work", WORKSPACE);
    fs.cpSync(EXAMPLE, root, { recursive: true });
    git(root, "init", "-q", "-b", "main");
    git(root, "add", "-A");
    git(root, "commit", "-q", "-m", "example monorepo");

    fs.mkdirSync(path.join(dirs.userData, "User"), { recursive: true });
    const settings = {
      "git.enabled": false,
      "security.workspace.trust.enabled": false,
      "telemetry.telemetryLevel": "off",
      "update.mode": "none",
      "extensions.autoCheckUpdates": false,
      "extensions.autoUpdate": false,
      "extensions.ignoreRecommendations": true,
      "workbench.startupEditor": "none",
      "workbench.tips.enabled": false,
      "workbench.enableExperiments": false,
      "workbench.welcomePage.walkthroughs.openOnInstall": false,
      "chat.commandCenter.enabled": false,
      "window.commandCenter": false,
      "editor.minimap.enabled": false,
      // One view line per document line (the page objects read lines; Markdown wraps by default).
      "editor.wordWrap": "off",
      "[markdown]": { "editor.wordWrap": "off" },
      "editor.hover.delay": 300,
      "files.autoSave": "off",
      "rutter.server.command": rutterLsp(),
      "rutter.home": dirs.rutterHome,
    };
    fs.writeFileSync(path.join(dirs.userData, "User", "settings.json"), `${JSON.stringify(settings, null, 2)}\n`);

    const env: Record<string, string | undefined> = {
      ...process.env,
      HOME: dirs.home,
      XDG_CONFIG_HOME: dirs.config,
      XDG_DATA_HOME: dirs.data,
      XDG_CACHE_HOME: dirs.cache,
      XDG_STATE_HOME: dirs.state,
      RUTTER_HOME: dirs.rutterHome,
      RUTTER_DATABASE_URL: "",
      // code-server must not take these over from a terminal inside another code-server.
      VSCODE_IPC_HOOK_CLI: undefined,
      PASSWORD: undefined,
      HASHED_PASSWORD: undefined,
    };
    const common = ["--user-data-dir", dirs.userData, "--extensions-dir", dirs.extensions];
    execFileSync(codeServerBin(), [...common, "--install-extension", VSIX], { env, stdio: "ignore" });

    const port = await freePort();
    const server = spawn(
      codeServerBin(),
      [
        ...common,
        "--auth",
        "none",
        "--bind-addr",
        `127.0.0.1:${port}`,
        "--disable-telemetry",
        "--disable-update-check",
        "--disable-workspace-trust",
        "--disable-getting-started-override",
        "--ignore-last-opened",
        "--config",
        path.join(dirs.config, "code-server", "config.yaml"),
      ],
      { env, detached: true, stdio: ["ignore", "pipe", "pipe"] },
    );
    // Should this process end without stop() (an interrupt), the group goes with it.
    const killGroup = (): void => {
      try {
        if (server.pid !== undefined) {
          process.kill(-server.pid, "SIGKILL");
        }
      } catch {
        // already gone
      }
    };
    process.once("exit", killGroup);
    server.once("exit", () => process.removeListener("exit", killGroup));
    const log = fs.createWriteStream(path.join(ARTIFACTS, "code-server.log"));
    server.stdout.pipe(log);
    server.stderr.pipe(log);
    let browser: Browser | undefined;
    try {
      await waitForOutput(server, /HTTP server listening/, "code-server");
      browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS, headless: true });
      const context = await browser.newContext({ viewport: VIEWPORT, deviceScaleFactor: 1 });
      const page = await context.newPage();
      page.setDefaultTimeout(PATIENCE);
      const url = `http://127.0.0.1:${port}/?folder=${encodeURIComponent(root)}`;
      await page.goto(url);
      await page.locator(".monaco-workbench").waitFor();
      return new Editor(base, root, dirs.rutterHome, page, browser, server, url);
    } catch (error) {
      await browser?.close().catch(() => undefined);
      await stopGroup(server);
      throw error;
    }
  }

  /** The `rutter` CLI on this editor's RUTTER_HOME. */
  cli(...args: string[]): string {
    return execFileSync(rutterCli(), args, {
      env: { ...process.env, RUTTER_HOME: this.home, RUTTER_DATABASE_URL: "" },
      encoding: "utf8",
    });
  }

  /** `rutter … --json`, parsed. */
  cliJson<T>(...args: string[]): T {
    return JSON.parse(this.cli(...args, "--json")) as T;
  }

  /** Call one tool of `rutter mcp` (the agents' MCP server, over stdio, as an agent does):
   * initialize, then `tools/call`; returns the tool's structured result. */
  async mcpTool<T>(name: string, args: Record<string, unknown>): Promise<T> {
    const child = spawn(rutterCli(), ["mcp"], {
      env: { ...process.env, RUTTER_HOME: this.home, RUTTER_DATABASE_URL: "" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const answers = new Map<number, (message: McpMessage) => void>();
    let buffered = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      buffered += chunk;
      let newline = buffered.indexOf("\n");
      while (newline >= 0) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (line !== "") {
          const message = JSON.parse(line) as McpMessage;
          if (typeof message.id === "number") {
            answers.get(message.id)?.(message);
          }
        }
        newline = buffered.indexOf("\n");
      }
    });
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    const request = (id: number, method: string, params: unknown): Promise<McpMessage> =>
      new Promise((resolve, reject) => {
        answers.set(id, resolve);
        child.once("exit", () => reject(new Error(`rutter mcp exited before answering ${method}`)));
        child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
      });
    try {
      await request(1, "initialize", {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "rutter-e2e", version: "1" },
      });
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
      const answer = await request(2, "tools/call", { name, arguments: args });
      const result = answer.result as { isError?: boolean; structuredContent?: T } | undefined;
      if (result === undefined || result.isError === true || result.structuredContent === undefined) {
        throw new Error(`rutter mcp ${name} failed: ${JSON.stringify(answer)}`);
      }
      return result.structuredContent;
    } finally {
      child.stdin.end();
      await exited;
    }
  }

  /** The Rutter output channel's log so far (what "Rutter: Show Server Log" shows). */
  rutterLog(): string {
    const logs = path.join(this.base, "user-data", "logs");
    const found: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) {
          walk(full);
        } else if (entry.name === "Rutter.log") {
          found.push(full);
        }
      }
    };
    if (fs.existsSync(logs)) {
      walk(logs);
    }
    return found.map((file) => fs.readFileSync(file, "utf8")).join("\n");
  }

  /** Screenshot of the whole window (or of its top `height` pixels: a document dense with
   * text, whose picture would otherwise be large) into the artefacts folder; returns its path. */
  async screenshot(name: string, height?: number): Promise<string> {
    this.step += 1;
    const file = path.join(ARTIFACTS, `${String(this.step).padStart(2, "0")}-${name}.png`);
    const clip = height === undefined ? undefined : { x: 0, y: 0, width: VIEWPORT.width, height };
    await this.page.screenshot(clip === undefined ? { path: file } : { path: file, clip });
    return file;
  }

  /** Close the browser and end code-server's whole process group; keep VS Code's logs (the
   * extension host's, the Rutter output channel's) in the artefacts, remove the rest. */
  async stop(): Promise<void> {
    try {
      await this.browser.close();
    } finally {
      await stopGroup(this.server);
      const logs = path.join(this.base, "user-data", "logs");
      if (fs.existsSync(logs)) {
        fs.cpSync(logs, path.join(ARTIFACTS, "logs"), { recursive: true });
      }
      fs.rmSync(this.base, { recursive: true, force: true });
    }
  }
}

/** SIGTERM to the process group, SIGKILL to what is left of it when the leader has exited. */
async function stopGroup(child: ChildProcess): Promise<void> {
  const pid = child.pid;
  if (pid === undefined) {
    return;
  }
  const exited =
    child.exitCode !== null || child.signalCode !== null
      ? Promise.resolve()
      : new Promise<void>((resolve) => child.once("exit", () => resolve()));
  try {
    process.kill(-pid, "SIGTERM");
  } catch {
    return;
  }
  const timer = setTimeout(() => {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // already gone
    }
  }, 10_000);
  await exited;
  clearTimeout(timer);
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // the group is gone
  }
}

interface McpMessage {
  id?: number;
  result?: unknown;
  error?: unknown;
}
