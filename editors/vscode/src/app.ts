/**
 * The extension without VS Code: every view, command and flow, wired to the ports.
 * `extension.ts` calls `startRutter` with the real ports; tests call it with fakes.
 */

import type { Disposable, Ports } from "./ports";
import { InstructionsController } from "./instructions";
import { OPEN_FILE_COMMAND } from "./instructionsView";

export const Commands = {
  restartServer: "rutter.restartServer",
  showOutput: "rutter.showOutput",
  openInstructionFile: OPEN_FILE_COMMAND,
} as const;

export interface Rutter extends Disposable {
  instructions: InstructionsController;
}

export function startRutter(ports: Ports): Rutter {
  const { editor, server } = ports;
  const instructions = new InstructionsController(ports);
  const disposables: Disposable[] = [
    instructions,
    editor.registerCommand(Commands.restartServer, () => server.restart()),
    editor.registerCommand(Commands.showOutput, () => server.showLog()),
    editor.registerCommand(Commands.openInstructionFile, (path) =>
      typeof path === "string" ? editor.openFile(path) : undefined,
    ),
  ];
  return {
    instructions,
    dispose(): void {
      for (const disposable of disposables.splice(0)) {
        disposable.dispose();
      }
    },
  };
}
