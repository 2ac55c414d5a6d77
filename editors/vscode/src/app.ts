/**
 * The extension without VS Code: every view, command and flow, wired to the ports.
 * `extension.ts` calls `startRutter` with the real ports; tests call it with fakes.
 */

import type { Disposable, Ports } from "./ports";
import { AgentsController } from "./agents";
import { AssemblyController } from "./assembly";
import { CompactionController } from "./compaction";
import { HistoryController, type Schedule, timerSchedule } from "./history";
import { InstructionsController } from "./instructions";
import { OPEN_FILE_COMMAND } from "./instructionsView";
import { MemoryController } from "./memory";
import { MemoryView } from "./memoryView";
import { SHOW_MESSAGE_REQUEST, askAsModal } from "./messages";
import { PinsController } from "./pins";
import { RunsController } from "./runs";
import { SessionsController } from "./sessions";

export const Commands = {
  restartServer: "rutter.restartServer",
  showOutput: "rutter.showOutput",
  openInstructionFile: OPEN_FILE_COMMAND,
} as const;

export interface Rutter extends Disposable {
  instructions: InstructionsController;
  runs: RunsController;
  memory: MemoryController;
  memoryView: MemoryView;
  sessions: SessionsController;
  pins: PinsController;
  agents: AgentsController;
  history: HistoryController;
  assembly: AssemblyController;
  compaction: CompactionController;
}

export interface StartOptions {
  /** When the history search's quiet time is over (tests pass a manual one). */
  schedule?: Schedule;
}

export function startRutter(ports: Ports, options: StartOptions = {}): Rutter {
  const { editor, server } = ports;
  const instructions = new InstructionsController(ports);
  const runs = new RunsController(ports);
  instructions.staleRuns = (workspaceId) => runs.staleRuns(workspaceId);
  runs.onDidChange = () => instructions.updateStatus();
  runs.shownTarget = () => instructions.shownTarget;
  const memory = new MemoryController(ports, () => instructions.workspaceId);
  const memoryView = new MemoryView(ports, memory);
  const sessions = new SessionsController(ports, () => instructions.workspaceId);
  instructions.onDidShow = (workspaceId) => {
    sessions.workspaceShown(workspaceId);
    memoryView.workspaceShown(workspaceId);
  };
  const pins = new PinsController(ports);
  const agents = new AgentsController(ports, instructions);
  const history = new HistoryController(
    ports,
    () => {
      const workspaceId = instructions.workspaceId;
      const tree = sessions.current;
      // The run the Session Tree shows, when it is of the active file's workspace.
      const runId = tree !== undefined && (workspaceId === undefined || tree.workspace_id === workspaceId) ? tree.run_id : undefined;
      return { workspaceId: workspaceId ?? tree?.workspace_id, runId };
    },
    options.schedule ?? timerSchedule,
  );
  /** The active runs, asked again. */
  const activeRuns = async (): Promise<typeof runs.current> => {
    await runs.refresh();
    return runs.current;
  };
  const assembly = new AssemblyController(ports, activeRuns);
  const compaction = new CompactionController(ports, () => sessions.current, activeRuns, (runId) => sessions.showRun(runId));
  const disposables: Disposable[] = [
    instructions,
    runs,
    memory,
    memoryView,
    sessions,
    pins,
    agents,
    history,
    assembly,
    compaction,
    server.onRequest(SHOW_MESSAGE_REQUEST, (params) => askAsModal(editor, params)),
    editor.registerCommand(Commands.restartServer, () => server.restart()),
    editor.registerCommand(Commands.showOutput, () => server.showLog()),
    editor.registerCommand(Commands.openInstructionFile, (path) =>
      typeof path === "string" ? editor.openFile(path) : undefined,
    ),
  ];
  return {
    instructions,
    runs,
    memory,
    memoryView,
    sessions,
    pins,
    agents,
    history,
    assembly,
    compaction,
    dispose(): void {
      for (const disposable of disposables.splice(0)) {
        disposable.dispose();
      }
    },
  };
}
