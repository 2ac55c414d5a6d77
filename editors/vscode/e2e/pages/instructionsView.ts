/**
 * The Instructions view (rutter's own view container in the activity bar), its Show Why
 * document, its pin, and the status bar item, as a person reads them.
 *
 * The ONE place that knows how a stack shows in the editor. What the view must show is read
 * from docs/editors.md ("The views, row by row"), which states it exactly, and checked against
 * the CLI's answer for the same file (`rutter context instructions --json`): the docs, the CLI
 * and the screen must agree.
 */

import * as fs from "node:fs";
import * as path from "node:path";

import type { Locator } from "playwright-core";

import { REPO } from "../harness";
import { type TreeRow, type Workbench, plain } from "./workbench";

export const CONTAINER = "rutter";
export const TITLE = "Instructions";
export const SHOW_WHY_COMMAND = "Rutter: Show Why";

/** The name (tab label) of the Show Why document of source `ordinal`, `path`. */
export function whyDocument(ordinal: number, path: string): string {
  return `why-${ordinal}-${path.replace(/[^A-Za-z0-9._-]+/g, "_")}.md`;
}
export const TOGGLE_PIN_COMMAND = "Rutter: Toggle Pin of the Instructions View";
export const PIN_ACTION = "Pin the Instructions View to This File";
export const PINNED_MARK = "· pinned";

const EDITORS_DOC = path.join(REPO, "docs", "editors.md");
/** The fingerprint the docs' example shows (the screen's comes from the CLI). */
const DOC_FINGERPRINT = /\b9ac7a4ccb96c\b/g;

/** The parts of `rutter context instructions --json` the view shows. */
export interface Stack {
  target_path: string;
  fingerprint: string;
  sources: { path: string; kind: string; scope: string; precedence: number; redactions: unknown[] }[];
  conflicts: { lower_precedence_path: string; higher_precedence_path: string; role: string }[];
  ignored: { path: string }[];
}

export async function show(workbench: Workbench): Promise<Locator> {
  return workbench.showContainerPane(CONTAINER, TITLE);
}

/** The fenced block of docs/editors.md that follows the line containing `marker`. */
function docBlock(marker: string, fence: string): string[] {
  const lines = fs.readFileSync(EDITORS_DOC, "utf8").split("\n");
  const at = lines.findIndex((line) => line.includes(marker));
  if (at < 0) {
    throw new Error(`docs/editors.md has no "${marker}"`);
  }
  const start = lines.findIndex((line, index) => index > at && line.trim() === "```" + fence);
  const end = lines.findIndex((line, index) => index > start && line.trim() === "```");
  return lines.slice(start + 1, end);
}

/** The rows docs/editors.md says the view shows for the example's parser file, with the
 * fingerprint of `stack` (a `label — description` line; two leading spaces: a child row). */
export function documentedRows(stack: Stack): TreeRow[] {
  return docBlock("**Instructions**, for `services/api/internal/parser/input.go`", "text").map((line) => {
    const level = line.startsWith("  ") ? 2 : 1;
    const text = line.trim().replace(DOC_FINGERPRINT, stack.fingerprint.slice(0, 12));
    const split = text.indexOf(" — ");
    return split < 0
      ? { label: text, description: "", level }
      : { label: text.slice(0, split), description: text.slice(split + 3), level };
  });
}

/** The Show Why document of source 6 as docs/editors.md gives it, with the fingerprint of
 * `stack`. */
export function documentedWhy(stack: Stack): string[] {
  return docBlock("nothing needs hovering. Its source, for source 6 above", "markdown").map((line) =>
    line.replace(DOC_FINGERPRINT, stack.fingerprint.slice(0, 12)),
  );
}

/** The rows the CLI's answer implies (header, one numbered row per source, conflicts worded
 * as layering, the fingerprint): a second, independent source of the same truth. */
export function expectedFromCli(stack: Stack): { header: string; sources: string[]; conflicts: string[]; fingerprint: string } {
  const count = stack.sources.length;
  return {
    header: `${count} ${count === 1 ? "source" : "sources"} in delivery order; higher precedence wins where sources conflict`,
    sources: stack.sources.map((source, index) => `${index + 1}. ${source.path}`),
    conflicts: stack.conflicts.map(
      (conflict) => `${conflict.lower_precedence_path} is overridden here by ${conflict.higher_precedence_path}`,
    ),
    fingerprint: stack.fingerprint.slice(0, 12),
  };
}

/** Wait until the view shows the stack of `stack` (its fingerprint row). */
export async function waitForStack(pane: Locator, stack: Stack): Promise<void> {
  await pane.locator(".monaco-list-row", { hasText: stack.fingerprint.slice(0, 12) }).first().waitFor();
}

/** The view's rows: top level and, under the groups, their children. */
export async function rows(workbench: Workbench, pane: Locator): Promise<TreeRow[]> {
  return workbench.treeRows(pane);
}

/** The single top row when discovery fails closed with `code`. */
export function failedClosedRow(code: string): Pick<TreeRow, "label" | "description"> {
  return { label: "Discovery failed closed: no instructions are delivered", description: code };
}

/** The row of source `ordinal. path`. */
export function sourceRow(pane: Locator, ordinal: number, sourcePath: string): Locator {
  return pane.locator(".monaco-list-row", { hasText: `${ordinal}. ${sourcePath}` }).first();
}

/** What the status bar item reads for `count` sources. */
export function expectedStatusText(count: number): string {
  return `rutter: ${count}`;
}

/** The rutter status bar item, once it reads `expected`. */
export async function statusText(workbench: Workbench, expected: string): Promise<string> {
  const item = workbench.page.locator(".part.statusbar .statusbar-item", { hasText: new RegExp(`^\\W*${expected}$`) });
  await item.first().waitFor();
  return plain((await item.first().textContent()) ?? "");
}
