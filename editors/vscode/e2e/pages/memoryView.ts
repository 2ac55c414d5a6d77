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

export async function show(workbench: Workbench): Promise<Locator> {
  return workbench.showContainerPane(CONTAINER, TITLE);
}

export function expectedDescription(workspace: string, version: number, state?: "disabled" | "expired"): string {
  return [`project ${workspace}`, `v${version}`, ...(state === undefined ? [] : [state])].join(" · ");
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
