/**
 * The Runs view, as a person reads it: the ONE place that knows how a run shows (label = run
 * ID, description = `target · rev N · current | stale`).
 */

import type { Locator } from "playwright-core";

import type { TreeRow, Workbench } from "./workbench";

export const TITLE = "Runs";
export const FOCUS_COMMAND = "Explorer: Focus on Runs View";
/** The context menu entry of a run whose pinned instructions drifted. */
export const REVIEW_ENTRY = "Review and confirm refresh";

export async function show(workbench: Workbench): Promise<Locator> {
  return workbench.showPane(FOCUS_COMMAND, TITLE);
}

export interface RunFacts {
  run_id: string;
  target_path: string;
  revision: number;
  stale: boolean;
}

export function expectedRow(run: RunFacts): Pick<TreeRow, "label" | "description"> {
  return { label: run.run_id, description: `${run.target_path} · rev ${run.revision} · ${run.stale ? "stale" : "current"}` };
}

/** Wait for the run's row to read as `expectedRow(run)`. */
export async function waitForRun(pane: Locator, run: RunFacts): Promise<Locator> {
  const expected = expectedRow(run);
  const row = pane.locator(".monaco-list-row", { hasText: expected.label }).filter({ hasText: expected.description });
  await row.first().waitFor();
  return row.first();
}
