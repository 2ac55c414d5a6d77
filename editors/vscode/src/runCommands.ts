/**
 * Runs from the editor: "Create Run…", "Move Run Status…" and "Show Pinned and Live
 * Instructions" (palette, the Runs view's title bar and its rows' context menu).
 *
 * - Create asks what `rutter run create` needs: the goal, what to pin (the file the
 *   Instructions view shows, or its workspace root), and an optional agent profile (a label,
 *   as `--profile`); the workspace is the one of the file shown. It sends `rutter/createRun`.
 * - Move offers only the statuses a run may move to from its status (docs/reference/runs.md:
 *   running, paused, completed, failed, cancelled; the last three are final), asks before a
 *   final one in a modal dialog, and sends `rutter/setRunStatus`.
 * - Show opens the run's pinned stack beside the instructions on disk now (`rutter/runInstructions`,
 *   runStacks.ts) in VS Code's diff editor.
 *
 * A refusal is shown with the server's typed message; nothing is retried behind the person's back.
 */

import type { CreatedRun, RunEntry, RunInspection, RunRecord } from "./protocol";
import { Methods, typedError } from "./protocol";
import type { PickItem, Ports } from "./ports";
import { runStacks } from "./runStacks";

export const RunCommands = {
  create: "rutter.createRun",
  setStatus: "rutter.setRunStatus",
  showStacks: "rutter.showRunInstructions",
} as const;

/** The statuses a run may be moved to (docs/reference/runs.md). */
export const RUN_STATUSES = ["running", "paused", "completed", "failed", "cancelled"] as const;
export type TargetStatus = (typeof RUN_STATUSES)[number];
export const FINAL_STATUSES: readonly string[] = ["completed", "failed", "cancelled"];

/** From a status, where a run may go (the server's rule, rutter_core/runs/model.py): only a
 * running run completes; a final run goes nowhere. */
export const TRANSITIONS: Readonly<Record<string, readonly TargetStatus[]>> = {
  created: ["running", "failed", "cancelled"],
  running: ["paused", "completed", "failed", "cancelled"],
  paused: ["running", "failed", "cancelled"],
  completed: [],
  failed: [],
  cancelled: [],
};

const STATUS_WORDS: Record<TargetStatus, string> = {
  running: "the run is being worked on",
  paused: "set aside; it can run again",
  completed: "done: final, it cannot change again",
  failed: "did not succeed: final, it cannot change again",
  cancelled: "given up: final, it cannot change again",
};

export function statusItems(current: string): PickItem<TargetStatus>[] {
  return (TRANSITIONS[current] ?? []).map((status) => ({ label: status, description: STATUS_WORDS[status], value: status }));
}

/** What the person confirms before a final status. */
export function finalQuestion(run: { run_id: string; goal: string }, status: string): { message: string; detail: string; action: string } {
  return {
    message: `Mark run ${run.run_id} as ${status}?`,
    detail: `"${firstLine(run.goal)}" becomes ${status}, which is final: the run leaves the Runs view and cannot change again (its pinned instructions and checkpoints stay; fork or resume it to go on).`,
    action: `Mark ${status}`,
  };
}

export function firstLine(text: string): string {
  return text.split("\n", 1)[0] ?? "";
}

/** The file the Instructions view shows: the workspace and the workspace-relative path. */
export interface ShownTarget {
  workspaceId: string;
  targetPath: string;
}

export interface CreateAnswers {
  goal: string;
  target: string;
  profile?: string;
}

/** `rutter/createRun`'s params. */
export function createParams(workspaceId: string, answers: CreateAnswers): Record<string, string> {
  return {
    workspace_id: workspaceId,
    goal: answers.goal,
    target: answers.target,
    ...(answers.profile !== undefined && answers.profile !== "" ? { profile: answers.profile } : {}),
  };
}

export class RunActions {
  constructor(
    private readonly ports: Ports,
    /** The file the Instructions view shows (undefined: none in a served workspace). */
    private readonly shown: () => ShownTarget | undefined,
    /** The active runs, asked again. */
    private readonly listRuns: () => Promise<readonly RunEntry[]>,
    /** Called after a run was created or moved (the Runs view asks again). */
    private readonly changed: () => Promise<void>,
  ) {}

  /** "Create Run…": the run's ID, or undefined when the person stopped or it was refused. */
  async create(): Promise<string | undefined> {
    const { editor, server } = this.ports;
    const shown = this.shown();
    if (shown === undefined) {
      editor.showMessage(
        "info",
        "rutter: open a file of a workspace rutter serves first: the run is created in that file's workspace",
      );
      return undefined;
    }
    const goal = await editor.input({
      title: `Create a run in workspace ${shown.workspaceId}`,
      prompt: "The run's goal: what should it achieve?",
      placeholder: "e.g. fix the parser's handling of empty input",
      validate: (text) => (text.trim() === "" ? "A run needs a goal." : undefined),
    });
    if (goal === undefined || goal.trim() === "") {
      return undefined;
    }
    const targets: PickItem<string>[] = [];
    if (shown.targetPath !== ".") {
      targets.push({ label: `This file: ${shown.targetPath}`, description: "pin the instructions that apply to it", value: shown.targetPath });
    }
    targets.push({ label: "Workspace root", description: "pin the instructions of the workspace root", value: "." });
    const target = targets.length === 1 ? targets[0]?.value : await editor.pick(targets, "Which instructions should the run pin?");
    if (target === undefined) {
      return undefined;
    }
    const profile = await editor.input({
      title: "Agent profile (optional)",
      prompt: "The agent profile the run is for, as a label (rutter run create --profile); leave empty for none.",
      placeholder: "e.g. reviewer",
    });
    if (profile === undefined) {
      return undefined;
    }
    let created: CreatedRun;
    try {
      created = await server.request<CreatedRun>(
        Methods.createRun,
        createParams(shown.workspaceId, { goal: goal.trim(), target, profile: profile.trim() }),
      );
    } catch (error) {
      editor.showMessage("error", `rutter: the run was not created: ${typedError(error).message}`);
      return undefined;
    }
    await this.changed();
    editor.showMessage(
      "info",
      `rutter: run ${created.run_id} created in ${shown.workspaceId}; it pins the instructions of ${target === "." ? "the workspace root" : target} (revision ${created.revision})`,
    );
    await editor.revealView("rutter.runs");
    return created.run_id;
  }

  /** "Move Run Status…" of a run (a row of the Runs view, a run ID, or a pick). */
  async setStatus(runId: string | undefined): Promise<string | undefined> {
    const { editor, server } = this.ports;
    const run = await this.findRun(runId, "Run whose status to move");
    if (run === undefined) {
      return undefined;
    }
    const items = statusItems(run.status);
    if (items.length === 0) {
      editor.showMessage("info", `rutter: run ${run.run_id} is ${run.status}, which is final`);
      return undefined;
    }
    const status = await editor.pick(items, `Run ${run.run_id} is ${run.status}: move it to`);
    if (status === undefined) {
      return undefined;
    }
    if (FINAL_STATUSES.includes(status)) {
      const question = finalQuestion(run, status);
      if ((await editor.askModal(question.message, question.detail, [question.action])) !== question.action) {
        return undefined;
      }
    }
    let moved: RunRecord;
    try {
      moved = await server.request<RunRecord>(Methods.setRunStatus, { run_id: run.run_id, status });
    } catch (error) {
      editor.showMessage("error", `rutter: run ${run.run_id} stays ${run.status}: ${typedError(error).message}`);
      await this.changed();
      return undefined;
    }
    await this.changed();
    editor.showMessage("info", `rutter: run ${moved.run_id}: ${run.status} → ${moved.status}`);
    return moved.status;
  }

  /** "Show Pinned and Live Instructions" of a run: the diff editor, pinned on the left. */
  async showStacks(runId: string | undefined): Promise<boolean> {
    const { editor, server } = this.ports;
    const run = await this.findRun(runId, "Run whose instructions to show");
    if (run === undefined) {
      return false;
    }
    let inspection: RunInspection;
    try {
      inspection = await server.request<RunInspection>(Methods.runInstructions, { run_id: run.run_id });
    } catch (error) {
      editor.showMessage("error", `rutter: cannot read run ${run.run_id}: ${typedError(error).message}`);
      return false;
    }
    const { left, right, title } = runStacks(inspection);
    await editor.showDiff(left, right, title);
    return true;
  }

  private async findRun(runId: string | undefined, purpose: string): Promise<RunEntry | undefined> {
    const { editor } = this.ports;
    const runs = await this.listRuns();
    if (runId !== undefined) {
      const known = runs.find((run) => run.run_id === runId);
      if (known === undefined) {
        editor.showMessage("error", `rutter: run ${runId} is not an active run of the served workspaces`);
      }
      return known;
    }
    if (runs.length === 0) {
      editor.showMessage("info", 'rutter: no active run in the served workspaces; create one with "Rutter: Create Run…"');
      return undefined;
    }
    return editor.pick(
      runs.map((run) => ({
        label: firstLine(run.goal),
        description: `${run.status} · ${run.target_path} · ${run.run_id}`,
        value: run,
      })),
      purpose,
    );
  }
}
