/**
 * The agent commands of the Instructions view (docs/reference/profiles.md):
 *
 * - "Instructions for Agent…" (`rutter.instructions.chooseAgent`, the view's title bar): pick
 *   rutter (default), Codex, Claude Code, Gemini CLI, Copilot or Cursor; the view then shows
 *   that agent's sources (instructions.ts). An argument naming one skips the pick.
 * - "Compare Agents for This File" (`rutter.instructions.compareAgents`): every agent's view of
 *   the file the Instructions view shows, side by side, as a read-only markdown document
 *   (agentsView.ts `compareText`), from `rutter/effectiveInstructions` with `profile: "all"`.
 */

import type { ProfileViews } from "./protocol";
import { Methods, isErrorAnswer, typedError } from "./protocol";
import type { Disposable, Ports } from "./ports";
import type { InstructionsController } from "./instructions";
import { AGENT_CHOICES, type AgentChoice, agentLabel, compareText, isAgentChoice } from "./agentsView";

export const AgentCommands = {
  choose: "rutter.instructions.chooseAgent",
  compare: "rutter.instructions.compareAgents",
} as const;

export class AgentsController implements Disposable {
  private readonly disposables: Disposable[] = [];

  constructor(
    private readonly ports: Ports,
    private readonly instructions: InstructionsController,
  ) {
    this.disposables.push(
      ports.editor.registerCommand(AgentCommands.choose, (argument) => this.choose(argument)),
      ports.editor.registerCommand(AgentCommands.compare, () => this.compare()),
    );
  }

  /** Switch the Instructions view to an agent (picked unless given). */
  async choose(argument?: unknown): Promise<AgentChoice | undefined> {
    let agent: AgentChoice | undefined = isAgentChoice(argument) ? argument : undefined;
    if (agent === undefined) {
      const current = this.instructions.agent;
      agent = await this.ports.editor.pick(
        AGENT_CHOICES.map((choice) => ({
          label: agentLabel(choice),
          description: [
            choice === "default" ? "the stack runs pin" : choice,
            choice === current ? "shown now" : undefined,
          ]
            .filter((part) => part !== undefined)
            .join(" · "),
          value: choice,
        })),
        "Whose instructions should the Instructions view show?",
      );
      if (agent === undefined) {
        return undefined;
      }
    }
    await this.instructions.setAgent(agent);
    return agent;
  }

  /** Open the side-by-side of every agent for the file the Instructions view shows. */
  async compare(): Promise<void> {
    const { editor, server } = this.ports;
    const shown = this.instructions.current;
    const file = shown?.file ?? editor.activeFile();
    if (file === undefined) {
      editor.showMessage("info", "rutter: open a file first; the comparison is for the file the Instructions view shows");
      return;
    }
    let views: ProfileViews;
    try {
      views = await server.request<ProfileViews>(Methods.effectiveInstructions, {
        textDocument: { uri: file.uri },
        profile: "all",
      });
    } catch (error) {
      const info = typedError(error);
      editor.showMessage("error", `rutter: cannot compare the agents for this file (${info.code}): ${info.message}`);
      return;
    }
    const answer = shown?.answer;
    const target = answer !== undefined && !isErrorAnswer(answer) && shown?.file.uri === file.uri
      ? answer.target_path
      : baseName(file.path);
    await editor.showRendered(`agents-${baseName(target)}.md`, compareText(target, views.profiles));
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
