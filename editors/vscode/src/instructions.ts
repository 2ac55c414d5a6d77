/**
 * Keeps the "Instructions" view and the status bar in step with the active file: asks
 * `rutter/effectiveInstructions` when the active editor changes, when the server says
 * `rutter/instructionsChanged`, after every server start, and on the view's refresh button.
 * A request that fails with a typed error (discovery fails closed, a file in no served folder)
 * shows that error; one that fails without (the server is gone) shows "no answer".
 *
 * The pin keeps the view on the file shown when it was pinned: opening a source from the view
 * (or any other file) then leaves the view where it is; a change of the instructions or the
 * refresh button still asks again, for the pinned file. The view's description names the file
 * shown ("· pinned" while pinned); the context key `rutter.instructionsPinned` switches the
 * title bar between the Pin and Unpin buttons.
 *
 * "Show Why" (a source's or an ignored file's context menu, inline button, or the palette with
 * a pick of the sources) opens the row's whole explanation as a read-only document
 * (sourceDetails.ts).
 *
 * The agent switch ("Instructions for Agent…", agents.ts) shows one agent's view instead of
 * rutter's default stack: `rutter/effectiveInstructions` is asked a second time with that
 * `profile`, and the view lists that agent's sources in its order with where it cuts them and
 * why (agentsView.ts); the description names the agent. The choice is kept in the workspace
 * state. The status bar and the other views keep following the default stack.
 */

import type { ErrorInfo, InstructionsAnswer, InstructionsChanged, ProfileView, Snapshot } from "./protocol";
import { Methods, instructionsAnswer, isErrorAnswer, typedError } from "./protocol";
import type { ActiveFile, Disposable, Ports, ViewNode } from "./ports";
import { errorNode, instructionNodes } from "./instructionsView";
import { type AgentChoice, agentErrorNode, agentLabel, agentNodes, isAgentChoice } from "./agentsView";
import { SHOW_WHY_COMMAND, detailsOf } from "./sourceDetails";
import { workspaceRoot } from "./paths";
import type { StaleRun } from "./statusBar";
import { statusModel } from "./statusBar";

export const REFRESH_COMMAND = "rutter.refreshInstructions";
export const PIN_COMMAND = "rutter.pinInstructions";
export const UNPIN_COMMAND = "rutter.unpinInstructions";
export const TOGGLE_PIN_COMMAND = "rutter.togglePinInstructions";
export const PINNED_CONTEXT = "rutter.instructionsPinned";
/** Workspace state key of the agent the view shows. */
export const AGENT_STATE_KEY = "rutter.instructionsAgent";

export interface Shown {
  file: ActiveFile;
  answer?: InstructionsAnswer;
  failure?: string;
  root?: string;
  /** The chosen agent's view (not the default), or why it could not be had. */
  profile?: ProfileView;
  profileError?: ErrorInfo;
}

export class InstructionsController implements Disposable {
  private shown: Shown | undefined;
  /** The file the view is pinned to, while it is. */
  private pinnedFile: ActiveFile | undefined;
  private asked = 0;
  private chosenAgent: AgentChoice = "default";
  private readonly disposables: Disposable[] = [];
  /** Stale runs of a workspace, for the status bar's warning marker (set by the runs view). */
  staleRuns: (workspaceId: string) => StaleRun[] = () => [];
  /** Called after each answer is shown, with the active file's workspace (the session tree
   * follows it). */
  onDidShow: (workspaceId: string | undefined) => void = () => undefined;

  constructor(private readonly ports: Ports) {
    const { editor, server } = ports;
    this.disposables.push(
      // Pinned: the view stays on its file whatever the editor shows.
      editor.onDidChangeActiveFile(() => (this.pinnedFile === undefined ? void this.refresh() : undefined)),
      server.onNotification(Methods.instructionsChanged, (params) =>
        this.onInstructionsChanged(params as InstructionsChanged),
      ),
      server.onDidStart(() => void this.refresh()),
      editor.registerCommand(REFRESH_COMMAND, () => this.refresh()),
      editor.registerCommand(PIN_COMMAND, () => this.pin()),
      editor.registerCommand(UNPIN_COMMAND, () => this.unpin()),
      editor.registerCommand(TOGGLE_PIN_COMMAND, () => (this.pinnedFile === undefined ? this.pin() : this.unpin())),
      editor.registerCommand(SHOW_WHY_COMMAND, (node) => this.showWhy(node)),
    );
    editor.setContext(PINNED_CONTEXT, false);
    const kept = editor.workspaceValue(AGENT_STATE_KEY);
    this.chosenAgent = isAgentChoice(kept) ? kept : "default";
  }

  /** The agent whose view the Instructions view shows (`default`: rutter's own stack). */
  get agent(): AgentChoice {
    return this.chosenAgent;
  }

  /** Show `agent`'s view from now on (kept in the workspace state), and ask again. */
  async setAgent(agent: AgentChoice): Promise<void> {
    this.chosenAgent = agent;
    await this.ports.editor.setWorkspaceValue(AGENT_STATE_KEY, agent);
    await this.refresh();
  }

  /** The file the view is pinned to (undefined: it follows the active editor). */
  get pinned(): ActiveFile | undefined {
    return this.pinnedFile;
  }

  /** Keep the view on the file it shows (the active file when it shows none). */
  async pin(): Promise<void> {
    const file = this.shown?.file ?? this.ports.editor.activeFile();
    if (file === undefined) {
      this.ports.editor.showMessage("info", "rutter: open a file first; the view is pinned to the file it shows");
      return;
    }
    this.pinnedFile = file;
    this.ports.editor.setContext(PINNED_CONTEXT, true);
    if (this.shown?.file.uri === file.uri) {
      this.describe();
      this.renderStatus();
      return;
    }
    await this.refresh();
  }

  /** Follow the active editor again (and show its file now). */
  async unpin(): Promise<void> {
    this.pinnedFile = undefined;
    this.ports.editor.setContext(PINNED_CONTEXT, false);
    await this.refresh();
  }

  /** "Show Why" of a row (a node of the view, or picked from the sources shown). */
  async showWhy(node?: unknown): Promise<void> {
    const { editor } = this.ports;
    const answer = this.shown?.answer;
    if (answer === undefined || isErrorAnswer(answer) || answer.sources.length === 0) {
      editor.showMessage("info", "rutter: no instruction source is shown; open a file inside a workspace folder");
      return;
    }
    let id = typeof node === "object" && node !== null && typeof (node as { id?: unknown }).id === "string"
      ? (node as { id: string }).id
      : undefined;
    if (id === undefined) {
      id = await editor.pick(
        answer.sources.map((source) => ({
          label: `${source.ordinal}. ${source.path}`,
          description: `${source.kind} · precedence ${source.precedence}`,
          value: `source/${source.path}`,
        })),
        `Why does each source apply to ${answer.target_path}?`,
      );
      if (id === undefined) {
        return;
      }
    }
    const details = detailsOf(answer, id);
    if (details === undefined) {
      return;
    }
    await editor.showRendered(details.name, details.text);
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

  /** The file shown, as "Create Run…" pins it: its workspace and workspace-relative path. */
  get shownTarget(): { workspaceId: string; targetPath: string } | undefined {
    const answer = this.shown?.answer;
    return answer !== undefined && !isErrorAnswer(answer)
      ? { workspaceId: answer.workspace_id, targetPath: answer.target_path }
      : undefined;
  }

  /** Ask again for the active file; answers to older questions are dropped. */
  async refresh(): Promise<void> {
    const file = this.pinnedFile ?? this.ports.editor.activeFile();
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
      const agent = this.chosenAgent;
      if (agent !== "default" && !isErrorAnswer(answer)) {
        try {
          shown.profile = await this.ports.server.request<ProfileView>(Methods.effectiveInstructions, {
            textDocument: { uri: file.uri },
            profile: agent,
          });
        } catch (error) {
          shown.profileError = typedError(error);
        }
      }
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
    if (shown?.profile !== undefined) {
      nodes = agentNodes(shown.profile, shown.root);
    } else if (shown?.profileError !== undefined) {
      nodes = [agentErrorNode(this.chosenAgent, shown.profileError)];
    } else if (shown?.answer !== undefined) {
      nodes = instructionNodes(shown.answer, shown.root);
    } else if (shown?.failure !== undefined) {
      nodes = [errorNode({ code: "request_failed", message: shown.failure }, shown.root)];
    }
    this.ports.editor.setTree("rutter.instructions", nodes);
    this.describe();
    this.renderStatus();
    this.onDidShow(this.workspaceId);
  }

  /** The view's description: the file it shows, and whether it is pinned there. */
  private describe(): void {
    const shown = this.shown;
    let text: string | undefined;
    if (shown !== undefined) {
      const answer = shown.answer;
      text = answer !== undefined && !isErrorAnswer(answer) ? answer.target_path : baseName(shown.file.path);
      if (this.chosenAgent !== "default") {
        text = `${text} · ${agentLabel(this.chosenAgent)}`;
      }
      if (this.pinnedFile !== undefined) {
        text = `${text} · pinned`;
      }
    }
    this.ports.editor.setViewDescription("rutter.instructions", text);
  }

  private renderStatus(): void {
    const shown = this.shown;
    const workspaceId = this.workspaceId;
    const stale = workspaceId === undefined ? [] : this.staleRuns(workspaceId);
    this.ports.editor.setStatus(
      shown === undefined ? undefined : statusModel(shown.answer, stale, shown.failure, this.pinnedFile !== undefined),
    );
  }

  dispose(): void {
    for (const disposable of this.disposables.splice(0)) {
      disposable.dispose();
    }
  }
}

function baseName(path: string): string {
  return path.split(/[\\/]/).pop() ?? path;
}
