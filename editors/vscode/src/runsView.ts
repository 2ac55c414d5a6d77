/**
 * The "Runs" tree: the active runs of the served workspaces (`rutter/runs`). Each row is the
 * run's goal (its first line), described by its status, whether its pinned instructions are
 * current, its target, its pinned revision and its ID; the tooltip says all of it in full.
 * Pure.
 */

import type { RunEntry } from "./protocol";
import type { ViewNode } from "./ports";
import type { StaleRun } from "./statusBar";
import { firstLine } from "./runCommands";

/** `viewItem` values; the context menu "Review and confirm refresh" matches `^run`. */
export const RunContext = {
  stale: "run.stale",
  current: "run.current",
  liveError: "run.liveError",
  unreadable: "run.unreadable",
} as const;

function state(run: RunEntry): { text: string; icon: string; color?: string; context: string } {
  if (run.error !== undefined) {
    return { text: `unreadable (${run.error.code})`, icon: "error", color: "problemsErrorIcon.foreground", context: RunContext.unreadable };
  }
  if (run.live_error !== undefined) {
    return { text: `discovery fails closed (${run.live_error.code})`, icon: "error", color: "problemsErrorIcon.foreground", context: RunContext.liveError };
  }
  if (run.stale) {
    return { text: "instructions stale", icon: "warning", color: "problemsWarningIcon.foreground", context: RunContext.stale };
  }
  return { text: "instructions current", icon: "pass", context: RunContext.current };
}

function revisionText(run: RunEntry): string {
  return run.revision === null ? "no revision" : `rev ${run.revision}`;
}

export function runNode(run: RunEntry, showWorkspace: boolean): ViewNode {
  const { text, icon, color, context } = state(run);
  const where = showWorkspace ? `${run.workspace_id}:${run.target_path}` : run.target_path;
  const tooltip = [
    `${run.goal}`,
    `run ${run.run_id}, ${run.status}`,
    `workspace: ${madeThrough(run)}`,
    `target: ${run.target_path}`,
    `pinned: ${run.revision === null ? "no revision yet" : `revision ${run.revision}, fingerprint ${run.fingerprint ?? "?"}`}`,
  ];
  if (run.error !== undefined) {
    tooltip.push(`cannot be read: ${run.error.message}`);
  } else if (run.live_error !== undefined) {
    tooltip.push(
      `discovery fails closed now (${run.live_error.code}): ${run.live_error.message}`,
      "The run keeps its pinned snapshot; fix the instruction files to refresh it.",
    );
  } else if (run.stale) {
    tooltip.push(
      `stale: the instructions on disk (${run.live_fingerprint ?? "?"}) differ from what the run pinned.`,
      'Right-click → "Review and confirm refresh", or "Show Pinned and Live Instructions".',
    );
  } else {
    tooltip.push("current: the run's pinned snapshot matches the instructions on disk.");
  }
  return {
    id: `run/${run.run_id}`,
    label: firstLine(run.goal),
    // The ID last: drift diagnostics and the status bar name the run by it.
    description: `${run.status} · ${text} · ${where} · ${revisionText(run)} · ${run.run_id}`,
    tooltip: tooltip.join("\n"),
    icon,
    iconColor: color,
    contextValue: context,
  };
}

/** The registration a run was made through, and where it is when that is not this one. */
function madeThrough(run: RunEntry): string {
  const where = driftWorkspaceOf(run);
  const machine = run.machine === "other_machine" ? "another machine" : "another location";
  return where === run.workspace_id
    ? run.workspace_id
    : `${run.workspace_id} (${machine}; compared with the files of ${where})`;
}

/** The served workspace whose files a run's drift was read from. */
export function driftWorkspaceOf(run: RunEntry): string {
  return run.drift_workspace_id ?? run.workspace_id;
}

export function runNodes(runs: RunEntry[]): ViewNode[] {
  const workspaces = new Set(runs.map((run) => run.workspace_id));
  return runs.map((run) => runNode(run, workspaces.size > 1));
}

/** The stale runs of a workspace (the status bar's warning marker). */
export function staleRunsOf(runs: RunEntry[], workspaceId: string): StaleRun[] {
  return runs
    .filter((run) => driftWorkspaceOf(run) === workspaceId && run.stale)
    .map((run) => ({ run_id: run.run_id, revision: run.revision ?? 0 }));
}

/** The run ID a command was given: a run node of the view, a run ID, or `{run_id}`. */
export function runIdOf(argument: unknown): string | undefined {
  if (typeof argument === "string" && argument !== "") {
    return argument;
  }
  if (typeof argument === "object" && argument !== null) {
    const record = argument as { id?: unknown; run_id?: unknown };
    if (typeof record.run_id === "string") {
      return record.run_id;
    }
    if (typeof record.id === "string" && record.id.startsWith("run/")) {
      return record.id.slice("run/".length);
    }
  }
  return undefined;
}
