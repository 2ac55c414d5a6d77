import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { needsRestart, readSettings, serverLaunch, serverSettings } from "../../src/settings";
import { DEFAULT_SETTINGS } from "../fakes";

describe("serverLaunch", () => {
  it("runs rutter-lsp by default, with the environment as is", () => {
    const launch = serverLaunch(DEFAULT_SETTINGS, { PATH: "/bin" });
    assert.deepEqual(launch, { command: "rutter-lsp", args: [], env: { PATH: "/bin" } });
  });

  it("passes rutter.home as RUTTER_HOME, and the configured command and args", () => {
    const launch = serverLaunch(
      { ...DEFAULT_SETTINGS, serverCommand: " /usr/bin/python3 ", serverArgs: ["-m", "rutter_lsp", "serve"], home: "/data/rutter" },
      { PATH: "/bin", RUTTER_HOME: "/old" },
    );
    assert.deepEqual(launch, {
      command: "/usr/bin/python3",
      args: ["-m", "rutter_lsp", "serve"],
      env: { PATH: "/bin", RUTTER_HOME: "/data/rutter" },
    });
  });

  it("falls back to rutter-lsp for an empty command", () => {
    assert.equal(serverLaunch({ ...DEFAULT_SETTINGS, serverCommand: "  " }, {}).command, "rutter-lsp");
  });
});

describe("serverSettings", () => {
  it("sends an empty database URL as null (the server's default)", () => {
    assert.deepEqual(serverSettings(DEFAULT_SETTINGS), {
      databaseUrl: null,
      logLevel: "info",
      agentDiagnostics: ["codex", "claude", "gemini", "copilot", "cursor"],
    });
    assert.deepEqual(serverSettings({ ...DEFAULT_SETTINGS, databaseUrl: "sqlite:////x.db", logLevel: "debug", agentDiagnostics: [] }), {
      databaseUrl: "sqlite:////x.db",
      logLevel: "debug",
      agentDiagnostics: [],
    });
  });

  it("passes rutter.agentDiagnostics through as the server's agentDiagnostics", () => {
    assert.deepEqual(serverSettings({ ...DEFAULT_SETTINGS, agentDiagnostics: ["codex", "claude"] }).agentDiagnostics, ["codex", "claude"]);
  });
});

describe("needsRestart", () => {
  it("restarts for the server's command, args and home, not for what the server follows", () => {
    assert.equal(needsRestart((section) => section === "rutter.server"), true);
    assert.equal(needsRestart((section) => section === "rutter.home"), true);
    assert.equal(needsRestart(() => false), false);
  });
});

describe("readSettings", () => {
  it("uses defaults for missing or mistyped values", () => {
    const values: Record<string, unknown> = { "server.command": 3, "server.args": ["--log-level", 7, "debug"], home: "/h" };
    assert.deepEqual(readSettings((key) => values[key]), {
      serverCommand: "rutter-lsp",
      serverArgs: ["--log-level", "debug"],
      home: "/h",
      databaseUrl: "",
      logLevel: "info",
      agentDiagnostics: ["codex", "claude", "gemini", "copilot", "cursor"],
    });
  });

  it("reads rutter.agentDiagnostics, dropping entries that are not strings ([] turns them off)", () => {
    const values: Record<string, unknown> = { agentDiagnostics: ["codex", 3, "cursor"] };
    assert.deepEqual(readSettings((key) => values[key]).agentDiagnostics, ["codex", "cursor"]);
    assert.deepEqual(readSettings((key) => (key === "agentDiagnostics" ? [] : undefined)).agentDiagnostics, []);
  });
});
