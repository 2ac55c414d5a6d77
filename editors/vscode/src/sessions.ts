/**
 * Session continuity in VS Code: the "Session Tree" view, the status bar's last checkpoint,
 * and the commands "Create Checkpoint", "Fork from Checkpoint…", "Resume from Checkpoint…",
 * "Compare Checkpoints…", "Show Session Tree" (plus "Open Checkpoint" on a node).
 *
 * The view shows the tree of the current run: the one chosen with "Show Session Tree", else
 * the run of the newest node of the active file's workspace (`rutter/session/recent`). It is
 * asked again after every server start, when the active file's workspace changes, and when the
 * server says `rutter/sessionsChanged` (any process wrote continuity data of the workspace) or
 * `rutter/runsChanged` (a run's status changed). Pickers list `rutter/session/recent`. Fork and
 * resume are confirmed by the server itself (`window/showMessageRequest`, shown as a modal
 * dialog by app.ts, saying what the new run inherits); declined, nothing is written. Compare
 * opens VS Code's diff editor over two read-only documents of the nodes' snapshots.
 */

import type {
  BranchedRun,
  CancelledBranch,
  ContinuityNode,
  NodeComparison,
  RecentNodes,
  RunsAnswer,
  SessionTree,
  SessionsChanged,
  TreeNode,
} from "./protocol";
import { Methods, isCancelled, typedError } from "./protocol";
import type { Disposable, Ports } from "./ports";
import {
  OPEN_NODE_COMMAND,
  SHOW_TREE_COMMAND,
  checkpointStatus,
  comparisonText,
  nodeDocument,
  nodeItem,
  sessionNodes,
  shortId,
  timeText,
} from "./sessionsView";

export const SessionCommands = {
  checkpoint: "rutter.createCheckpoint",
  fork: "rutter.forkFromCheckpoint",
  resume: "rutter.resumeFromCheckpoint",
  compare: "rutter.compareCheckpoints",
  showTree: SHOW_TREE_COMMAND,
  open: OPEN_NODE_COMMAND,
  refresh: "rutter.refreshSessionTree",
} as const;

export const SESSION_VIEW = "rutter.sessions";
const PICK_LIMIT = 50;
const MAX_TITLE_BYTES = 256;

/** The node ID a command was given: a node of the view, a node ID, or `{node_id}`. */
export function nodeIdOf(argument: unknown): string | undefined {
  if (typeof argument === "string" && argument !== "") {
    return argument;
  }
  if (typeof argument === "object" && argument !== null) {
    const record = argument as { id?: unknown; node_id?: unknown };
    if (typeof record.node_id === "string") {
      return record.node_id;
    }
    if (typeof record.id === "string" && record.id.startsWith("node/")) {
      return record.id.slice("node/".length);
    }
  }
  return undefined;
}

export class SessionsController implements Disposable {
  private tree: SessionTree | undefined;
  /** The run chosen with "Show Session Tree" (else the newest node's run is shown). */
  private chosenRun: string | undefined;
  private asking: Promise<void> | undefined;
  private askAgain = false;
  private readonly disposables: Disposable[] = [];

  constructor(
    private readonly ports: Ports,
    private readonly workspaceId: () => string | undefined,
  ) {
    const { editor, server } = ports;
    this.disposables.push(
      server.onDidStart(() => void this.refresh()),
      server.onNotification(Methods.sessionsChanged, (params) => {
        const workspace = this.workspaceId();
        const changed = (params as SessionsChanged | undefined)?.workspace_ids ?? [];
        if (workspace !== undefined && changed.includes(workspace)) {
          void this.refresh();
        }
      }),
      server.onNotification(Methods.runsChanged, () => void this.refresh()),
      editor.registerCommand(SessionCommands.checkpoint, (argument) => this.checkpoint(argument)),
      editor.registerCommand(SessionCommands.fork, (argument) => this.fork(argument)),
      editor.registerCommand(SessionCommands.resume, (argument) => this.resume(argument)),
      editor.registerCommand(SessionCommands.compare, (argument) => this.compare(argument)),
      editor.registerCommand(SessionCommands.showTree, () => this.showTree()),
      editor.registerCommand(SessionCommands.open, (argument) => this.open(argument)),
      editor.registerCommand(SessionCommands.refresh, () => this.refresh()),
    );
  }

  private shownWorkspace: string | undefined;

  /** The active file's workspace is known (again): show its tree when it changed. */
  workspaceShown(workspace: string | undefined): void {
    if (workspace !== this.shownWorkspace) {
      this.shownWorkspace = workspace;
      this.chosenRun = undefined;
      void this.refresh();
    }
  }

  /** Show the tree of `runId` (undefined: ask again for the tree shown now). */
  showRun(runId: string | undefined): Promise<void> {
    if (runId !== undefined) {
      this.chosenRun = runId;
    }
    return this.refresh();
  }

  /** The tree the view shows now (for tests). */
  get current(): SessionTree | undefined {
    return this.tree;
  }

  /** Ask again (one question at a time, as the runs view does). */
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
    const { editor, server } = this.ports;
    const workspace = this.workspaceId();
    let tree: SessionTree | undefined;
    if (workspace !== undefined) {
      try {
        let runId = this.chosenRun;
        if (runId === undefined) {
          const recent = await server.request<RecentNodes>(Methods.sessionRecent, { workspace_id: workspace, limit: 1 });
          runId = recent.items[0]?.run_id;
        }
        if (runId !== undefined) {
          tree = await server.request<SessionTree>(Methods.sessionTree, { run_id: runId });
          if (tree.workspace_id !== workspace) {
            tree = undefined; // chosen in another workspace: show this one's newest
            this.chosenRun = undefined;
            this.askAgain = true;
          }
        }
      } catch {
        // Server not running (the instructions view says so), no store, or the chosen run is
        // gone (another store): show the workspace's newest run instead, once.
        tree = undefined;
        if (this.chosenRun !== undefined) {
          this.chosenRun = undefined;
          this.askAgain = true;
        }
      }
    }
    this.tree = tree;
    editor.setTree("rutter.sessions", tree === undefined ? [] : sessionNodes(tree));
    editor.setSessionStatus(tree === undefined ? undefined : checkpointStatus(tree, tree.run_id));
  }

  private requireWorkspace(): string | undefined {
    const workspace = this.workspaceId();
    if (workspace === undefined) {
      this.ports.editor.showMessage("info", "rutter: open a file of a served workspace folder first");
    }
    return workspace;
  }

  /** A checkpoint (or root, or branch marker) of the workspace, newest first. */
  private async pickNode(placeholder: string, except?: string): Promise<TreeNode | undefined> {
    const { editor, server } = this.ports;
    const workspace = this.requireWorkspace();
    if (workspace === undefined) {
      return undefined;
    }
    let recent: RecentNodes;
    try {
      recent = await server.request<RecentNodes>(Methods.sessionRecent, { workspace_id: workspace, limit: PICK_LIMIT });
    } catch (error) {
      editor.showMessage("error", `rutter: cannot list the checkpoints: ${typedError(error).message}`);
      return undefined;
    }
    const items = recent.items.filter((node) => node.node_id !== except && node.error === null);
    if (items.length === 0) {
      editor.showMessage("info", `rutter: no checkpoint in workspace ${workspace} yet; create one with "Rutter: Create Checkpoint"`);
      return undefined;
    }
    return editor.pick(items.map(nodeItem), placeholder);
  }

  /** "Create Checkpoint": of the current run (the only active one, else picked). */
  async checkpoint(argument?: unknown): Promise<ContinuityNode | undefined> {
    const { editor, server } = this.ports;
    let runId = typeof argument === "string" && argument.startsWith("run_") ? argument : undefined;
    if (runId === undefined) {
      const workspace = this.requireWorkspace();
      if (workspace === undefined) {
        return undefined;
      }
      let runs: RunsAnswer;
      try {
        runs = await server.request<RunsAnswer>(Methods.runs, { workspace_id: workspace });
      } catch (error) {
        editor.showMessage("error", `rutter: cannot list the runs: ${typedError(error).message}`);
        return undefined;
      }
      const active = runs.runs.filter((run) => run.workspace_id === workspace);
      if (active.length === 0) {
        editor.showMessage("info", `rutter: no active run in workspace ${workspace}; create one with "Rutter: Create Run…"`);
        return undefined;
      }
      const current = this.tree?.run_id;
      active.sort((a, b) => Number(b.run_id === current) - Number(a.run_id === current));
      runId =
        active.length === 1
          ? active[0]?.run_id
          : await editor.pick(
              active.map((run) => ({
                label: run.goal,
                description: `run ${shortId(run.run_id)} · ${run.status}${run.run_id === current ? " · current" : ""}`,
                detail: run.target_path,
                value: run.run_id,
              })),
              "Checkpoint which run?",
            );
    }
    if (runId === undefined) {
      return undefined;
    }
    const title = await editor.input({
      title: "Create Checkpoint",
      prompt: `A title for the checkpoint of run ${runId}`,
      placeholder: "before the refactor",
      validate: (text) =>
        text.trim() === ""
          ? "The title cannot be empty"
          : new TextEncoder().encode(text).length > MAX_TITLE_BYTES
            ? `At most ${MAX_TITLE_BYTES} bytes`
            : undefined,
    });
    if (title === undefined) {
      return undefined;
    }
    let node: ContinuityNode;
    try {
      node = await server.request<ContinuityNode>(Methods.sessionCheckpoint, { run_id: runId, title });
    } catch (error) {
      editor.showMessage("error", `rutter: no checkpoint was made: ${typedError(error).message}`);
      return undefined;
    }
    editor.showMessage("info", `rutter: checkpoint "${node.title ?? title}" (${node.node_id}) of run ${runId}`);
    this.chosenRun = runId;
    await this.refresh();
    return node;
  }

  private async branch(kind: "fork" | "resume", argument: unknown): Promise<BranchedRun | undefined> {
    const { editor, server } = this.ports;
    const nodeId =
      nodeIdOf(argument) ?? (await this.pickNode(kind === "fork" ? "Fork from which checkpoint?" : "Resume from which checkpoint?"))?.node_id;
    if (nodeId === undefined) {
      return undefined;
    }
    let params: object = { node_id: nodeId };
    if (kind === "fork") {
      const goal = await editor.input({
        title: "Fork from Checkpoint",
        prompt: `The goal of the new run forked from ${nodeId}`,
        validate: (text) => (text.trim() === "" ? "Say what the new run should achieve" : undefined),
      });
      if (goal === undefined) {
        return undefined;
      }
      params = { node_id: nodeId, goal };
    }
    let answer: BranchedRun | CancelledBranch;
    try {
      // The server asks the person (what is and is not inherited) before it writes anything.
      answer = await server.request<BranchedRun | CancelledBranch>(kind === "fork" ? Methods.sessionFork : Methods.sessionResume, params);
    } catch (error) {
      editor.showMessage("error", `rutter: nothing was created: ${typedError(error).message}`);
      return undefined;
    }
    if (isCancelled(answer)) {
      editor.showMessage("info", `rutter: ${kind} cancelled; nothing was created`);
      return undefined;
    }
    editor.showMessage(
      "info",
      `rutter: ${kind === "fork" ? "forked" : "resumed"} from ${nodeId}: run ${answer.run_id} (${answer.mode} mode, instructions revision ${answer.revision})`,
    );
    this.chosenRun = answer.run_id;
    await this.refresh();
    return answer;
  }

  fork(argument?: unknown): Promise<BranchedRun | undefined> {
    return this.branch("fork", argument);
  }

  resume(argument?: unknown): Promise<BranchedRun | undefined> {
    return this.branch("resume", argument);
  }

  /** "Compare Checkpoints…": A (the node given, else picked) and B (picked), in the diff editor. */
  async compare(argument?: unknown): Promise<NodeComparison | undefined> {
    const { editor, server } = this.ports;
    const a = nodeIdOf(argument) ?? (await this.pickNode("Compare: the first checkpoint (A)"))?.node_id;
    if (a === undefined) {
      return undefined;
    }
    const b = (await this.pickNode(`Compare ${shortId(a)} with (B)`, a))?.node_id;
    if (b === undefined) {
      return undefined;
    }
    try {
      const comparison = await server.request<NodeComparison>(Methods.sessionCompare, { node_a: a, node_b: b });
      const [left, right] = await Promise.all([
        server.request<ContinuityNode>(Methods.sessionNode, { node_id: a }),
        server.request<ContinuityNode>(Methods.sessionNode, { node_id: b }),
      ]);
      await editor.showDiff(
        { name: `${a}.md`, text: nodeDocument(left, comparison.a) },
        { name: `${b}.md`, text: nodeDocument(right, comparison.b) },
        `${left.title ?? left.kind} ↔ ${right.title ?? right.kind}`,
      );
      editor.showMessage("info", `rutter: ${shortId(a)} → ${shortId(b)}: ${comparisonText(comparison)}`);
      return comparison;
    } catch (error) {
      editor.showMessage("error", `rutter: cannot compare: ${typedError(error).message}`);
      return undefined;
    }
  }

  /** "Show Session Tree": choose the run whose tree to show when the workspace has several. */
  async showTree(): Promise<void> {
    const { editor, server } = this.ports;
    const workspace = this.workspaceId();
    if (workspace !== undefined) {
      try {
        const recent = await server.request<RecentNodes>(Methods.sessionRecent, { workspace_id: workspace, limit: PICK_LIMIT });
        const newest = new Map<string, TreeNode>();
        for (const node of recent.items) {
          if (!newest.has(node.run_id)) {
            newest.set(node.run_id, node);
          }
        }
        if (newest.size > 1) {
          const chosen = await editor.pick(
            [...newest.values()].map((node) => ({
              label: `run ${shortId(node.run_id)} (${node.run_status})`,
              description: `last: ${node.title ?? node.kind} · ${timeText(node.created_at)}`,
              detail: node.run_id,
              value: node.run_id,
            })),
            "Show the session tree of which run?",
          );
          if (chosen === undefined) {
            return;
          }
          this.chosenRun = chosen;
        }
      } catch {
        // the view says what it can
      }
    }
    await this.refresh();
    await editor.revealView("rutter.sessions");
  }

  /** "Open Checkpoint": the node's snapshot in a read-only document. */
  async open(argument?: unknown): Promise<void> {
    const { editor, server } = this.ports;
    const nodeId = nodeIdOf(argument);
    if (nodeId === undefined) {
      return;
    }
    try {
      const node = await server.request<ContinuityNode>(Methods.sessionNode, { node_id: nodeId });
      await editor.showReadOnly(`${nodeId}.md`, nodeDocument(node), "markdown");
    } catch (error) {
      editor.showMessage("error", `rutter: cannot open ${nodeId}: ${typedError(error).message}`);
    }
  }

  dispose(): void {
    for (const disposable of this.disposables.splice(0)) {
      disposable.dispose();
    }
  }
}
