/**
 * The "Runs" view and "Review and confirm refresh".
 *
 * The view asks `rutter/runs` after every server start, when the server says
 * `rutter/runsChanged` (a run was created, refreshed or ended, also by the CLI, or went
 * stale or back), on its refresh button and after a confirmation. Never on a timer: each
 * `rutter/runs` makes the server inspect every active run. The review shows the diff in a
 * read-only document, asks in a modal dialog, and only on Confirm sends
 * `rutter/confirmRefresh` with the two fingerprints captured when the review was shown: if
 * the disk changed in between, the server refuses (`conflict`) and the person is told to
 * review again.
 *
 * Create, move and show (runCommands.ts) are registered here too, on the same list.
 */

import type { ConfirmResult, RunEntry, RunInspection, RunsAnswer } from "./protocol";
import { Methods, isErrorAnswer, typedError } from "./protocol";
import type { Disposable, Ports } from "./ports";
import { nextRevision, reviewSummary, reviewText } from "./review";
import { runIdOf, runNodes, staleRunsOf } from "./runsView";
import { RunActions, RunCommands, type ShownTarget } from "./runCommands";
import type { StaleRun } from "./statusBar";

export const REFRESH_RUNS_COMMAND = "rutter.refreshRuns";
export const REVIEW_REFRESH_COMMAND = "rutter.reviewRunRefresh";
export const CONFIRM = "Confirm refresh";

export type ReviewOutcome = "refreshed" | "unchanged" | "cancelled" | "refused" | "not_stale" | "live_error" | "failed";

export class RunsController implements Disposable {
  private runs: RunEntry[] = [];
  private asking: Promise<void> | undefined;
  private askAgain = false;
  private readonly disposables: Disposable[] = [];
  /** Called when the list changed (the status bar's stale marker). */
  onDidChange: () => void = () => undefined;
  /** The file the Instructions view shows (set by the app): where "Create Run…" creates. */
  shownTarget: () => ShownTarget | undefined = () => undefined;
  readonly actions: RunActions;

  constructor(private readonly ports: Ports) {
    const { editor, server } = ports;
    this.actions = new RunActions(
      ports,
      () => this.shownTarget(),
      async () => {
        await this.refresh();
        return this.runs;
      },
      () => this.refresh(),
    );
    this.disposables.push(
      server.onDidStart(() => void this.refresh()),
      // Not on `rutter/instructionsChanged`: when an instruction change makes a run stale (or
      // current again), the server says `rutter/runsChanged` in the same pass. The whole list
      // is asked whichever workspaces it names: one question answers them all.
      server.onNotification(Methods.runsChanged, () => void this.refresh()),
      editor.registerCommand(REFRESH_RUNS_COMMAND, () => this.refresh()),
      editor.registerCommand(REVIEW_REFRESH_COMMAND, (argument) => this.review(argument)),
      editor.registerCommand(RunCommands.create, () => this.actions.create()),
      editor.registerCommand(RunCommands.setStatus, (argument) => this.actions.setStatus(runIdOf(argument))),
      editor.registerCommand(RunCommands.showStacks, (argument) => this.actions.showStacks(runIdOf(argument))),
    );
  }

  get current(): readonly RunEntry[] {
    return this.runs;
  }

  staleRuns(workspaceId: string): StaleRun[] {
    return staleRunsOf(this.runs, workspaceId);
  }

  /** Ask `rutter/runs` again. One question at a time: a refresh asked for while one is
   * under way is asked once that one is answered, and resolves after it. */
  refresh(): Promise<void> {
    this.askAgain = true;
    this.asking ??= (async () => {
      try {
        while (this.askAgain) {
          this.askAgain = false;
          await this.ask();
        }
      } finally {
        this.asking = undefined;
      }
    })();
    return this.asking;
  }

  private async ask(): Promise<void> {
    let runs: RunEntry[];
    try {
      runs = (await this.ports.server.request<RunsAnswer>(Methods.runs, {})).runs;
    } catch {
      runs = []; // server not running (the instructions view says so) or no store
    }
    const changed = JSON.stringify(runs) !== JSON.stringify(this.runs);
    this.runs = runs;
    if (changed) {
      this.ports.editor.setTree("rutter.runs", runNodes(runs));
      this.onDidChange();
    }
  }

  /** "Review and confirm refresh" of a run (a node of the view, a run ID, or a pick). */
  async review(argument?: unknown): Promise<ReviewOutcome> {
    const { editor, server } = this.ports;
    const runId = runIdOf(argument) ?? (await this.pickRun());
    if (runId === undefined) {
      return "cancelled";
    }
    // The registration whose files the view's drift came from (this machine's, for a run made
    // through another registration of the project): the review and the refresh read the same.
    const listed = this.runs.find((run) => run.run_id === runId);
    const filesOf = listed?.drift_workspace_id ? { workspace_id: listed.drift_workspace_id } : {};
    let inspection: RunInspection;
    try {
      inspection = await server.request<RunInspection>(Methods.runInstructions, { run_id: runId, ...filesOf });
    } catch (error) {
      const info = typedError(error);
      editor.showMessage("error", `rutter: cannot inspect run ${runId}: ${info.message}`);
      return "failed";
    }
    if (isErrorAnswer(inspection.live)) {
      const live = inspection.live.error;
      editor.showMessage(
        "error",
        `rutter: run ${runId} cannot be refreshed: discovery fails closed now (${live.code}: ${live.message}); fix the instruction files first`,
      );
      return "live_error";
    }
    if (!inspection.stale) {
      editor.showMessage("info", `rutter: run ${runId} already uses the instructions on disk; nothing to refresh`);
      return "not_stale";
    }
    // Bound to what is shown now: the server refuses if either changed before Confirm.
    const expected = inspection.diff.from_fingerprint ?? "";
    const expectedLive = inspection.diff.to_fingerprint ?? inspection.live.fingerprint;
    await editor.showReadOnly(`review-${runId}.md`, reviewText(inspection), "markdown");
    const answer = await editor.askModal(
      `Refresh run ${runId} to the instructions on disk (revision ${nextRevision(inspection)})?`,
      reviewSummary(inspection),
      [CONFIRM],
    );
    if (answer !== CONFIRM) {
      return "cancelled";
    }
    let result: ConfirmResult;
    try {
      result = await server.request<ConfirmResult>(Methods.confirmRefresh, {
        run_id: runId,
        expected_fingerprint: expected,
        expected_live_fingerprint: expectedLive,
        ...filesOf,
      });
    } catch (error) {
      const info = typedError(error);
      if (info.code === "conflict") {
        editor.showMessage(
          "error",
          `rutter: run ${runId} was not refreshed: the instructions changed again after the review was shown (or someone else refreshed the run); review them again. ${info.message}`,
        );
      } else {
        editor.showMessage("error", `rutter: run ${runId} was not refreshed: ${info.message}`);
      }
      await this.refresh();
      return "refused";
    }
    await this.refresh();
    if (!result.refreshed) {
      editor.showMessage("info", `rutter: run ${runId} already uses the instructions on disk; nothing was appended`);
      return "unchanged";
    }
    editor.showMessage("info", `rutter: run ${runId} now uses revision ${result.revision ?? "?"} of its instructions`);
    return "refreshed";
  }

  private async pickRun(): Promise<string | undefined> {
    await this.refresh();
    if (this.runs.length === 0) {
      this.ports.editor.showMessage("info", "rutter: no active run in the served workspaces");
      return undefined;
    }
    const sorted = [...this.runs].sort((a, b) => Number(b.stale) - Number(a.stale));
    return this.ports.editor.pick(
      sorted.map((run) => ({
        label: run.run_id,
        description: `${run.target_path} · ${run.revision === null ? "no revision" : `rev ${run.revision}`}${run.stale ? " · stale" : ""}`,
        detail: run.goal,
        value: run.run_id,
      })),
      "Run to review",
    );
  }

  dispose(): void {
    for (const disposable of this.disposables.splice(0)) {
      disposable.dispose();
    }
  }
}
