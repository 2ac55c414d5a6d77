import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { Commands, startRutter } from "../../src/app";
import {
  PINNED_CONTEXT,
  PIN_COMMAND,
  REFRESH_COMMAND,
  TOGGLE_PIN_COMMAND,
  UNPIN_COMMAND,
} from "../../src/instructions";
import { SHOW_WHY_COMMAND } from "../../src/sourceDetails";
import type { Snapshot } from "../../src/protocol";
import { Methods } from "../../src/protocol";
import { FakeEditor, FakeServer, outline, settle } from "../fakes";

/** The requests of the instructions view (the runs view asks too). */
function asked(server: FakeServer) {
  return server.sent.filter((sent) => sent.method === Methods.effectiveInstructions);
}

function snapshotOf(target: string, workspace = "mono", paths = ["AGENTS.md"]): Snapshot {
  return {
    protocol_version: "project_instruction_snapshot.v1",
    workspace_id: workspace,
    target_path: target,
    fingerprint: "f".repeat(64),
    loaded_at: "2026-12-02T10:00:00Z",
    sources: paths.map((path, index) => ({
      ordinal: index + 1, path, kind: "agents", scope: ".", depth: 0, precedence: index,
      why_effective: `why ${path}`, redacted: false, redactions: [], content_sha256: "0",
    })),
    ignored: [],
    conflicts: [],
  };
}

const FILE = { uri: "file:///src/mono/a/b.go", path: "/src/mono/a/b.go", folder: "/src/mono" };

/** What the language client rejects a request with when the server answers a JSON-RPC error. */
function rejection(code: number, data: { code: string; message: string; path?: string }) {
  return Object.assign(new Error(`${data.code}: ${data.message}`), { code, data });
}

function setup(answer: (method: string, params: unknown) => unknown) {
  const editor = new FakeEditor();
  const server = new FakeServer((method, params) => (method === Methods.runs ? { runs: [] } : answer(method, params)));
  const rutter = startRutter({ editor, server });
  return { editor, server, rutter };
}

describe("the instructions controller", () => {
  it("asks for the active file and shows its stack and status", async () => {
    const { editor, server } = setup(() => snapshotOf("a/b.go", "mono", ["AGENTS.md", "a/AGENTS.md"]));
    editor.setActiveFile(FILE);
    await settle();
    assert.deepEqual(asked(server), [{ method: Methods.effectiveInstructions, params: { textDocument: { uri: FILE.uri } } }]);
    assert.deepEqual(outline(editor.tree("rutter.instructions")).slice(0, 3), [
      "2 sources in delivery order; higher precedence wins where sources conflict",
      "1. AGENTS.md — agents · workspace root · precedence 0",
      "2. a/AGENTS.md — agents · workspace root · precedence 1",
    ]);
    assert.deepEqual(editor.tree("rutter.instructions")[2]?.command?.arguments, ["/src/mono/a/AGENTS.md"]);
    assert.equal(editor.status?.text, "rutter: 2");
    assert.equal(editor.viewDescriptions.get("rutter.instructions"), "a/b.go");
  });

  it("drops an answer that arrives after a newer question", async () => {
    const pending: ((answer: Snapshot) => void)[] = [];
    const { editor } = setup(() => new Promise<Snapshot>((resolve) => pending.push(resolve)));
    editor.setActiveFile(FILE);
    editor.setActiveFile({ ...FILE, uri: "file:///src/mono/c.go", path: "/src/mono/c.go" });
    await settle();
    assert.equal(pending.length, 2);
    pending[1]?.(snapshotOf("c.go", "mono", ["AGENTS.md"]));
    await settle();
    pending[0]?.(snapshotOf("a/b.go", "mono", ["AGENTS.md", "a/AGENTS.md"]));
    await settle();
    assert.equal(editor.status?.text, "rutter: 1");
  });

  it("asks again on instructionsChanged for its workspace only, on restart and on refresh", async () => {
    const { editor, server } = setup(() => snapshotOf("a/b.go"));
    editor.setActiveFile(FILE);
    await settle();
    server.notify(Methods.instructionsChanged, { workspace_id: "other", paths: ["AGENTS.md"] });
    await settle();
    assert.equal(asked(server).length, 1);
    server.notify(Methods.instructionsChanged, { workspace_id: "mono", paths: ["AGENTS.md"] });
    await settle();
    assert.equal(asked(server).length, 2);
    server.fireStarted();
    await settle();
    assert.equal(asked(server).length, 3);
    await editor.run(REFRESH_COMMAND);
    assert.equal(asked(server).length, 4);
  });

  it("shows an error node and a warning when the server cannot answer", async () => {
    const { editor } = setup(() => {
      throw new Error("the rutter language server is not running");
    });
    editor.setActiveFile(FILE);
    await settle();
    assert.deepEqual(outline(editor.tree("rutter.instructions")), [
      "No answer from the rutter server — request_failed",
      "  the rutter language server is not running",
    ]);
    assert.equal(editor.status?.warning, true);
  });

  it("shows the typed reason of a request that fails closed, opening paths under the workspace folder", async () => {
    const { editor } = setup(() => {
      throw rejection(-32803, { code: "symlink", message: "a/AGENTS.md is a symbolic link", path: "a/AGENTS.md" });
    });
    editor.setActiveFile(FILE);
    await settle();
    const [node] = editor.tree("rutter.instructions");
    assert.equal(node?.label, "Discovery failed closed: no instructions are delivered");
    assert.equal(node?.description, "symlink");
    assert.deepEqual(node?.children?.[1]?.command?.arguments, ["/src/mono/a/AGENTS.md"]);
    assert.equal(editor.status?.text, "rutter: failed closed");
    assert.match(editor.status?.tooltip ?? "", /discovery failed closed \(symlink\)/);
  });

  it("shows a file outside every served folder without a warning, and asks again on any change", async () => {
    const { editor, server } = setup(() => {
      throw rejection(-32803, { code: "not_registered", message: "/elsewhere/x.go is not inside a workspace folder that rutter serves" });
    });
    editor.setActiveFile(FILE);
    await settle();
    assert.equal(editor.tree("rutter.instructions")[0]?.label, "Not in a workspace rutter serves");
    assert.equal(editor.status?.text, "rutter: not served");
    assert.equal(editor.status?.warning, false);
    server.notify(Methods.instructionsChanged, { workspace_id: "other", paths: ["AGENTS.md"] });
    await settle();
    assert.equal(asked(server).length, 2);
  });

  it("clears the view and hides the status without an active file", async () => {
    const { editor } = setup(() => snapshotOf("a/b.go"));
    editor.setActiveFile(FILE);
    await settle();
    editor.setActiveFile(undefined);
    await settle();
    assert.deepEqual(editor.tree("rutter.instructions"), []);
    assert.equal(editor.status, undefined);
  });
});

describe("the pin", () => {
  const SOURCE = { uri: "file:///src/mono/a/AGENTS.md", path: "/src/mono/a/AGENTS.md", folder: "/src/mono" };

  function answering() {
    return setup((_method, params) => {
      const uri = (params as { textDocument: { uri: string } }).textDocument.uri;
      return uri === FILE.uri
        ? snapshotOf("a/b.go", "mono", ["AGENTS.md", "a/AGENTS.md"])
        : snapshotOf("a/AGENTS.md", "mono", ["AGENTS.md", "a/AGENTS.md"]);
    });
  }

  it("keeps the view on the pinned file while a source is opened from it", async () => {
    const { editor, server } = answering();
    editor.setActiveFile(FILE);
    await settle();
    assert.equal(editor.contexts.get(PINNED_CONTEXT), false);
    await editor.run(PIN_COMMAND);
    assert.equal(editor.contexts.get(PINNED_CONTEXT), true);
    assert.equal(editor.viewDescriptions.get("rutter.instructions"), "a/b.go · pinned");
    assert.equal(asked(server).length, 1, "pinning the file shown asks nothing");

    // A click on a source opens it; the editor makes it the active file.
    const source = editor.tree("rutter.instructions")[2];
    assert.ok(source?.command);
    await editor.run(source.command.command, ...source.command.arguments);
    assert.deepEqual(editor.opened, ["/src/mono/a/AGENTS.md"]);
    editor.setActiveFile(SOURCE);
    await settle();
    assert.equal(asked(server).length, 1);
    assert.equal(editor.viewDescriptions.get("rutter.instructions"), "a/b.go · pinned");
    assert.match(editor.status?.tooltip ?? "", /to a\/b\.go .*\n.*pinned to this file/);

    // A change of the instructions is still shown, for the pinned file.
    server.notify(Methods.instructionsChanged, { workspace_id: "mono", paths: ["a/AGENTS.md"] });
    await settle();
    assert.deepEqual(asked(server).at(-1)?.params, { textDocument: { uri: FILE.uri } });
    await editor.run(REFRESH_COMMAND);
    assert.deepEqual(asked(server).at(-1)?.params, { textDocument: { uri: FILE.uri } });

    // Unpinned, the view follows the editor again at once.
    await editor.run(UNPIN_COMMAND);
    assert.equal(editor.contexts.get(PINNED_CONTEXT), false);
    assert.deepEqual(asked(server).at(-1)?.params, { textDocument: { uri: SOURCE.uri } });
    assert.equal(editor.viewDescriptions.get("rutter.instructions"), "a/AGENTS.md");
  });

  it("toggles from the palette, and says so when there is no file to pin", async () => {
    const { editor, rutter } = answering();
    const pinned = () => rutter.instructions.pinned;
    await editor.run(TOGGLE_PIN_COMMAND);
    assert.equal(pinned(), undefined);
    assert.match(editor.messages.at(-1)?.text ?? "", /open a file first/);
    editor.setActiveFile(FILE);
    await settle();
    await editor.run(TOGGLE_PIN_COMMAND);
    assert.equal(pinned()?.uri, FILE.uri);
    await editor.run(TOGGLE_PIN_COMMAND);
    assert.equal(pinned(), undefined);
    assert.equal(editor.contexts.get(PINNED_CONTEXT), false);
  });
});

describe("Show Why", () => {
  it("opens the explanation of the row it is run on, or of a picked source", async () => {
    const { editor } = setup(() => snapshotOf("a/b.go", "mono", ["AGENTS.md", "a/AGENTS.md"]));
    editor.setActiveFile(FILE);
    await settle();
    const row = editor.tree("rutter.instructions")[2];
    await editor.run(SHOW_WHY_COMMAND, row);
    assert.equal(editor.rendered[0]?.name, "why-2-a_AGENTS.md.md");
    assert.equal(editor.rendered[0]?.language, "markdown");
    assert.deepEqual(editor.readOnly, [], "rendered, not opened as source");
    assert.match(editor.rendered[0]?.text ?? "", /^# 2\. a\/AGENTS\.md\n/);
    assert.match(editor.rendered[0]?.text ?? "", /## Why it applies\n\nwhy a\/AGENTS\.md\n/);

    editor.pickAnswers = [(items) => items[0]?.value];
    await editor.run(SHOW_WHY_COMMAND);
    assert.deepEqual(editor.picks[0]?.items.map((item) => item.label), ["1. AGENTS.md", "2. a/AGENTS.md"]);
    assert.equal(editor.rendered[1]?.name, "why-1-AGENTS.md.md");

    // The header row has nothing more to say; a dismissed pick opens nothing.
    await editor.run(SHOW_WHY_COMMAND, editor.tree("rutter.instructions")[0]);
    editor.pickAnswers = [() => undefined];
    await editor.run(SHOW_WHY_COMMAND);
    assert.equal(editor.rendered.length, 2);
  });

  it("says so when no source is shown", async () => {
    const { editor } = setup(() => snapshotOf("a/b.go", "mono", []));
    editor.setActiveFile(FILE);
    await settle();
    await editor.run(SHOW_WHY_COMMAND);
    assert.equal(editor.rendered.length, 0);
    assert.match(editor.messages.at(-1)?.text ?? "", /no instruction source is shown/);
  });
});

describe("the app's commands", () => {
  it("restarts the server, shows its log and opens files", async () => {
    const { editor, server, rutter } = setup(() => snapshotOf("a/b.go"));
    await editor.run(Commands.restartServer);
    await editor.run(Commands.showOutput);
    await editor.run(Commands.openInstructionFile, "/src/mono/AGENTS.md");
    assert.equal(server.restarts, 1);
    assert.equal(server.logShown, 1);
    assert.deepEqual(editor.opened, ["/src/mono/AGENTS.md"]);
    rutter.dispose();
    assert.equal(editor.commands.size, 0);
  });
});
