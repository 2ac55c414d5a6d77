/**
 * The Runs view and the run commands, as a person uses them: the ONE place that knows how a run
 * shows (label = the goal's first line, description = `status · instructions current | stale ·
 * target · rev N · run ID`) and what the commands ask.
 */

import type { Locator } from "playwright-core";

import type { TreeRow, Workbench } from "./workbench";

export const CONTAINER = "rutter";
export const TITLE = "Runs";
/** The context menu entry of a run whose pinned instructions drifted. */
export const REVIEW_ENTRY = "Review and confirm refresh";
export const CREATE_COMMAND = "Rutter: Create Run…";
export const GOAL_PROMPT = /The run's goal: what should it achieve\?/;
export const PROFILE_PROMPT = /The agent profile the run is for/;
export const THIS_FILE = (target: string): string => `This file: ${target}`;
export const MOVE_COMMAND = "Rutter: Move Run Status…";
export const MOVE_ENTRY = "Move Run Status…";
export const STACKS_COMMAND = "Rutter: Show Pinned and Live Instructions";
export const ASSEMBLED_ENTRY = "Show Assembled Context";
export const AUDIT_ENTRY = "Show Context Audit";
/** The documents those open for a run. */
export const assembledDocument = (runId: string): string => `context-${runId}.md`;
export const auditDocument = (runId: string): string => `audit-${runId}.md`;
/** The budget line of an assembled context, as its preview renders it (a list item). */
export const BUDGET_LINE = /^Budget:\s\d+\sof\s\d+\stokens\sused/;
/** The budget line of an assembled context within `budget` tokens, as its preview renders it. */
export const budgetLine = (budget: number): RegExp => new RegExp(`^Budget:\\s\\d+\\sof\\s${budget}\\stokens\\sused`);
/** The paragraph of an assembled context that names the assembly. */
export const ASSEMBLY_LINE = /^Assembly asm_[0-9A-Z]{26}, /;
/** A context overflow of the run (the default budget), and its fixes as buttons. */
export const overflowMessage = (runId: string): RegExp =>
  new RegExp(`rutter: the required context of run ${runId} needs \\d+ tokens and the budget is 16384`);
export const REMOVE_PINS_BUTTON = "Remove Pins…";
export const RAISE_BUDGET_BUTTON = "Raise Budget…";
export const BUDGET_PROMPT = /The background budget of run run_\w+ in tokens/;

/** The assembly an assembled context's preview names (its blocks, `previewBlocks`). */
export function assemblyIdOf(blocks: string[]): string {
  const line = blocks.find((block) => ASSEMBLY_LINE.test(block));
  if (line === undefined) {
    throw new Error(`no assembly line in ${blocks.join(" | ")}`);
  }
  return line.slice("Assembly ".length, line.indexOf(","));
}

export async function show(workbench: Workbench): Promise<Locator> {
  return workbench.showContainerPane(CONTAINER, TITLE);
}

export interface RunFacts {
  run_id: string;
  goal: string;
  status?: string;
  target_path: string;
  revision: number;
  stale: boolean;
}

export function expectedRow(run: RunFacts): Pick<TreeRow, "label" | "description"> {
  const state = run.stale ? "instructions stale" : "instructions current";
  return {
    label: run.goal.split("\n")[0] ?? "",
    description: `${run.status ?? "created"} · ${state} · ${run.target_path} · rev ${run.revision} · ${run.run_id}`,
  };
}

/** Wait for the run's row to read exactly as `expectedRow(run)`; returns it. */
export async function waitForRun(pane: Locator, run: RunFacts): Promise<Locator> {
  const expected = expectedRow(run);
  const row = pane
    .locator(".monaco-list-row")
    .filter({ has: pane.page().locator(".label-name", { hasText: exactly(expected.label) }) })
    .filter({ has: pane.page().locator(".label-description", { hasText: exactly(expected.description) }) });
  await row.first().waitFor();
  return row.first();
}

/** Wait until no row of the view names `runId`. */
export async function waitForNoRun(pane: Locator, runId: string): Promise<void> {
  await pane.locator(".monaco-list-row", { hasText: runId }).first().waitFor({ state: "detached" });
}

/** The diff editor's title for a run's pinned and live stacks. */
export function stacksTitle(runId: string, revision: number, stale: boolean): string {
  return `${runId}: pinned (revision ${revision}) ↔ on disk now${stale ? " (stale)" : ""}`;
}

function exactly(text: string): RegExp {
  return new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`);
}
