/**
 * The extension in a real VS Code (code-server in headless Chromium), as a person uses it on
 * the example monorepo: the instructions of an open file, hover, code lens, diagnostics and
 * their quick fixes, the command palette, runs, memory, checkpoints and a fork.
 *
 * One editor for the whole file (starting one takes seconds); the steps run in order and each
 * leaves a screenshot in e2e/artifacts/. What the views show is read through the page objects
 * in e2e/pages/, the one place that knows their wording.
 */

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";

import { EXTENSION_DIR, Editor, WORKSPACE } from "./harness";
import { publishDocImages } from "./docImages";
import * as instructions from "./pages/instructionsView";
import * as memory from "./pages/memory";
import * as runs from "./pages/runsView";
import * as sessions from "./pages/sessionView";
import { Workbench } from "./pages/workbench";

const TARGET = "services/api/internal/parser/input.go";
const OVERRIDE = "services/api/AGENTS.override.md";

interface Manifest {
  contributes: {
    commands: { command: string; title: string; category?: string }[];
    menus: { commandPalette?: { command: string; when?: string }[] };
  };
}

/** "Rutter: Title" of every command the palette always offers (the manifest's commands, less
 * those its `commandPalette` menu shows only under a condition, `false` included). */
function paletteTitles(): string[] {
  const manifest = JSON.parse(fs.readFileSync(path.join(EXTENSION_DIR, "package.json"), "utf8")) as Manifest;
  const hidden = new Set(
    (manifest.contributes.menus.commandPalette ?? [])
      .filter((entry) => entry.when !== undefined && entry.when !== "true")
      .map((entry) => entry.command),
  );
  return manifest.contributes.commands
    .filter((command) => !hidden.has(command.command))
    .map((command) => (command.category === undefined ? command.title : `${command.category}: ${command.title}`));
}

/** `it`, with a screenshot of the window when the step fails (FAILED-<step>.png). */
function step(name: string, body: () => Promise<void>, editorOf: () => Editor | undefined): void {
  it(name, async () => {
    try {
      await body();
    } catch (error) {
      await editorOf()?.screenshot(`FAILED-${name.split(" ").slice(0, 4).join("-")}`).catch(() => undefined);
      throw error;
    }
  });
}

describe("the extension in VS Code (code-server)", () => {
  let editor: Editor;
  let workbench: Workbench;
  let stack: instructions.Stack;
  let runId = "";

  before(async () => {
    editor = await Editor.start();
    workbench = new Workbench(editor.page);
    await workbench.ready();
  });

  after(async () => {
    await editor?.stop();
    if (process.env.RUTTER_E2E_UPDATE_DOCS === "1") {
      publishDocImages();
    }
  });

  step("shows the effective instructions of the open file in the view and the status bar", async () => {
    await workbench.openFile(TARGET);
    const pane = await instructions.show(workbench);
    // Once the status bar counts the sources, the extension has registered the folder as a
    // workspace; the CLI answers for the same file.
    assert.equal(await instructions.statusText(workbench, 9), instructions.expectedStatusText(9));
    stack = editor.cliJson<instructions.Stack>("context", "instructions", "--workspace", WORKSPACE, "--target", TARGET);
    assert.equal(stack.sources.length, 9);
    await instructions.waitForStack(pane, stack);
    const rows = await instructions.rows(workbench, pane);
    const top = rows.filter((row) => row.level === 1).map(({ label, description }) => ({ label, description }));
    assert.deepEqual(top, instructions.expectedTopRows(stack));
    const conflicts = rows.filter((row) => row.level === 2).slice(0, stack.conflicts.length);
    assert.deepEqual(
      conflicts.map(({ label, description }) => ({ label, description })),
      instructions.expectedConflictRows(stack),
    );
    await editor.screenshot("instructions-view");
  }, () => editor);

  step("hovers an instruction file with what it is and where it applies", async () => {
    await workbench.openFile(OVERRIDE);
    await workbench.goToLine(1);
    const text = await workbench.hoverText(/applies to/);
    assert.match(text, /rutter · services\/api\/AGENTS\.override\.md — effective/);
    assert.match(text, /applies to 1 open file\(s\): services\/api\/internal\/parser\/input\.go/);
    await editor.screenshot("hover");
    await workbench.page.keyboard.press("Escape");
  }, () => editor);

  step("shows the code lens on the first line of an instruction file", async () => {
    const lenses = await workbench.codeLenses(/rutter: applies to/);
    assert.ok(lenses.includes("rutter: applies to 1 open file"), lenses.join(" | "));
    await editor.screenshot("code-lens");
  }, () => editor);

  step("lists diagnostics in the Problems panel: a secret to redact, a file not delivered", async () => {
    await workbench.openFile("CLAUDE.md");
    await workbench.openFile("services/api/AGENTS.md");
    const problems = await workbench.problems(/redacted before any agent sees it/);
    assert.ok(
      problems.some((row) => /this will be redacted before any agent sees it \(kind secret_assignment\)/.test(row)),
      problems.join("\n"),
    );
    assert.ok(
      problems.some((row) => /superseded by services\/api\/AGENTS\.override\.md/.test(row)),
      problems.join("\n"),
    );
    await editor.screenshot("problems");
    await workbench.closePanel();
  }, () => editor);

  step("offers every rutter command in the command palette", async () => {
    const expected = paletteTitles();
    assert.ok(expected.length >= 15, "the manifest's commands");
    for (const title of expected) {
      const entries = await workbench.paletteEntries(title);
      assert.ok(entries.some((entry) => entry.startsWith(title)), `${title} not in the palette: ${entries.join(" | ")}`);
    }
    await workbench.openPalette("Rutter:");
    await workbench.waitForPick(/^Rutter: /);
    await editor.screenshot("palette");
    await workbench.closeQuickInput();
  }, () => editor);

  step("shows a run created with the CLI in the Runs view", async () => {
    const created = editor.cliJson<{ run_id: string; revision: number }>(
      "run", "create", "--workspace", WORKSPACE, "--goal", "fix the parser", "--target", TARGET,
    );
    runId = created.run_id;
    assert.match(runId, /^run_/);
    const pane = await runs.show(workbench);
    await runs.waitForRun(pane, { run_id: runId, target_path: TARGET, revision: 1, stale: false });
    await editor.screenshot("runs-view");
  }, () => editor);

  step("warns in a drifted instruction file and refreshes the run through its quick fix", async () => {
    // Another program edits the file the run pinned.
    fs.appendFileSync(path.join(editor.root, OVERRIDE), "\n- Log every parser error with its input offset.\n");
    const pane = await runs.show(workbench);
    await runs.waitForRun(pane, { run_id: runId, target_path: TARGET, revision: 1, stale: true });
    await workbench.openFile(OVERRIDE);
    await workbench.goToLine(1);
    const fixes = await workbench.quickFixes(`Review and confirm refresh for run ${runId}`);
    await editor.screenshot("drift-quick-fix");
    assert.ok(fixes.some((title) => title.startsWith(`Review and confirm refresh for run ${runId}`)), fixes.join(" | "));
    await workbench.applyQuickFix(`Review and confirm refresh for run ${runId}`);
    await workbench.dialog(/refresh/i).waitFor();
    await editor.screenshot("drift-review");
    await workbench.answerDialog(/refresh/i, "Confirm refresh");
    await runs.waitForRun(await runs.show(workbench), { run_id: runId, target_path: TARGET, revision: 2, stale: false });
    // The run now pins what is on disk: revision 2, the live fingerprint.
    const run = editor.cliJson<{ revision: number; fingerprint: string }>("run", "show", runId);
    const live = editor.cliJson<instructions.Stack>("context", "instructions", "--workspace", WORKSPACE, "--target", TARGET);
    assert.deepEqual({ revision: run.revision, fingerprint: run.fingerprint }, { revision: 2, fingerprint: live.fingerprint });
    await editor.screenshot("runs-view-refreshed");
  }, () => editor);

  step("adds a project memory from the palette and lists it", async () => {
    await workbench.openFile(TARGET);
    await workbench.runCommand(memory.ADD_COMMAND);
    await workbench.waitForPick(memory.PROJECT_CHOICE);
    await workbench.pick(memory.PROJECT_CHOICE);
    await memory.writeNewMemory(workbench, "Parser errors", "Report the byte offset of every parse error.");
    const stored = await waitForMemory(editor, workbench, "Parser errors");
    assert.equal(stored.content, "Report the byte offset of every parse error.");
    await editor.screenshot("memory-saved");
    await workbench.runCommand(memory.LIST_COMMAND);
    const listed = await workbench.waitForPick("Parser errors");
    assert.ok(listed.some((row) => row.includes("Parser errors")), listed.join(" | "));
    await editor.screenshot("memory-list");
    await workbench.closeQuickInput();
  }, () => editor);

  step("creates a checkpoint from the palette and shows it in the Session Tree", async () => {
    await workbench.openFile(TARGET);
    await workbench.runCommand(sessions.CHECKPOINT_COMMAND);
    await workbench.answerInput(sessions.CHECKPOINT_PROMPT, "before the parser change");
    const pane = await sessions.show(workbench);
    await sessions.waitForCheckpoint(pane, "before the parser change");
    const tree = editor.cli("session", "tree", runId);
    assert.match(tree, /before the parser change/);
    await editor.screenshot("session-tree");
  }, () => editor);

  step("forks a new run from the checkpoint, confirmed in the server's dialog", async () => {
    await workbench.clearNotifications();
    await workbench.runCommand(sessions.FORK_COMMAND);
    await workbench.waitForPick("before the parser change");
    await workbench.pick("before the parser change");
    await workbench.answerInput(sessions.FORK_GOAL_PROMPT, "try a streaming parser");
    await workbench.dialog(sessions.FORK_QUESTION).waitFor();
    await editor.screenshot("fork-question");
    await workbench.answerDialog(sessions.FORK_QUESTION, sessions.FORK_BUTTON);
    const listed = editor.cliJson<{ runs: { run_id: string; goal: string }[] }>("run", "list", "--workspace", WORKSPACE);
    const forked = listed.runs.find((run) => run.goal === "try a streaming parser");
    assert.ok(forked !== undefined, JSON.stringify(listed.runs.map((run) => run.goal)));
    const runsPane = await runs.show(workbench);
    await runs.waitForRun(runsPane, { run_id: forked.run_id, target_path: TARGET, revision: 1, stale: false });
    const pane = await sessions.show(workbench);
    await sessions.waitForForkMarker(pane, "before the parser change");
    await editor.screenshot("fork");
  }, () => editor);
});

/** The memory titled `title` as the CLI lists it, once the editor's save has finished (the
 * active tab is no longer dirty: the server stored it). */
async function waitForMemory(editor: Editor, workbench: Workbench, title: string): Promise<{ title: string; content: string }> {
  await workbench.savedActiveTab();
  const list = editor.cliJson<{ items: { title: string; content: string }[] }>(
    "context", "memory", "list", "--scope", "project", "--workspace", WORKSPACE,
  );
  const found = list.items.find((item) => item.title === title);
  assert.ok(found !== undefined, JSON.stringify(list.items.map((item) => item.title)));
  return found;
}
