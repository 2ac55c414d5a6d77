/**
 * The extension in a real VS Code (code-server in headless Chromium), as a person uses it on
 * the example monorepo, from rutter's own side bar (its activity-bar icon): the Instructions
 * view row by row as docs/editors.md states it, Show Why, the pin, the agent switch and
 * comparison, failing closed; hover, code lens, diagnostics and their quick fixes, the command
 * palette; runs created, moved and shown beside the live stack; memory added, listed and
 * disabled, and an experience candidate confirmed into it; checkpoints and a fork; a pin
 * proposal from `rutter mcp`; history search; the assembled context and its audit; a thread
 * compacted from the palette (its summary document and its node in the Session Tree); a context
 * overflow with its fixes as buttons; a server log free of cancel-notification warnings.
 *
 * One editor for the whole file (starting one takes seconds); the steps run in order and each
 * leaves a screenshot in e2e/artifacts/. What the views show is read through the page objects
 * in e2e/pages/, the one place that knows their wording.
 */

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";

import { EXTENSION_DIR, Editor, WORKSPACE } from "./harness";
import { publishDocImages } from "./docImages";
import * as instructions from "./pages/instructionsView";
import * as agents from "./pages/agents";
import * as history from "./pages/history";
import * as memory from "./pages/memory";
import * as memoryView from "./pages/memoryView";
import * as proposals from "./pages/proposalsView";
import * as runs from "./pages/runsView";
import * as sessions from "./pages/sessionView";
import { Workbench, exactly, renderedBlocks } from "./pages/workbench";

const TARGET = "services/api/internal/parser/input.go";
/** The height of the pictures of documents dense with text (each PNG stays small). */
const DENSE_HEIGHT = 540;
const OVERRIDE = "services/api/AGENTS.override.md";
/** A file whose discovery the suite makes fail closed with BROKEN, an instruction file beside
 * it that is not UTF-8 (removed again at the end of that step). */
const FAILING = "services/web/src/app.ts";
const BROKEN = "services/web/src/AGENTS.md";

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
  let createdRunId = "";

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

  step("shows the stack of the open file in rutter's Instructions view, as docs/editors.md states it", async () => {
    await workbench.openFile(TARGET);
    const pane = await instructions.show(workbench);
    await workbench.sideBarWidth(620);
    // Once the status bar counts the sources, the extension has registered the folder as a
    // workspace; the CLI answers for the same file.
    assert.equal(await instructions.statusText(workbench, "rutter: 9"), instructions.expectedStatusText(9));
    stack = editor.cliJson<instructions.Stack>("context", "instructions", "--workspace", WORKSPACE, "--target", TARGET);
    assert.equal(stack.sources.length, 9);
    await instructions.waitForStack(pane, stack);
    assert.equal(await workbench.paneDescription(pane), TARGET);
    const rows = await instructions.rows(workbench, pane);
    // Row by row, exactly what the docs say (header, ordinals, "workspace root", layering)...
    assert.deepEqual(rows, instructions.documentedRows(stack));
    // ...and what the CLI says for the same file.
    const fromCli = instructions.expectedFromCli(stack);
    const labels = rows.map((row) => row.label);
    assert.equal(labels[0], fromCli.header);
    assert.deepEqual(labels.slice(1, 1 + stack.sources.length), fromCli.sources);
    assert.deepEqual(labels.filter((label) => label.includes(" is overridden here by ")), fromCli.conflicts);
    assert.equal(rows.at(-1)?.description, fromCli.fingerprint);
    await editor.screenshot("instructions-view");
  }, () => editor);

  step("opens Show Why of a source rendered, with the docs' text", async () => {
    await workbench.runCommand(instructions.SHOW_WHY_COMMAND);
    await workbench.waitForPick(`6. ${OVERRIDE}`);
    await workbench.pick(`6. ${OVERRIDE}`);
    await workbench.previewTab(instructions.whyDocument(6, OVERRIDE)).waitFor();
    await workbench.preview.locator("h1", { hasText: `6. ${OVERRIDE}` }).waitFor();
    // What the Markdown preview renders, block by block, is what the docs' source renders to.
    const expected = renderedBlocks(instructions.documentedWhy(stack));
    assert.deepEqual((await workbench.previewBlocks()).slice(0, expected.length), expected);
    await editor.screenshot("show-why", DENSE_HEIGHT);
    await workbench.runCommand("View: Close All Editors");
  }, () => editor);

  step("keeps the pinned view on its file while a source is opened from it", async () => {
    await workbench.openFile(TARGET);
    const pane = await instructions.show(workbench);
    await instructions.waitForStack(pane, stack);
    await workbench.paneAction(pane, instructions.PIN_ACTION);
    await pane.locator(".pane-header .description", { hasText: instructions.PINNED_MARK }).waitFor();
    // Opening source 1 (the root AGENTS.md, whose own stack is smaller) leaves the view where it is.
    await instructions.sourceRow(pane, 1, "AGENTS.md").click();
    await workbench.activeTab(/^AGENTS\.md$/).waitFor();
    assert.equal(await workbench.paneDescription(pane), `${TARGET} ${instructions.PINNED_MARK}`);
    assert.deepEqual(await instructions.rows(workbench, pane), instructions.documentedRows(stack));
    assert.equal(await instructions.statusText(workbench, "rutter: 9"), "rutter: 9");
    await editor.screenshot("instructions-pinned");
    // Unpinned, the view follows the active file again: the root AGENTS.md's own stack.
    await workbench.runCommand(instructions.TOGGLE_PIN_COMMAND);
    const own = editor.cliJson<instructions.Stack>("context", "instructions", "--workspace", WORKSPACE, "--target", "AGENTS.md");
    await instructions.waitForStack(pane, own);
    assert.equal(await workbench.paneDescription(pane), "AGENTS.md");
    assert.notEqual(own.sources.length, 9);
    const count = String(own.sources.length);
    assert.equal(await instructions.statusText(workbench, `rutter: ${count}`), `rutter: ${count}`);
    // The editor gets its room back for the steps that read it.
    await workbench.sideBarWidth(420);
  }, () => editor);

  step("switches the Instructions view to what Codex loads, and back to rutter's stack", async () => {
    await workbench.openFile(TARGET);
    const pane = await instructions.show(workbench);
    await instructions.waitForStack(pane, stack);
    await workbench.runCommand(agents.CHOOSE_COMMAND);
    await workbench.waitForPick(agents.LABELS.codex ?? "Codex");
    assert.deepEqual(await workbench.quickInputLabels(), [agents.DEFAULT_CHOICE, ...Object.values(agents.LABELS)]);
    await workbench.pick(exactly(agents.LABELS.codex ?? "Codex"));
    const codex = editor.cliJson<agents.AgentView>(
      "context", "instructions", "--as", "codex", "--workspace", WORKSPACE, "--target", TARGET,
    );
    const expected = agents.expectedRows(codex);
    await pane.locator(".monaco-list-row", { hasText: expected[0] ?? "" }).first().waitFor();
    assert.deepEqual(agents.topLabels(await instructions.rows(workbench, pane)), expected);
    assert.equal(await workbench.paneDescription(pane), `${TARGET} · Codex`);
    // The status bar keeps counting the default stack: a profile is a view, never what runs pin.
    assert.equal(await instructions.statusText(workbench, "rutter: 9"), "rutter: 9");
    await editor.screenshot("agent-codex");
    await workbench.runCommand(agents.CHOOSE_COMMAND);
    await workbench.waitForPick(agents.DEFAULT_CHOICE);
    await workbench.pick(agents.DEFAULT_CHOICE);
    await instructions.waitForStack(pane, stack);
    assert.deepEqual(await instructions.rows(workbench, pane), instructions.documentedRows(stack));
  }, () => editor);

  step("compares what every agent loads for the file in one document", async () => {
    await workbench.runCommand(agents.COMPARE_COMMAND);
    const name = agents.compareDocument(TARGET);
    await workbench.previewTab(name).waitFor();
    await workbench.preview.locator("table").first().waitFor();
    const all = editor.cliJson<{ profiles: agents.AgentView[] }>(
      "context", "instructions", "--as", "all", "--workspace", WORKSPACE, "--target", TARGET,
    );
    // Rendered as a table: one column per agent, one row per file any of them loads.
    const table = await workbench.previewTable();
    assert.deepEqual(table[0], agents.compareHeader(all.profiles));
    assert.deepEqual(table.slice(1).map((row) => row[0]), agents.compareFiles(all.profiles));
    await editor.screenshot("compare-agents", DENSE_HEIGHT);
    await workbench.runCommand("View: Close All Editors");
  }, () => editor);

  step("shows discovery failing closed as one error node and in the status bar", async () => {
    // An instruction file that is not UTF-8 beside the file: nothing is delivered for it.
    const broken = path.join(editor.root, BROKEN);
    fs.writeFileSync(broken, Buffer.from([0x2d, 0x20, 0xff, 0xfe, 0x0a]));
    await workbench.openFile(FAILING);
    const pane = await instructions.show(workbench);
    const node = instructions.failedClosedRow("invalid_utf8");
    await pane.locator(".monaco-list-row", { hasText: node.label }).first().waitFor();
    const [first] = await instructions.rows(workbench, pane);
    assert.deepEqual(first, { ...node, level: 1 });
    assert.equal(await instructions.statusText(workbench, "rutter: failed closed"), "rutter: failed closed");
    await editor.screenshot("failed-closed");
    fs.rmSync(broken);
    await pane.locator(".monaco-list-row", { hasText: node.label }).first().waitFor({ state: "detached" });
  }, () => editor);

  step("hovers an instruction file with what it is and where it applies", async () => {
    await workbench.openFile(TARGET);
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
    await runs.waitForRun(pane, { run_id: runId, goal: "fix the parser", target_path: TARGET, revision: 1, stale: false });
    await editor.screenshot("runs-view");
  }, () => editor);

  step("warns in a drifted instruction file and refreshes the run through its quick fix", async () => {
    // Another program edits the file the run pinned.
    fs.appendFileSync(path.join(editor.root, OVERRIDE), "\n- Log every parser error with its input offset.\n");
    const pane = await runs.show(workbench);
    await runs.waitForRun(pane, { run_id: runId, goal: "fix the parser", target_path: TARGET, revision: 1, stale: true });
    await editor.screenshot("runs-view-stale");
    await workbench.openFile(OVERRIDE);
    await workbench.goToLine(1);
    const fixes = await workbench.quickFixes(`Review and confirm refresh for run ${runId}`);
    await editor.screenshot("drift-quick-fix");
    assert.ok(fixes.some((title) => title.startsWith(`Review and confirm refresh for run ${runId}`)), fixes.join(" | "));
    await workbench.applyQuickFix(`Review and confirm refresh for run ${runId}`);
    await workbench.dialog(/refresh/i).waitFor();
    await editor.screenshot("drift-review");
    await workbench.answerDialog(/refresh/i, "Confirm refresh");
    await runs.waitForRun(await runs.show(workbench), { run_id: runId, goal: "fix the parser", target_path: TARGET, revision: 2, stale: false });
    // The run now pins what is on disk: revision 2, the live fingerprint.
    const run = editor.cliJson<{ revision: number; fingerprint: string }>("run", "show", runId);
    const live = editor.cliJson<instructions.Stack>("context", "instructions", "--workspace", WORKSPACE, "--target", TARGET);
    assert.deepEqual({ revision: run.revision, fingerprint: run.fingerprint }, { revision: 2, fingerprint: live.fingerprint });
    await editor.screenshot("runs-view-refreshed");
  }, () => editor);

  step("creates a run from the palette for the open file", async () => {
    await workbench.openFile(TARGET);
    await instructions.statusText(workbench, "rutter: 9");
    await workbench.runCommand(runs.CREATE_COMMAND);
    await workbench.answerInput(runs.GOAL_PROMPT, "tidy the input parser", false);
    await workbench.waitForPick(runs.THIS_FILE(TARGET));
    await editor.screenshot("create-run-target");
    await workbench.pick(runs.THIS_FILE(TARGET));
    await workbench.answerInput(runs.PROFILE_PROMPT, "");
    const listed = editor.cliJson<{ runs: { run_id: string; goal: string }[] }>("run", "list", "--workspace", WORKSPACE);
    const created = listed.runs.find((run) => run.goal === "tidy the input parser");
    assert.ok(created !== undefined, JSON.stringify(listed.runs.map((run) => run.goal)));
    createdRunId = created.run_id;
    await workbench
      .notification(`rutter: run ${createdRunId} created in ${WORKSPACE}; it pins the instructions of ${TARGET} (revision 1)`)
      .first()
      .waitFor();
    const pane = await runs.show(workbench);
    await runs.waitForRun(pane, { run_id: createdRunId, goal: "tidy the input parser", target_path: TARGET, revision: 1, stale: false });
    await editor.screenshot("create-run");
    await workbench.clearNotifications();
  }, () => editor);

  step("moves the run's status from its context menu, a final status after a modal question", async () => {
    const pane = await runs.show(workbench);
    const facts = { run_id: createdRunId, goal: "tidy the input parser", target_path: TARGET, revision: 1, stale: false };
    await workbench.contextMenu(await runs.waitForRun(pane, facts), runs.MOVE_ENTRY);
    await workbench.waitForPick("running");
    assert.deepEqual(await workbench.quickInputLabels(), ["running", "failed", "cancelled"]);
    await editor.screenshot("move-run-status");
    await workbench.pick("running");
    await workbench.notification(`rutter: run ${createdRunId}: created → running`).first().waitFor();
    await runs.waitForRun(pane, { ...facts, status: "running" });
    assert.equal(editor.cliJson<{ status: string }>("run", "show", createdRunId).status, "running");
    await workbench.runCommand(runs.MOVE_COMMAND);
    await workbench.waitForPick("tidy the input parser");
    await workbench.pick("tidy the input parser");
    await workbench.waitForPick("completed");
    await workbench.pick("completed");
    await workbench.dialog(`Mark run ${createdRunId} as completed?`).waitFor();
    await editor.screenshot("move-run-final");
    await workbench.answerDialog(`Mark run ${createdRunId} as completed?`, "Mark completed");
    await runs.waitForNoRun(pane, createdRunId);
    assert.equal(editor.cliJson<{ status: string }>("run", "show", createdRunId).status, "completed");
    await workbench.clearNotifications();
  }, () => editor);

  step("shows a run's pinned and live instructions side by side in the diff editor", async () => {
    await workbench.runCommand(runs.STACKS_COMMAND);
    await workbench.waitForPick("fix the parser");
    await workbench.pick("fix the parser");
    const title = runs.stacksTitle(runId, 2, false);
    await workbench.activeTab(title).waitFor();
    assert.equal(await workbench.activeTabLabel(), title);
    await workbench.page.locator(".editor-group-container.active .monaco-diff-editor").first().waitFor();
    await editor.screenshot("run-stacks", DENSE_HEIGHT);
    await workbench.runCommand("View: Close All Editors");
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

  step("lists the memory in the Memory view and disables it from its context menu", async () => {
    const pane = await memoryView.show(workbench);
    const row = await memoryView.waitForMemory(pane, "Parser errors", memoryView.expectedDescription(WORKSPACE, 1));
    await editor.screenshot("memory-view");
    await workbench.contextMenu(row, memoryView.ACTIONS_ENTRY);
    await workbench.waitForPick(memoryView.DISABLE_CHOICE);
    await workbench.pick(memoryView.DISABLE_CHOICE);
    await memoryView.waitForMemory(pane, "Parser errors", memoryView.expectedDescription(WORKSPACE, 2, "disabled"));
    const listed = editor.cliJson<{ items: { title: string; status: string }[] }>(
      "context", "memory", "list", "--scope", "project", "--workspace", WORKSPACE, "--all",
    );
    assert.equal(listed.items.find((item) => item.title === "Parser errors")?.status, "disabled");
    await editor.screenshot("memory-view-disabled");
  }, () => editor);

  step("confirms a pending experience candidate and sees it become a project memory", async () => {
    // Finished work of its own (a run completed from the CLI) with a referenced decision.
    const done = editor.cliJson<{ run_id: string; thread_id: string }>(
      "run", "create", "--workspace", WORKSPACE, "--goal", "fuzz the parser", "--json",
    );
    editor.cli(
      "session", "note", "add", done.thread_id, "--kind", "decision",
      "--text", "Fuzz the parser nightly", "--reference", TARGET,
    );
    editor.cli("run", "status", done.run_id, "running");
    editor.cli("run", "status", done.run_id, "completed");
    const pane = await memoryView.show(workbench);
    await workbench.runCommand(memoryView.REFRESH_COMMAND);
    const row = await memoryView.waitForCandidate(pane, "Decision: Fuzz the parser nightly");
    await editor.screenshot("memory-candidates");
    await workbench.contextMenu(row, memoryView.CONFIRM_CANDIDATE_ENTRY);
    await memoryView.waitForMemory(pane, "Decision: Fuzz the parser nightly", memoryView.expectedDescription(WORKSPACE, 1));
    const listed = editor.cliJson<{ items: { title: string; created_by: string; references: string[] }[] }>(
      "context", "memory", "list", "--scope", "project", "--workspace", WORKSPACE,
    );
    const saved = listed.items.find((item) => item.title === "Decision: Fuzz the parser nightly");
    assert.equal(saved?.created_by, "lsp");
    assert.deepEqual(saved?.references, [TARGET]);
    const left = editor.cliJson<{ items: unknown[] }>("context", "memory", "candidates", "--workspace", WORKSPACE);
    assert.deepEqual(left.items, []);
    await editor.screenshot("memory-candidate-confirmed");
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
    await runs.waitForRun(runsPane, { run_id: forked.run_id, goal: "try a streaming parser", target_path: TARGET, revision: 1, stale: false });
    const pane = await sessions.show(workbench);
    await sessions.waitForForkMarker(pane, "before the parser change");
    await editor.screenshot("fork");
  }, () => editor);

  step("shows an agent's pin proposal (made through rutter mcp) and pins it when accepted", async () => {
    const text = "Keep the parser's public API stable.";
    const proposal = await editor.mcpTool<{ proposal_id: string; thread_id: string }>("context_pin_propose", { run_id: runId, text });
    // Shown as the person the agent's rutter acts for (the operating-system user on this
    // store) and the surface: "alice via mcp".
    const proposer = `${os.userInfo().username} via mcp`;
    const expected = proposals.expectedRow(text, WORKSPACE, proposer);
    const pane = await proposals.show(workbench);
    const row = await proposals.waitForProposal(pane, expected.label, expected.description);
    await workbench.notification(proposals.announcement(proposer, text)).first().waitFor();
    await editor.screenshot("pin-proposals");
    await workbench.clearNotifications();
    await row.click();
    await workbench.dialog(proposals.QUESTION(proposer)).waitFor();
    await workbench.answerDialog(proposals.QUESTION(proposer), proposals.PIN_BUTTON);
    await pane.locator(".monaco-list-row", { hasText: expected.label }).first().waitFor({ state: "detached" });
    const pins = editor.cliJson<{ pins: { text: string }[] }>("context", "pin", "list", proposal.thread_id);
    assert.deepEqual(pins.pins.map((pin) => pin.text), [text]);
    await editor.screenshot("pin-proposal-accepted");
  }, () => editor);

  step("finds a memory with Search History… and opens its page", async () => {
    const created = editor.cliJson<{ id: string; version: number }>(
      "context", "memory", "create", "--scope", "project", "--workspace", WORKSPACE,
      "--title", "Streaming parser notes", "--content", "Feed the streaming parser in 4 KiB chunks.",
    );
    await workbench.openFile(TARGET);
    await workbench.runCommand(history.SEARCH_COMMAND);
    await workbench.quickInput.locator("input.input").fill("streaming parser");
    const label = history.hitLabel("memory", created.id);
    await workbench.waitForPick(label);
    await editor.screenshot("history-search");
    await workbench.pick(label);
    const tab = history.pageTab("memory", created.id, created.version, 1, 1);
    await workbench.activeTab(exactly(tab)).waitFor();
    await workbench.editor.locator(".view-lines .view-line", { hasText: "Feed the streaming parser in 4 KiB chunks." }).first().waitFor();
    await editor.screenshot("history-page");
    await workbench.runCommand("View: Close All Editors");
  }, () => editor);

  step("shows a run's assembled context and its audit from the Runs view", async () => {
    const pane = await runs.show(workbench);
    const facts = { run_id: runId, goal: "fix the parser", target_path: TARGET, revision: 2, stale: false };
    await workbench.contextMenu(await runs.waitForRun(pane, facts), runs.ASSEMBLED_ENTRY);
    await workbench.previewTab(runs.assembledDocument(runId)).waitFor();
    await workbench.preview.locator("li", { hasText: runs.BUDGET_LINE }).first().waitFor();
    const blocks = await workbench.previewBlocks();
    assert.equal(blocks[0], `Assembled context of run ${runId}`);
    assert.ok(blocks.some((block) => /^included: instruction AGENTS\.md v\d+ /.test(block)), blocks.join("\n"));
    // Shown again, the same preview follows the new text (a new assembly), in the same tab.
    const first = runs.assemblyIdOf(blocks);
    await workbench.contextMenu(await runs.waitForRun(pane, facts), runs.ASSEMBLED_ENTRY);
    await workbench.preview.locator("p", { hasText: runs.ASSEMBLY_LINE }).filter({ hasNotText: first }).waitFor();
    const newest = editor.cliJson<{ assemblies: { assembly_id: string }[] }>("context", "audit", runId).assemblies[0];
    assert.equal(runs.assemblyIdOf(await workbench.previewBlocks()), newest?.assembly_id);
    assert.equal(await workbench.tabs(`[Preview] ${runs.assembledDocument(runId)}`).count(), 1);
    await editor.screenshot("assembled-context", DENSE_HEIGHT);
    await workbench.contextMenu(await runs.waitForRun(pane, facts), runs.AUDIT_ENTRY);
    await workbench.previewTab(runs.auditDocument(runId)).waitFor();
    await workbench.preview.locator("h1").first().waitFor();
    await editor.screenshot("context-audit");
    await workbench.runCommand("View: Close All Editors");
  }, () => editor);

  step("compacts a thread from the palette: the summary opens read-only and the Session Tree shows the compaction", async () => {
    // The file open: the extension has registered the folder as a workspace.
    await workbench.openFile(TARGET);
    await instructions.statusText(workbench, "rutter: 9");
    const made = editor.cliJson<{ run_id: string; thread_id: string }>(
      "run", "create", "--workspace", WORKSPACE, "--goal", "compact the parser thread", "--target", TARGET,
    );
    for (let number = 1; number <= 8; number += 1) {
      editor.cli(
        "session", "message", "add", made.thread_id, "--role", number % 2 === 1 ? "user" : "assistant",
        "--text", `step ${number}: keep the parser strict`,
      );
    }
    await workbench.clearNotifications();
    await workbench.runCommand(sessions.COMPACT_COMMAND);
    await workbench.waitForPick("compact the parser thread");
    await workbench.pick("compact the parser thread");
    await workbench.answerInput(sessions.COMPACT_PROMPT, "the parser");
    await workbench.activeTab(sessions.SUMMARY_TAB).waitFor();
    await workbench.editor.locator(".view-lines .view-line", { hasText: "Kept verbatim" }).first().waitFor();
    const lines = await workbench.editorLines();
    const expected = sessions.summaryLines(4, 4);
    assert.ok(expected.every((pattern, index) => pattern.test(lines[index] ?? "")), lines.slice(0, expected.length).join("\n"));
    assert.ok(lines.some((line) => line.startsWith("Summary of 4 earlier messages of thread")), lines.join("\n"));
    await editor.screenshot("compaction-summary", DENSE_HEIGHT);
    // The Session Tree shows the thread's run, with the compaction below its root.
    const pane = await sessions.show(workbench);
    const row = await sessions.waitForCompaction(pane, 4);
    const description = (await row.locator(".label-description").first().textContent()) ?? "";
    assert.match(description.replace(/\s+/g, " ").trim(), sessions.compactionDescription(4));
    assert.match(editor.cli("session", "tree", made.run_id), /compaction cmp_\w+ \(projected\).*4 messages summarized \(0 not read\) by extractive/);
    await editor.screenshot("compaction-node");
    await workbench.runCommand("View: Close All Editors");
  }, () => editor);

  step("shows a context overflow with its figures and the fixes as buttons; Raise Budget… and Remove Pins… assemble again", async () => {
    await workbench.openFile(TARGET);
    await instructions.statusText(workbench, "rutter: 9");
    // A service whose instructions and pins together need more than the default budget.
    const rules = ["# Bulk service rules", ""];
    for (let rule = 1; rules.join("\n").length < 40_000; rule += 1) {
      rules.push(`- Rule ${rule}: validate every field of record batch ${rule} before it is stored.`);
    }
    fs.mkdirSync(path.join(editor.root, "services", "bulk"), { recursive: true });
    fs.writeFileSync(path.join(editor.root, "services", "bulk", "AGENTS.md"), `${rules.join("\n")}\n`);
    fs.writeFileSync(path.join(editor.root, "services", "bulk", "load.go"), "package bulk\n");
    const target = "services/bulk/load.go";
    const made = editor.cliJson<{ run_id: string; thread_id: string }>(
      "run", "create", "--workspace", WORKSPACE, "--goal", "load the bulk records", "--target", target,
    );
    for (const letter of ["a", "b", "c", "d"]) {
      editor.cli("context", "pin", "add", made.thread_id, "--text", `${letter}: ${"keep the batch order stable. ".repeat(270)}`);
    }
    await workbench.clearNotifications();
    const pane = await runs.show(workbench);
    const facts = { run_id: made.run_id, goal: "load the bulk records", target_path: target, revision: 1, stale: false };
    await workbench.contextMenu(await runs.waitForRun(pane, facts), runs.ASSEMBLED_ENTRY);
    const overflow = runs.overflowMessage(made.run_id);
    assert.deepEqual(await workbench.notificationButtons(overflow), [runs.REMOVE_PINS_BUTTON, runs.RAISE_BUDGET_BUTTON]);
    const text = (await workbench.notification(overflow).first().textContent()) ?? "";
    assert.match(text, /Required: instruction AGENTS\.md \(\d+ tokens\)/);
    assert.match(text, /instruction services\/bulk\/AGENTS\.md \(\d+ tokens\), pin pin_\w+ \(\d+ tokens\)/);
    await editor.screenshot("context-overflow");
    await workbench.answerNotification(overflow, runs.RAISE_BUDGET_BUTTON);
    await workbench.answerInput(runs.BUDGET_PROMPT, "60000");
    await workbench.previewTab(runs.assembledDocument(made.run_id)).waitFor();
    await workbench.preview.locator("li", { hasText: runs.budgetLine(60000) }).first().waitFor();
    await workbench.runCommand("View: Close All Editors");
    // Remove Pins…: all four picked and removed; the context fits the default budget again.
    await workbench.contextMenu(await runs.waitForRun(pane, facts), runs.ASSEMBLED_ENTRY);
    await workbench.answerNotification(overflow, runs.REMOVE_PINS_BUTTON);
    await workbench.waitForPick(/^a: keep the batch order stable/);
    const offered = (await workbench.quickInputLabels()).filter((label) => /^[a-z]: keep the batch order stable/.test(label));
    assert.deepEqual(offered.map((label) => label.slice(0, 1)), ["a", "b", "c", "d"]);
    await editor.screenshot("remove-pins");
    await workbench.pickAll();
    await workbench.previewTab(runs.assembledDocument(made.run_id)).waitFor();
    await workbench.preview.locator("li", { hasText: runs.budgetLine(16384) }).first().waitFor();
    assert.deepEqual(editor.cliJson<{ pins: unknown[] }>("context", "pin", "list", made.thread_id).pins, []);
    await workbench.runCommand("View: Close All Editors");
  }, () => editor);

  step("leaves no 'Cancel notification for unknown message id' warning in the Rutter output log", async () => {
    await workbench.runCommand("Rutter: Show Server Log");
    await workbench.page.locator(".part.panel .output-view, .part.panel .monaco-editor").first().waitFor();
    await editor.screenshot("server-log");
    const log = editor.rutterLog();
    assert.match(log, /\S/, "the Rutter output log is empty");
    assert.doesNotMatch(log, /Cancel notification for unknown message id/);
    await workbench.closePanel();
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
