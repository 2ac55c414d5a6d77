/**
 * The status bar item for the file the Instructions view shows: "rutter: 9" (how many
 * instruction sources apply), with the warning background when discovery fails closed or a
 * run's pinned snapshot is stale. Clicking it focuses the Instructions view. Pure.
 */

import type { InstructionsAnswer } from "./protocol";
import { isErrorAnswer } from "./protocol";
import type { StatusModel } from "./ports";

export const FOCUS_VIEW_COMMAND = "rutter.instructions.focus";

/** What the status bar says about runs: the stale ones of the active file's workspace. */
export interface StaleRun {
  run_id: string;
  revision: number;
}

function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}

function staleLines(stale: StaleRun[]): string[] {
  return stale.map(
    (run) =>
      `Run ${run.run_id}: its pinned snapshot (revision ${run.revision}) is stale; review and confirm refresh in the Runs view.`,
  );
}

/**
 * The status for `answer` (undefined: nothing to show, e.g. no file is active), or for a
 * request that failed (`failure`: its message). The text is words, "rutter: 9", never an icon
 * and a number: `rutter: 9` (sources of the file), `rutter: 9, stale run` (an active run of its
 * workspace pinned other instructions), `rutter: not served` (the file is in no workspace the
 * server serves), `rutter: failed closed` (discovery failed: nothing is delivered),
 * `rutter: no server`. `pinned`: the Instructions view is pinned to that file.
 */
export function statusModel(
  answer: InstructionsAnswer | undefined,
  stale: StaleRun[],
  failure?: string,
  pinned = false,
): StatusModel | undefined {
  if (failure !== undefined) {
    return {
      text: "rutter: no server",
      tooltip: `rutter: no answer from the language server: ${failure}\nRun "Rutter: Restart Server" or see the Rutter output.`,
      warning: true,
      command: FOCUS_VIEW_COMMAND,
    };
  }
  if (answer === undefined) {
    return undefined;
  }
  const pinLine = pinned ? ["The Instructions view is pinned to this file; unpin it to follow the editor."] : [];
  if (isErrorAnswer(answer)) {
    const error = answer.error;
    if (error.code === "not_registered") {
      return {
        text: "rutter: not served",
        tooltip: [`rutter: ${error.message}`, ...pinLine].join("\n"),
        warning: stale.length > 0,
        command: FOCUS_VIEW_COMMAND,
      };
    }
    return {
      text: "rutter: failed closed",
      tooltip: [
        `rutter: discovery failed closed (${error.code}): no instructions are delivered for this file.`,
        error.message,
        ...staleLines(stale),
        ...pinLine,
      ].join("\n"),
      warning: true,
      command: FOCUS_VIEW_COMMAND,
    };
  }
  const count = answer.sources.length;
  const lines = [
    `rutter: ${plural(count, "instruction source applies", "instruction sources apply")} to ${answer.target_path} (workspace ${answer.workspace_id}).`,
    ...staleLines(stale),
    ...pinLine,
    "Click to show them in the Instructions view.",
  ];
  return {
    text: `rutter: ${count}${stale.length > 0 ? `, ${stale.length === 1 ? "stale run" : `${stale.length} stale runs`}` : ""}`,
    tooltip: lines.join("\n"),
    warning: stale.length > 0,
    command: FOCUS_VIEW_COMMAND,
  };
}
