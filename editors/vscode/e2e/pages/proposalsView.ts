/**
 * The Pin Proposals view, as a person reads it: the ONE place that knows how a proposal shows
 * (label = the text's first line, description = `WORKSPACE · by PERSON via SURFACE`) and how it is
 * answered (a click asks in a modal dialog: Pin, Discuss, Custom reply…).
 */

import type { Locator } from "playwright-core";

import type { Workbench } from "./workbench";

export const CONTAINER = "rutter";
export const TITLE = "Pin Proposals";
export const QUESTION = (proposer: string): RegExp => new RegExp(`${proposer} proposes to pin to this task:`);
export const PIN_BUTTON = "Pin";
/** The notification a new proposal raises (once), with the same three choices. */
export const announcement = (proposer: string, text: string): string =>
  `rutter: ${proposer} proposes to pin to this task: "${text.split("\n")[0] ?? ""}"`;

export async function show(workbench: Workbench): Promise<Locator> {
  return workbench.showContainerPane(CONTAINER, TITLE);
}

export function expectedRow(text: string, workspace: string, proposer: string): { label: string; description: string } {
  return { label: text.split("\n")[0] ?? "", description: `${workspace} · by ${proposer}` };
}

/** Wait for the proposal's row; returns it. */
export async function waitForProposal(pane: Locator, label: string, description: string): Promise<Locator> {
  const row = pane.locator(".monaco-list-row", { hasText: label }).filter({ hasText: description });
  await row.first().waitFor();
  return row.first();
}
