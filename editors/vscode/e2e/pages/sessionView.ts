/**
 * The Session Tree view and the checkpoint and compaction commands, as a person uses them: the
 * ONE place that knows how a run's tree shows (the root, then checkpoints by title, nested under
 * the node they follow; a compaction as "summary of N messages") and what "Compact Thread…"
 * opens.
 */

import type { Locator } from "playwright-core";

import type { Workbench } from "./workbench";

export const TITLE = "Session Tree";
export const CONTAINER = "rutter";
export const CHECKPOINT_COMMAND = "Rutter: Create Checkpoint";
export const CHECKPOINT_PROMPT = /A title for the checkpoint of run/;
export const SHOW_TREE_COMMAND = "Rutter: Show Session Tree";
export const FORK_COMMAND = "Rutter: Fork from Checkpoint…";
export const FORK_GOAL_PROMPT = /The goal of the new run forked from/;
/** The server's question before a fork, and the button that creates the run. */
export const FORK_QUESTION = /A new run starts under a new mission/;
export const FORK_BUTTON = "Fork";
export const COMPACT_COMMAND = "Rutter: Compact Thread…";
export const COMPACT_PROMPT = /What the summary of thread thr_\w+ should keep in view/;
/** The tab of a compaction's summary, and the lines it starts with. */
export const SUMMARY_TAB = /^cmp_\w+\.md$/;
export const summaryLines = (compacted: number, kept: number): RegExp[] => [
  /^# Compaction cmp_\w+$/,
  /^$/,
  /^- Thread: thr_\w+$/,
  /^- Status: completed · summarizer: extractive$/,
  new RegExp(`^- Summarized: ${compacted} older messages \\(all read\\)$`),
  new RegExp(`^- Kept verbatim: the newest ${kept} messages$`),
];
/** The description of a compaction node: when, and what its summary covers. */
export const compactionDescription = (compacted: number): RegExp =>
  new RegExp(`^projected · \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC · ${compacted} messages summarized \\(all read\\) · extractive$`);

export async function show(workbench: Workbench): Promise<Locator> {
  return workbench.showContainerPane(CONTAINER, TITLE);
}

/** Wait for the tree to show a checkpoint titled `title`; returns its row. */
export async function waitForCheckpoint(pane: Locator, title: string): Promise<Locator> {
  const row = pane.locator(".monaco-list-row", { hasText: title });
  await row.first().waitFor();
  return row.first();
}

/** Wait for the tree to show the marker of a fork, nested under the checkpoint it came from
 * (expanded when it is collapsed); returns the marker's row. */
export async function waitForForkMarker(pane: Locator, checkpointTitle: string): Promise<Locator> {
  const checkpoint = await waitForCheckpoint(pane, checkpointTitle);
  const marker = pane.locator(".monaco-list-row[aria-level='3']", { hasText: /^\W*fork → / });
  if ((await checkpoint.getAttribute("aria-expanded")) === "false") {
    await checkpoint.locator(".monaco-tl-twistie").click();
  }
  await marker.first().waitFor();
  return marker.first();
}

/** Wait for the node of a compaction that summarized `compacted` messages; returns its row. */
export async function waitForCompaction(pane: Locator, compacted: number): Promise<Locator> {
  const row = pane.locator(".monaco-list-row", { hasText: `summary of ${compacted} messages` });
  await row.first().waitFor();
  return row.first();
}
