/**
 * The Session Tree view and the checkpoint command, as a person uses them: the ONE place that
 * knows how a run's tree shows (the root, then checkpoints by title, nested under the node
 * they follow).
 */

import type { Locator } from "playwright-core";

import type { Workbench } from "./workbench";

export const TITLE = "Session Tree";
export const FOCUS_COMMAND = "Explorer: Focus on Session Tree View";
export const CHECKPOINT_COMMAND = "Rutter: Create Checkpoint";
export const CHECKPOINT_PROMPT = /A title for the checkpoint of run/;
export const SHOW_TREE_COMMAND = "Rutter: Show Session Tree";

export async function show(workbench: Workbench): Promise<Locator> {
  return workbench.showPane(FOCUS_COMMAND, TITLE);
}

/** Wait for the tree to show a checkpoint titled `title`; returns its row. */
export async function waitForCheckpoint(pane: Locator, title: string): Promise<Locator> {
  const row = pane.locator(".monaco-list-row", { hasText: title });
  await row.first().waitFor();
  return row.first();
}
