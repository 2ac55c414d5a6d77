import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { startRutter } from "../../src/app";
import { AgentCommands } from "../../src/agents";
import {
  AGENT_CHOICES,
  agentHeaderText,
  agentLabel,
  agentNodes,
  compareText,
  sizeText,
  truncationText,
} from "../../src/agentsView";
import { AGENT_STATE_KEY } from "../../src/instructions";
import type { ProfileView, Snapshot } from "../../src/protocol";
import { Methods } from "../../src/protocol";
import { FakeEditor, FakeServer, outline, settle } from "../fakes";

const CUT = { byte: 32768, line: 412, lost_bytes: 3174 };

function codex(): ProfileView {
  return {
    agent: "codex",
    sources: [
      { path: "AGENTS.md", why: "project root AGENTS.md", truncation: null },
      { path: "services/api/AGENTS.md", why: "AGENTS.md of services/api", truncation: CUT },
    ],
  };
}

function claude(): ProfileView {
  return { agent: "claude", sources: [{ path: "CLAUDE.md", why: "CLAUDE.md at the project root", truncation: null }, { path: "AGENTS.md", why: "fallback", truncation: null }] };
}

describe("agent formatters", () => {
  it("names the agents as people do", () => {
    assert.deepEqual(AGENT_CHOICES.map(agentLabel), ["rutter (default)", "Codex", "Claude Code", "Gemini CLI", "Copilot", "Cursor"]);
    assert.equal(agentLabel("other"), "other");
  });

  it("says sizes and cuts in bytes, KiB and MiB", () => {
    assert.equal(sizeText(312), "312 B");
    assert.equal(sizeText(3174), "3.1 KiB");
    assert.equal(sizeText(5 * 1024 * 1024 + 200_000), "5.2 MiB");
    assert.equal(truncationText(CUT), "cut at line 412, 3.1 KiB lost");
  });

  it("lists an agent's sources in its order, with the cut and why, each opening its file", () => {
    const nodes = agentNodes(codex(), "/w");
    assert.deepEqual(outline(nodes), [
      "Codex: 2 sources in its load order; 1 cut",
      "1. AGENTS.md — project root AGENTS.md",
      "2. services/api/AGENTS.md — cut at line 412, 3.1 KiB lost · AGENTS.md of services/api",
    ]);
    assert.equal(nodes[2]?.icon, "warning");
    assert.match(nodes[2]?.tooltip ?? "", /keeps bytes 0 to 32767/);
    assert.deepEqual(nodes[1]?.command?.arguments, ["/w/AGENTS.md"]);
    assert.equal(agentHeaderText(claude()), "Claude Code: 2 sources in its load order");
    assert.deepEqual(outline(agentNodes({ agent: "cursor", sources: [] }, "/w")), ["Cursor loads no instruction file for this file"]);
  });

  it("puts every agent side by side, marking files only some load and each cut", () => {
    const text = compareText("services/api/main.go", [codex(), claude(), { agent: "cursor", sources: [] }]);
    const lines = text.split("\n");
    assert.equal(lines[0], "# What each agent loads for services/api/main.go");
    assert.ok(lines.includes("| File | Codex | Claude Code | Cursor | Loaded by |"));
    assert.ok(lines.includes("| AGENTS.md | 1 | 2 | — | only 2 of 3 |"));
    assert.ok(lines.includes("| services/api/AGENTS.md | 2 ✂ cut at line 412, 3.1 KiB lost | — | — | only 1 of 3 |"));
    assert.ok(lines.includes("| CLAUDE.md | — | 1 | — | only 1 of 3 |"));
    assert.ok(lines.includes("2. `services/api/AGENTS.md` — ✂ cut at line 412, 3.1 KiB lost (byte 32768): AGENTS.md of services/api"));
    assert.ok(lines.includes("## Cursor"));
    assert.ok(lines.includes("Loads no instruction file for this file."));
    const all = compareText("x", [codex(), codex()]);
    assert.match(all, /\| AGENTS\.md \| 1 \| 1 \| all \|/);
    assert.match(compareText("x", [{ agent: "codex", sources: [] }]), /No agent loads an instruction file for this file\./);
  });

  it("escapes a pipe in a path inside the table", () => {
    const text = compareText("x", [{ agent: "codex", sources: [{ path: "a|b/AGENTS.md", why: "w", truncation: null }] }]);
    assert.match(text, /\| a\\\|b\/AGENTS\.md \| 1 \| all \|/);
  });
});

const FILE = { uri: "file:///w/services/api/main.go", path: "/w/services/api/main.go", folder: "/w" };

function snapshot(): Snapshot {
  return {
    protocol_version: "project_instruction_snapshot.v1", workspace_id: "ws", target_path: "services/api/main.go",
    fingerprint: "f".repeat(64), loaded_at: "",
    sources: [{ ordinal: 1, path: "AGENTS.md", kind: "agents", scope: ".", depth: 0, precedence: 0, why_effective: "root", redacted: false, redactions: [], content_sha256: "0" }],
    ignored: [], conflicts: [],
  };
}

function setup(state: Record<string, unknown> = {}, fail?: { code: string; message: string }) {
  const editor = new FakeEditor();
  for (const [key, value] of Object.entries(state)) {
    editor.workspaceState.set(key, value);
  }
  const server = new FakeServer((method, params) => {
    if (method !== Methods.effectiveInstructions) {
      return { runs: [], items: [], has_more: false, proposals: [], pins: [] };
    }
    const profile = (params as { profile?: string }).profile;
    if (profile !== undefined && fail !== undefined) {
      throw Object.assign(new Error("x"), { data: fail });
    }
    if (profile === "all") {
      return { profiles: [codex(), claude()] };
    }
    if (profile === "codex") {
      return codex();
    }
    if (profile === "claude") {
      return claude();
    }
    return snapshot();
  });
  const rutter = startRutter({ editor, server });
  editor.setActiveFile(FILE);
  return { editor, server, rutter };
}

function profilesAsked(server: FakeServer): unknown[] {
  return server.sent
    .filter((sent) => sent.method === Methods.effectiveInstructions)
    .map((sent) => (sent.params as { profile?: string }).profile);
}

describe("Instructions for Agent…", () => {
  it("switches the view to the picked agent, names it in the description, and keeps the choice", async () => {
    const { editor, server, rutter } = setup();
    await settle();
    assert.equal(editor.viewDescriptions.get("rutter.instructions"), "services/api/main.go");
    editor.pickAnswers = [(items) => items.find((item) => item.label === "Codex")?.value];
    assert.equal(await editor.run(AgentCommands.choose), "codex");
    assert.deepEqual(editor.picks[0]?.items.map((item) => [item.label, item.description]), [
      ["rutter (default)", "the stack runs pin · shown now"],
      ["Codex", "codex"], ["Claude Code", "claude"], ["Gemini CLI", "gemini"], ["Copilot", "copilot"], ["Cursor", "cursor"],
    ]);
    assert.equal(rutter.instructions.agent, "codex");
    assert.equal(editor.workspaceState.get(AGENT_STATE_KEY), "codex");
    assert.equal(editor.viewDescriptions.get("rutter.instructions"), "services/api/main.go · Codex");
    assert.equal(outline(editor.tree("rutter.instructions"))[0], "Codex: 2 sources in its load order; 1 cut");
    assert.equal(profilesAsked(server).at(-1), "codex");
    // The status bar still counts the default stack.
    assert.match(editor.status?.text ?? "", /1/);
    await editor.run(AgentCommands.choose, "default");
    assert.equal(outline(editor.tree("rutter.instructions"))[0], "1 source in delivery order; higher precedence wins where sources conflict");
    assert.equal(editor.viewDescriptions.get("rutter.instructions"), "services/api/main.go");
  });

  it("starts on the agent kept in the workspace state", async () => {
    const { editor, server } = setup({ [AGENT_STATE_KEY]: "claude" });
    await settle();
    assert.deepEqual(profilesAsked(server), [undefined, "claude"]);
    assert.equal(outline(editor.tree("rutter.instructions"))[0], "Claude Code: 2 sources in its load order");
  });

  it("ignores a kept value that is no agent, and a dismissed pick changes nothing", async () => {
    const { editor, rutter } = setup({ [AGENT_STATE_KEY]: "vim" });
    await settle();
    assert.equal(rutter.instructions.agent, "default");
    editor.pickAnswers = [() => undefined];
    assert.equal(await editor.run(AgentCommands.choose), undefined);
    assert.equal(rutter.instructions.agent, "default");
  });

  it("shows the typed reason when the agent's view fails", async () => {
    const { editor } = setup({ [AGENT_STATE_KEY]: "codex" }, { code: "unreadable", message: "a source is not UTF-8" });
    await settle();
    assert.deepEqual(outline(editor.tree("rutter.instructions")), ["No answer for Codex — unreadable", "  a source is not UTF-8"]);
  });
});

describe("Compare Agents for This File", () => {
  it("opens every agent's view of the shown file side by side", async () => {
    const { editor, server } = setup();
    await settle();
    await editor.run(AgentCommands.compare);
    assert.equal(profilesAsked(server).at(-1), "all");
    const shown = editor.rendered.at(-1);
    assert.deepEqual(editor.readOnly, [], "rendered, not opened as source");
    assert.equal(shown?.name, "agents-main.go.md");
    assert.equal(shown?.language, "markdown");
    assert.match(shown?.text ?? "", /^# What each agent loads for services\/api\/main\.go/);
    assert.match(shown?.text ?? "", /\| File \| Codex \| Claude Code \| Loaded by \|/);
  });

  it("says why when the comparison fails, and asks for a file when none is open", async () => {
    const { editor } = setup({}, { code: "discovery_failed", message: "an import loops" });
    await settle();
    await editor.run(AgentCommands.compare);
    assert.equal(editor.messages.at(-1)?.text, "rutter: cannot compare the agents for this file (discovery_failed): an import loops");
    const bare = new FakeEditor();
    startRutter({ editor: bare, server: new FakeServer(() => ({})) });
    await bare.run(AgentCommands.compare);
    assert.match(bare.messages.at(-1)?.text ?? "", /^rutter: open a file first/);
  });
});
