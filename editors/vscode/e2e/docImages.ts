/**
 * With RUTTER_E2E_UPDATE_DOCS=1, the suite copies a chosen few of its screenshots into
 * docs/images/vscode/ (the pictures of docs/editors.md), so they are taken, not drawn. The
 * window is VIEWPORT-sized (1280x800) at scale 1, which keeps each PNG small.
 */

import * as fs from "node:fs";
import * as path from "node:path";

import { ARTIFACTS, REPO } from "./harness";

export const DOC_IMAGES = path.join(REPO, "docs", "images", "vscode");

/** Screenshot name (without its step number) → the docs picture's file name. */
export const CHOSEN: Record<string, string> = {
  "instructions-view": "instructions-view.png",
  hover: "hover.png",
  "code-lens": "code-lens.png",
  problems: "problems.png",
  "drift-quick-fix": "drift-quick-fix.png",
  "drift-review": "drift-review.png",
  "runs-view-refreshed": "runs-view.png",
  "memory-list": "memory-list.png",
  "session-tree": "session-tree.png",
  "fork-question": "fork-question.png",
  fork: "session-tree-fork.png",
};

export function publishDocImages(): void {
  fs.mkdirSync(DOC_IMAGES, { recursive: true });
  for (const file of fs.readdirSync(ARTIFACTS)) {
    const match = /^\d+-(.+)\.png$/.exec(file);
    const target = match === null ? undefined : CHOSEN[match[1] ?? ""];
    if (target !== undefined) {
      fs.copyFileSync(path.join(ARTIFACTS, file), path.join(DOC_IMAGES, target));
    }
  }
}
