/**
 * Protocol tests of what exists for every file: `rutter/effectiveInstructions`, the
 * notification that refreshes it, and hover / code lens / diagnostics / server commands that
 * the language client passes through. The real server answers; its answers go through the
 * extension's own view models and controller.
 */

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";

import { startRutter } from "../../src/app";
import { instructionNodes } from "../../src/instructionsView";
import { detailsOf } from "../../src/sourceDetails";
import { workspaceRoot } from "../../src/paths";
import type { InstructionsAnswer, Snapshot } from "../../src/protocol";
import { Methods, errorDocument, instructionsAnswer, isErrorAnswer } from "../../src/protocol";
import { statusModel } from "../../src/statusBar";
import { FakeEditor, outline } from "../fakes";
import { REPO, RealServer, tempDir, uriOf, waitFor, writeTree } from "./harness";

const TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8";

function packageCommands(): string[] {
  const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, "../../package.json"), "utf8")) as {
    contributes: { commands: { command: string }[] };
  };
  return manifest.contributes.commands.map((entry) => entry.command);
}

/** `rutter/effectiveInstructions` for `file`, as the extension's controller takes the answer. */
function answerFor(server: RealServer, file: string): Promise<InstructionsAnswer> {
  return instructionsAnswer(server.request<Snapshot>(Methods.effectiveInstructions, { textDocument: { uri: uriOf(file) } }));
}

/** The JSON-RPC error a request was rejected with. */
async function rejected(pending: Promise<unknown>): Promise<{ code: number; message: string; data: unknown }> {
  try {
    await pending;
  } catch (error) {
    return error as { code: number; message: string; data: unknown };
  }
  assert.fail("the request succeeded");
}

describe("instructions against the real server", () => {
  let home: string;
  let root: string;
  let server: RealServer;
  const target = () => path.join(root, "services/api/input.go");

  before(async () => {
    home = tempDir("rutter-home-");
    root = path.join(tempDir("rutter-ws-"), "shop");
    writeTree(root, {
      "AGENTS.md": "root workflow\n",
      "CLAUDE.md": `deploy with token ${TOKEN}\n`,
      "services/api/AGENTS.md": "api rules\n",
      "services/api/AGENTS.override.md": "api override\n",
      "services/api/input.go": "package api\n",
      ".prayu/instructions.ignore": ".prayu/rules/drafts/\n",
      ".prayu/rules/drafts/wip.md": "wip\n",
      ".prayu/rules/style.md": "style\n",
      "services/api/.prayu/rules/style.md": "api style\n",
      "broken/AGENTS.md": Buffer.from([0x6f, 0x6b, 0x0a, 0xff, 0xfe, 0x0a]),
      "broken/main.go": "package main\n",
    });
    server = await RealServer.start({ folders: [root], home });
  });

  after(async () => {
    const code = await server.stop();
    assert.equal(code, 0, server.logs.join(""));
  });

  it("serves the capabilities the extension relies on, and no server command clashes with the extension's", () => {
    const caps = server.capabilities as {
      hoverProvider?: unknown;
      codeLensProvider?: unknown;
      diagnosticProvider?: unknown;
      executeCommandProvider?: { commands: string[] };
    };
    assert.ok(caps.hoverProvider);
    assert.ok(caps.codeLensProvider);
    // VS Code pulls diagnostics; the server advertises pull to such clients only.
    assert.ok(caps.diagnosticProvider);
    const serverCommands = caps.executeCommandProvider?.commands ?? [];
    assert.ok(serverCommands.includes("rutter.effectiveInstructions"));
    assert.ok(serverCommands.includes("rutter.showApplicableFiles"));
    // The language client registers every server command under its own name in VS Code.
    const clash = packageCommands().filter((command) => serverCommands.includes(command));
    assert.deepEqual(clash, []);
  });

  it("stores its data in rutter.home (RUTTER_HOME)", async () => {
    // The store opens on `initialized`; any request waits for it.
    await server.request(Methods.effectiveInstructions, { textDocument: { uri: uriOf(target()) } });
    assert.ok(fs.existsSync(path.join(home, "rutter.db")));
  });

  it("answers effectiveInstructions with what the view and status bar read", async () => {
    const answer = await answerFor(server, target());
    assert.ok(!isErrorAnswer(answer), JSON.stringify(answer));
    const snapshot: Snapshot = answer;
    assert.equal(snapshot.workspace_id, "shop");
    assert.equal(snapshot.target_path, "services/api/input.go");
    assert.match(snapshot.fingerprint, /^[0-9a-f]{64}$/);
    const rootOfAnswer = workspaceRoot(target(), snapshot.target_path);
    assert.equal(rootOfAnswer, root);
    assert.deepEqual(outline(instructionNodes(snapshot, rootOfAnswer)), [
      "5 sources in delivery order; higher precedence wins where sources conflict",
      "1. AGENTS.md — agents · workspace root · precedence 0",
      "2. CLAUDE.md — claude · workspace root · precedence 1",
      "3. .prayu/rules/style.md — prayu_rule · workspace root · precedence 10",
      "4. services/api/AGENTS.override.md — agents_override · services/api · precedence 200",
      "5. services/api/.prayu/rules/style.md — prayu_rule · services/api · precedence 210",
      "Conflicts (2)",
      "  AGENTS.md is overridden here by services/api/AGENTS.override.md — agents",
      "  .prayu/rules/style.md is overridden here by services/api/.prayu/rules/style.md — prayu_rule:style.md",
      "Ignored (2)",
      "  .prayu/rules/drafts/wip.md — ignored by .prayu/instructions.ignore:1 (pattern .prayu/rules/drafts/)",
      "  services/api/AGENTS.md — superseded by services/api/AGENTS.override.md (a non-blank AGENTS.override.md replaces AGENTS.md at its level)",
      "Redactions (1)",
      "  CLAUDE.md — github_token x1",
      `Fingerprint — ${snapshot.fingerprint.slice(0, 12)}`,
    ]);
    const nodes = instructionNodes(snapshot, rootOfAnswer);
    assert.match(nodes[1]?.tooltip ?? "", /^workspace-root AGENTS\.md; inherited by services\/api\/input\.go/);
    for (const node of nodes.slice(1, 6)) {
      const opened = node.command?.arguments[0];
      assert.ok(typeof opened === "string" && fs.existsSync(opened), `${node.label} opens ${String(opened)}`);
    }
    assert.equal(statusModel(snapshot, [])?.text, "rutter: 5");
  });

  it("fails with a JSON-RPC error whose data is the typed reason when discovery fails closed", async () => {
    const error = await rejected(
      server.request(Methods.effectiveInstructions, { textDocument: { uri: uriOf(path.join(root, "broken/main.go")) } }),
    );
    assert.equal(error.code, -32803); // LSPErrorCodes.RequestFailed
    assert.deepEqual(errorDocument(error), error.data);
    assert.match(error.message, /^invalid_utf8: /);
    const answer = await answerFor(server, path.join(root, "broken/main.go"));
    assert.ok(isErrorAnswer(answer), JSON.stringify(answer));
    assert.equal(answer.error.code, "invalid_utf8");
    assert.equal(answer.error.path, "broken/AGENTS.md");
    const [node] = instructionNodes(answer, root);
    assert.equal(node?.description, "invalid_utf8");
    assert.deepEqual(node?.children?.[1]?.command?.arguments, [path.join(root, "broken/AGENTS.md")]);
    const status = statusModel(answer, []);
    assert.equal(status?.warning, true);
    assert.equal(status?.text, "rutter: failed closed");
  });

  it("says not_registered for a file outside every folder", async () => {
    const outside = path.join(tempDir("rutter-outside-"), "x.go");
    fs.writeFileSync(outside, "x\n");
    const answer = await answerFor(server, outside);
    assert.ok(isErrorAnswer(answer));
    assert.equal(answer.error.code, "not_registered");
    assert.equal(instructionNodes(answer, undefined)[0]?.label, "Not in a workspace rutter serves");
  });

  it("keeps the view current through the controller: active file, then instructionsChanged", async () => {
    const editor = new FakeEditor();
    const rutter = startRutter({ editor, server });
    try {
      editor.setActiveFile({ uri: uriOf(target()), path: target(), folder: root });
      await waitFor("the stack", () => editor.tree("rutter.instructions").length > 0);
      assert.equal(editor.status?.text, "rutter: 5");

      // An agent writes a new instruction file; VS Code's watcher reports it.
      const added = path.join(root, "services/CLAUDE.md");
      fs.writeFileSync(added, "services notes\n");
      await server.changed([{ file: added, type: 1 }]);
      await waitFor("the refreshed stack", () => editor.status?.text === "rutter: 6");
      assert.ok(outline(editor.tree("rutter.instructions")).includes("4. services/CLAUDE.md — claude · services · precedence 101"));
    } finally {
      rutter.dispose();
    }
  });

  it("passes hover, code lens, diagnostics and the lens command through", async () => {
    const claude = path.join(root, "CLAUDE.md");
    const uri = await server.open(claude);
    await server.open(target(), "go");

    const hover = await server.connection.sendRequest<{ contents: { kind: string; value: string } }>("textDocument/hover", {
      textDocument: { uri },
      position: { line: 0, character: 0 },
    });
    assert.equal(hover.contents.kind, "markdown");
    assert.match(hover.contents.value, /\*\*rutter\*\* · `CLAUDE\.md` — \*\*effective\*\*/);

    const lenses = await server.connection.sendRequest<{ command: { title: string; command: string; arguments: unknown[] } }[]>(
      "textDocument/codeLens",
      { textDocument: { uri } },
    );
    assert.equal(lenses.length, 1);
    assert.equal(lenses[0]?.command.command, "rutter.showApplicableFiles");
    assert.match(lenses[0]?.command.title ?? "", /^rutter: applies to \d+ open files?$/);
    const listed = await server.executeCommand<{ uri: string; files: string[] }>(
      "rutter.showApplicableFiles",
      lenses[0]?.command.arguments ?? [],
    );
    assert.ok(listed.files.includes(uriOf(target())));

    const report = await server.connection.sendRequest<{ kind: string; items: { code: string; source: string; severity: number }[] }>(
      "textDocument/diagnostic",
      { textDocument: { uri } },
    );
    assert.equal(report.kind, "full");
    assert.deepEqual(
      report.items.map((item) => [item.source, item.code, item.severity]),
      [["rutter", "secret", 2]],
    );

    const viaCommand = await server.executeCommand<Snapshot>("rutter.effectiveInstructions", [uriOf(target())]);
    assert.equal(viaCommand.target_path, "services/api/input.go");
    const failed = await rejected(server.executeCommand("rutter.effectiveInstructions", [uriOf(path.join(root, "broken/main.go"))]));
    assert.equal(errorDocument(failed)?.code, "invalid_utf8");
  });
});

describe("the example monorepo, as docs/editors.md describes it", () => {
  let server: RealServer;
  let root: string;

  before(async () => {
    root = path.join(tempDir("rutter-example-"), "monorepo");
    fs.cpSync(path.join(REPO, "docs/examples/monorepo"), root, { recursive: true });
    writeTree(root, { "services/web/.prayu/rules/broken.md": Buffer.from("# Broken rule\n\nbad \xff byte\n", "latin1") });
    server = await RealServer.start({ folders: [root], home: tempDir("rutter-home-") });
  });

  after(async () => {
    assert.equal(await server.stop(), 0, server.logs.join(""));
  });

  it("shows the nine sources of input.go and the groups", async () => {
    const file = path.join(root, "services/api/internal/parser/input.go");
    const answer = await answerFor(server, file);
    assert.ok(!isErrorAnswer(answer), JSON.stringify(answer));
    const lines = outline(instructionNodes(answer, workspaceRoot(file, answer.target_path)));
    assert.deepEqual(lines.slice(0, 10), [
      "9 sources in delivery order; higher precedence wins where sources conflict",
      "1. AGENTS.md — agents · workspace root · precedence 0",
      "2. CLAUDE.md — claude · workspace root · precedence 1",
      "3. .prayu/instructions.md — prayu_instructions · workspace root · precedence 3",
      "4. .prayu/rules/go/style.md — prayu_rule · workspace root · precedence 10",
      "5. .prayu/rules/testing.md — prayu_rule · workspace root · precedence 11",
      "6. services/api/AGENTS.override.md — agents_override · services/api · precedence 200",
      "7. services/api/.claude/CLAUDE.md — claude_dir · services/api · precedence 202",
      "8. services/api/.prayu/rules/go/style.md — prayu_rule · services/api · precedence 210",
      "9. services/api/internal/parser/AGENTS.md — agents · services/api/internal/parser · precedence 400",
    ]);
    assert.deepEqual(
      lines.filter((line) => !line.startsWith(" ")).slice(10),
      ["Conflicts (3)", "Ignored (2)", "Redactions (1)", `Fingerprint — ${answer.fingerprint.slice(0, 12)}`],
    );
    assert.equal(statusModel(answer, [])?.text, "rutter: 9");
  });

  it("explains the 6th source in a document: its place, precedence, both conflict roles, what it replaces", async () => {
    const file = path.join(root, "services/api/internal/parser/input.go");
    const answer = await answerFor(server, file);
    assert.ok(!isErrorAnswer(answer), JSON.stringify(answer));
    const details = detailsOf(answer, "source/services/api/AGENTS.override.md");
    assert.ok(details);
    assert.equal(details.name, "why-6-services_api_AGENTS.override.md.md");
    const text = details.text;
    assert.ok(text.startsWith("# 6. services/api/AGENTS.override.md\n"), text);
    for (const line of [
      "- **Delivered** 6th of 9: agents read it after 5 others and before 3 more.",
      "- **Scope**: services/api (depth 2)",
      "- **Precedence**: 200 = 100 × depth 2 + slot 0 (AGENTS); higher precedence wins where sources conflict.",
      "- It overrides `AGENTS.md` here (role `agents`): both apply; services/api/AGENTS.override.md is nearer to the target and wins where they conflict.",
      "- It is overridden here by `services/api/internal/parser/AGENTS.md` (role `agents`): both apply; services/api/internal/parser/AGENTS.md is nearer to the target and wins where they conflict.",
      "- `services/api/AGENTS.md`: superseded by services/api/AGENTS.override.md (a non-blank AGENTS.override.md replaces AGENTS.md at its level).",
    ]) {
      assert.ok(text.includes(`${line}\n`), `${line}\n---\n${text}`);
    }
    const why = answer.sources[5]?.why_effective ?? "";
    assert.ok(why !== "" && text.includes(`## Why it applies\n\n${why}\n`), text);
  });

  it("shows the error node for app.ts under the broken rule", async () => {
    const file = path.join(root, "services/web/src/app.ts");
    const answer = await answerFor(server, file);
    const [node] = instructionNodes(answer, root);
    assert.equal(`${node?.label} — ${node?.description}`, "Discovery failed closed: no instructions are delivered — invalid_utf8");
    assert.equal(node?.children?.[1]?.label, "services/web/.prayu/rules/broken.md");
    assert.equal(statusModel(answer, [])?.text, "rutter: failed closed");
  });
});
