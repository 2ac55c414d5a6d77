/**
 * From the extension's settings to the server process and its `rutter` settings.
 *
 * The process-level settings (`rutter.server.*`, `rutter.home`) need a restart; the server
 * follows `rutter.databaseUrl`, `rutter.logLevel` and `rutter.agentDiagnostics` itself (it re-reads its `rutter`
 * configuration section on `workspace/didChangeConfiguration`).
 */

import type { ExtensionSettings } from "./ports";

export const SECTION = "rutter";
export const DEFAULT_COMMAND = "rutter-lsp";
/** `rutter.agentDiagnostics`' default: every agent profile diagnoses instruction files. */
export const DIAGNOSED_AGENTS = ["codex", "claude", "gemini", "copilot", "cursor"] as const;

/** Settings whose change restarts the server. */
export const RESTART_SETTINGS = ["rutter.server", "rutter.home"] as const;

export interface ServerLaunch {
  command: string;
  args: string[];
  env: Record<string, string | undefined>;
}

/** The server's command line and environment (RUTTER_HOME from `rutter.home`). */
export function serverLaunch(
  settings: ExtensionSettings,
  env: Record<string, string | undefined>,
): ServerLaunch {
  const command = settings.serverCommand.trim() || DEFAULT_COMMAND;
  const launchEnv = { ...env };
  const home = settings.home.trim();
  if (home !== "") {
    launchEnv.RUTTER_HOME = home;
  }
  return { command, args: [...settings.serverArgs], env: launchEnv };
}

/** The server's own settings (`initializationOptions`; also what `workspace/configuration`
 * answers for section "rutter", where the server ignores the extension's other keys). */
export function serverSettings(settings: ExtensionSettings): Record<string, unknown> {
  return {
    databaseUrl: settings.databaseUrl.trim() === "" ? null : settings.databaseUrl.trim(),
    logLevel: settings.logLevel,
    agentDiagnostics: [...settings.agentDiagnostics],
  };
}

export function needsRestart(affects: (section: string) => boolean): boolean {
  return RESTART_SETTINGS.some((section) => affects(section));
}

/** Settings read from an untyped configuration object, with the package.json defaults. */
export function readSettings(get: (key: string) => unknown): ExtensionSettings {
  const text = (key: string, fallback: string): string => {
    const value = get(key);
    return typeof value === "string" ? value : fallback;
  };
  const args = get("server.args");
  const agents = get("agentDiagnostics");
  return {
    serverCommand: text("server.command", DEFAULT_COMMAND),
    serverArgs: Array.isArray(args) ? args.filter((item) => typeof item === "string") : [],
    home: text("home", ""),
    databaseUrl: text("databaseUrl", ""),
    logLevel: text("logLevel", "info"),
    agentDiagnostics: Array.isArray(agents)
      ? agents.filter((item): item is string => typeof item === "string")
      : [...DIAGNOSED_AGENTS],
  };
}
