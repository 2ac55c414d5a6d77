/**
 * Keeps the "Effective Instructions" view and the status bar in step with the active file:
 * asks `rutter/effectiveInstructions` when the active editor changes, when the server says
 * `rutter/instructionsChanged`, after every server start, and on the view's refresh button.
 * A request that fails with a typed error (discovery fails closed, a file in no served folder)
 * shows that error; one that fails without (the server is gone) shows "no answer".
 */

import type { InstructionsAnswer, InstructionsChanged, Snapshot } from "./protocol";
import { Methods, instructionsAnswer, isErrorAnswer, typedError } from "./protocol";
import type { ActiveFile, Disposable, Ports, ViewNode } from "./ports";
import { errorNode, instructionNodes } from "./instructionsView";
import { workspaceRoot } from "./paths";
import type { StaleRun } from "./statusBar";
import { statusModel } from "./statusBar";

export const REFRESH_COMMAND = "rutter.refreshInstructions";

export interface Shown {
  file: ActiveFile;
  answer?: InstructionsAnswer;
  failure?: string;
  root?: string;
}

export class InstructionsController implements Disposable {
  private shown: Shown | undefined;
  private asked = 0;
  private readonly disposables: Disposable[] = [];
  /** Stale runs of a workspace, for the status bar's warning marker (set by the runs view). */
  staleRuns: (workspaceId: string) => StaleRun[] = () => [];
  /** Called after each answer is shown, with the active file's workspace (the session tree
   * follows it). */
  onDidShow: (workspaceId: string | undefined) => void = () => undefined;

  constructor(private readonly ports: Ports) {
    const { editor, server } = ports;
    this.disposables.push(
      editor.onDidChangeActiveFile(() => void this.refresh()),
      server.onNotification(Methods.instructionsChanged, (params) =>
        this.onInstructionsChanged(params as InstructionsChanged),
      ),
      server.onDidStart(() => void this.refresh()),
      editor.registerCommand(REFRESH_COMMAND, () => this.refresh()),
    );
  }

  /** What the view shows now (for tests and the runs view). */
  get current(): Shown | undefined {
    return this.shown;
  }

  /** The workspace of the active file, once the server has answered for it. */
  get workspaceId(): string | undefined {
    const answer = this.shown?.answer;
    return answer !== undefined && !isErrorAnswer(answer) ? answer.workspace_id : undefined;
  }

  /** Ask again for the active file; answers to older questions are dropped. */
  async refresh(): Promise<void> {
    const file = this.ports.editor.activeFile();
    const asked = ++this.asked;
    if (file === undefined) {
      this.show(undefined);
      return;
    }
    let shown: Shown;
    try {
      const answer = await instructionsAnswer(
        this.ports.server.request<Snapshot>(Methods.effectiveInstructions, { textDocument: { uri: file.uri } }),
      );
      const root = isErrorAnswer(answer) ? file.folder : (workspaceRoot(file.path, answer.target_path) ?? file.folder);
      shown = { file, answer, root };
    } catch (error) {
      shown = { file, failure: typedError(error).message, root: file.folder };
    }
    if (asked === this.asked) {
      this.show(shown);
    }
  }

  private onInstructionsChanged(params: InstructionsChanged): void {
    const workspaceId = this.workspaceId;
    // An error answer names no workspace: any change may be the fix.
    if (workspaceId === undefined || workspaceId === params.workspace_id) {
      void this.refresh();
    }
  }

  /** Re-render the status bar (the stale runs changed). */
  updateStatus(): void {
    this.renderStatus();
  }

  private show(shown: Shown | undefined): void {
    this.shown = shown;
    let nodes: ViewNode[] = [];
    if (shown?.answer !== undefined) {
      nodes = instructionNodes(shown.answer, shown.root);
    } else if (shown?.failure !== undefined) {
      nodes = [errorNode({ code: "request_failed", message: shown.failure }, shown.root)];
    }
    this.ports.editor.setTree("rutter.instructions", nodes);
    this.renderStatus();
    this.onDidShow(this.workspaceId);
  }

  private renderStatus(): void {
    const shown = this.shown;
    const workspaceId = this.workspaceId;
    const stale = workspaceId === undefined ? [] : this.staleRuns(workspaceId);
    this.ports.editor.setStatus(shown === undefined ? undefined : statusModel(shown.answer, stale, shown.failure));
  }

  dispose(): void {
    for (const disposable of this.disposables.splice(0)) {
      disposable.dispose();
    }
  }
}
