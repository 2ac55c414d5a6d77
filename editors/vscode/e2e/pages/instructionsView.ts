/**
 * The Effective Instructions view and the status bar item, as a person reads them.
 *
 * The ONE place that knows how a stack shows in the editor: where the view lives, how its rows
 * read, and what a source, a conflict, an ignored file and the fingerprint look like. The
 * expected rows are derived from the CLI's answer for the same file (`rutter context
 * instructions --json`), so when the view's wording changes only this module changes.
 */

import type { Locator } from "playwright-core";

import { type TreeRow, type Workbench, plain } from "./workbench";

export const TITLE = "Effective Instructions";
export const FOCUS_COMMAND = "Explorer: Focus on Effective Instructions View";

/** The parts of `rutter context instructions --json` the view shows. */
export interface Stack {
  target_path: string;
  fingerprint: string;
  sources: { path: string; kind: string; scope: string; precedence: number; redactions: unknown[] }[];
  conflicts: { lower_precedence_path: string; higher_precedence_path: string; role: string }[];
  ignored: { path: string }[];
}

export async function show(workbench: Workbench): Promise<Locator> {
  return workbench.showPane(FOCUS_COMMAND, TITLE);
}

/** The top-level rows the view shows for `stack`: the sources in delivery order, then the
 * groups (with their counts) and the fingerprint. */
export function expectedTopRows(stack: Stack): Pick<TreeRow, "label" | "description">[] {
  const rows = stack.sources.map((source) => ({
    label: source.path,
    description: `${source.kind} · ${source.scope} · ${source.precedence}`,
  }));
  if (stack.conflicts.length > 0) {
    rows.push({ label: `Conflicts (${stack.conflicts.length})`, description: "" });
  }
  if (stack.ignored.length > 0) {
    rows.push({ label: `Ignored (${stack.ignored.length})`, description: "" });
  }
  const redacted = stack.sources.filter((source) => source.redactions.length > 0);
  if (redacted.length > 0) {
    rows.push({ label: `Redactions (${redacted.length})`, description: "" });
  }
  rows.push({ label: "Fingerprint", description: stack.fingerprint.slice(0, 12) });
  return rows;
}

/** The conflict rows under "Conflicts (N)". */
export function expectedConflictRows(stack: Stack): Pick<TreeRow, "label" | "description">[] {
  return stack.conflicts.map((conflict) => ({
    label: `${conflict.lower_precedence_path} < ${conflict.higher_precedence_path}`,
    description: conflict.role,
  }));
}

/** Wait until the view shows the stack of `stack.target_path` (its fingerprint row). */
export async function waitForStack(pane: Locator, stack: Stack): Promise<void> {
  await pane.locator(".monaco-list-row", { hasText: stack.fingerprint.slice(0, 12) }).first().waitFor();
}

/** The view's rows: top level and, under the groups, their children. */
export async function rows(workbench: Workbench, pane: Locator): Promise<TreeRow[]> {
  return workbench.treeRows(pane);
}

/** The status bar item of the active file: what it reads for `count` sources. */
export function expectedStatusText(count: number): string {
  return String(count);
}

/** The rutter status bar item (the one whose tooltip names instruction sources). */
export async function statusText(workbench: Workbench, count: number): Promise<string> {
  const item = workbench.page.locator(".part.statusbar .statusbar-item", { hasText: new RegExp(`^\\W*${count}$`) });
  await item.first().waitFor();
  return plain((await item.first().textContent()) ?? "");
}
