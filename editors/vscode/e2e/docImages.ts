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
  "show-why": "show-why.png",
  "instructions-pinned": "instructions-pinned.png",
  "failed-closed": "failed-closed.png",
  hover: "hover.png",
  "code-lens": "code-lens.png",
  problems: "problems.png",
  "runs-view-stale": "runs-view-stale.png",
  "drift-quick-fix": "drift-quick-fix.png",
  "drift-review": "drift-review.png",
  "create-run-target": "create-run.png",
  "move-run-status": "move-run-status.png",
  "run-stacks": "run-stacks.png",
  "memory-view-disabled": "memory-view.png",
  "session-tree": "session-tree.png",
  "fork-question": "fork-question.png",
  fork: "session-tree-fork.png",
  "pin-proposals": "pin-proposals.png",
  "agent-codex": "agent-codex.png",
  "compare-agents": "compare-agents.png",
  "history-search": "history-search.png",
  "assembled-context": "assembled-context.png",
};

/** Copy the chosen screenshots; a picture of the folder no step chose any more (a view that
 * is gone) is removed, so the docs never show what the extension no longer has. */
export function publishDocImages(): void {
  fs.mkdirSync(DOC_IMAGES, { recursive: true });
  const chosen = new Set(Object.values(CHOSEN));
  for (const file of fs.readdirSync(DOC_IMAGES)) {
    if (file.endsWith(".png") && !chosen.has(file)) {
      fs.rmSync(path.join(DOC_IMAGES, file));
    }
  }
  for (const file of fs.readdirSync(ARTIFACTS)) {
    const match = /^\d+-(.+)\.png$/.exec(file);
    const target = match === null ? undefined : CHOSEN[match[1] ?? ""];
    if (target !== undefined) {
      fs.copyFileSync(path.join(ARTIFACTS, file), path.join(DOC_IMAGES, target));
    }
  }
}
