/**
 * The Memory view, as a person reads it: the ONE place that knows how a memory shows (label =
 * title, description = `user | project WORKSPACE · vN[ · disabled | expired]`) and its context
 * menu.
 */

import type { Locator } from "playwright-core";

import type { Workbench } from "./workbench";

export const CONTAINER = "rutter";
export const TITLE = "Memory";
export const ACTIONS_ENTRY = "Memory Actions…";
export const DISABLE_CHOICE = "Disable";
export const REFRESH_COMMAND = "Rutter: Refresh Memory";
export const PENDING_SECTION = "Pending Experience";
export const CONFIRM_CANDIDATE_ENTRY = "Confirm and Save to Project";

export async function show(workbench: Workbench): Promise<Locator> {
  return workbench.showContainerPane(CONTAINER, TITLE);
}

export function expectedDescription(workspace: string, version: number, state?: "disabled" | "expired"): string {
  return [`project ${workspace}`, `v${version}`, ...(state === undefined ? [] : [state])].join(" · ");
}

/** Wait for the experience candidate titled `title` (under "Pending Experience"); returns it. */
export async function waitForCandidate(pane: Locator, title: string): Promise<Locator> {
  const page = pane.page();
  await pane.locator(".monaco-list-row .label-name", { hasText: PENDING_SECTION }).first().waitFor();
  const row = pane.locator(".monaco-list-row").filter({ has: page.locator(".label-name", { hasText: title }) });
  await row.first().waitFor();
  return row.first();
}

/** Wait for the row titled `title` to read `description` exactly; returns it. */
export async function waitForMemory(pane: Locator, title: string, description: string): Promise<Locator> {
  const page = pane.page();
  const row = pane
    .locator(".monaco-list-row")
    .filter({ has: page.locator(".label-name", { hasText: title }) })
    .filter({ has: page.locator(".label-description", { hasText: new RegExp(`^${description.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`) }) });
  await row.first().waitFor();
  return row.first();
}
