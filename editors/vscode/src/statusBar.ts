/**
 * The status bar item for the active file: how many instruction sources apply, with a
 * warning marker when discovery fails closed or a run's pinned snapshot is stale. Clicking
 * it focuses the "Effective Instructions" view. Pure.
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
 * request that failed (`failure`: its message).
 */
export function statusModel(
  answer: InstructionsAnswer | undefined,
  stale: StaleRun[],
  failure?: string,
): StatusModel | undefined {
  if (failure !== undefined) {
    return {
      text: "$(warning) rutter",
      tooltip: `rutter: no answer from the language server: ${failure}\nRun "Rutter: Restart Server" or see the Rutter output.`,
      warning: true,
      command: FOCUS_VIEW_COMMAND,
    };
  }
  if (answer === undefined) {
    return undefined;
  }
  if (isErrorAnswer(answer)) {
    const error = answer.error;
    if (error.code === "not_registered") {
      return {
        text: "$(book) –",
        tooltip: `rutter: ${error.message}`,
        warning: stale.length > 0,
        command: FOCUS_VIEW_COMMAND,
      };
    }
    return {
      text: "$(warning) 0",
      tooltip: [
        `rutter: discovery failed closed (${error.code}): no instructions are delivered for this file.`,
        error.message,
        ...staleLines(stale),
      ].join("\n"),
      warning: true,
      command: FOCUS_VIEW_COMMAND,
    };
  }
  const count = answer.sources.length;
  const lines = [
    `rutter: ${plural(count, "instruction source applies", "instruction sources apply")} to ${answer.target_path} (workspace ${answer.workspace_id}).`,
    ...staleLines(stale),
    "Click to show them.",
  ];
  return {
    text: `${stale.length > 0 ? "$(warning)" : "$(book)"} ${count}`,
    tooltip: lines.join("\n"),
    warning: stale.length > 0,
    command: FOCUS_VIEW_COMMAND,
  };
}
