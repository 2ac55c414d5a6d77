/**
 * Thread pins and pin proposals: the "Pin Proposals" view, a notification with the three
 * choices when an agent proposes a pin, and the commands to add, edit and remove pins.
 *
 * The view asks `rutter/pin/proposals` after every server start and when the server says
 * `rutter/pinProposalsChanged` (a proposal arrived, from an agent through `rutter mcp`, or was
 * answered anywhere). Each proposal is announced once per session with the three choices of
 * docs/reference/pins.md: **Pin** (the shown text, exactly), **Discuss** (answer without pinning, an optional
 * reply) and **Custom reply…** (your own words, pinned only if you choose so). Nothing is
 * pinned without the person's choice; a proposal answered elsewhere first is `conflict`, and
 * the person is told so.
 */

import type { AnsweredProposal, Pin, PinList, ProposalList, Proposal, RunsAnswer } from "./protocol";
import { Methods, typedError } from "./protocol";
import { who } from "./people";
import type { Disposable, PickItem, Ports } from "./ports";
import { ANSWER_PROPOSAL_COMMAND, firstLine, proposalIdOf, proposalNodes } from "./pinsView";

export const PinCommands = {
  answer: ANSWER_PROPOSAL_COMMAND,
  add: "rutter.addPin",
  edit: "rutter.editPin",
  remove: "rutter.removePin",
  refresh: "rutter.refreshPinProposals",
} as const;

export const Choices = { pin: "Pin", discuss: "Discuss", custom: "Custom reply…" } as const;
export const PIN_REPLY = "Pin my reply";
export const REPLY_ONLY = "Reply without pinning";
export const REMOVE = "Remove pin";

export type AnswerOutcome = "pinned" | "answered" | "cancelled" | "failed";

export class PinsController implements Disposable {
  private proposals: Proposal[] = [];
  private readonly announced = new Set<string>();
  private readonly disposables: Disposable[] = [];

  constructor(private readonly ports: Ports) {
    const { editor, server } = ports;
    this.disposables.push(
      server.onDidStart(() => void this.refresh()),
      server.onNotification(Methods.pinProposalsChanged, () => void this.refresh()),
      editor.registerCommand(PinCommands.refresh, () => this.refresh()),
      editor.registerCommand(PinCommands.answer, (argument) => this.answer(argument)),
      editor.registerCommand(PinCommands.add, () => this.add()),
      editor.registerCommand(PinCommands.edit, () => this.edit()),
      editor.registerCommand(PinCommands.remove, () => this.remove()),
    );
  }

  get pending(): readonly Proposal[] {
    return this.proposals;
  }

  /** Ask for the pending proposals again; announce the ones not announced yet. */
  async refresh(): Promise<void> {
    try {
      const answer = await this.ports.server.request<ProposalList | undefined>(Methods.pinProposals, {});
      this.proposals = Array.isArray(answer?.proposals) ? answer.proposals : [];
    } catch {
      this.proposals = []; // server not running, or no store
    }
    this.ports.editor.setTree("rutter.proposals", proposalNodes(this.proposals));
    for (const proposal of this.proposals) {
      if (!this.announced.has(proposal.proposal_id)) {
        this.announced.add(proposal.proposal_id);
        void this.announce(proposal);
      }
    }
  }

  private async announce(proposal: Proposal): Promise<void> {
    const choice = await this.ports.editor.notify(
      "info",
      `rutter: ${who(proposal.proposed_by, proposal.proposed_by_person)} proposes to pin to this task: "${firstLine(proposal.text)}"`,
      [Choices.pin, Choices.discuss, Choices.custom],
    );
    if (choice !== undefined) {
      await this.answerWith(proposal, choice);
    }
  }

  /** "Answer Pin Proposal" (a node of the view, a proposal ID, or a pick). */
  async answer(argument?: unknown): Promise<AnswerOutcome> {
    const { editor } = this.ports;
    const wanted = proposalIdOf(argument);
    const proposal =
      wanted === undefined
        ? await editor.pick(
            this.proposals.map((each) => ({ label: firstLine(each.text), description: each.workspace_id, detail: each.text, value: each })),
            "Which proposal do you answer?",
          )
        : this.proposals.find((each) => each.proposal_id === wanted);
    if (proposal === undefined) {
      return "cancelled";
    }
    const choice = await editor.askModal(
      `${who(proposal.proposed_by, proposal.proposed_by_person)} proposes to pin to this task:`,
      proposal.text,
      [Choices.pin, Choices.discuss, Choices.custom],
    );
    return choice === undefined ? "cancelled" : this.answerWith(proposal, choice);
  }

  private async answerWith(proposal: Proposal, choice: string): Promise<AnswerOutcome> {
    const { editor } = this.ports;
    let params: Record<string, unknown>;
    if (choice === Choices.pin) {
      params = { choice: "pin" };
    } else if (choice === Choices.discuss) {
      const reply = await editor.input({ title: "Discuss (nothing is pinned)", prompt: "Your reply (optional)" });
      if (reply === undefined) {
        return "cancelled";
      }
      params = { choice: "discuss", text: reply.trim() === "" ? undefined : reply };
    } else {
      const reply = await editor.input({
        title: "Custom reply",
        prompt: "Your own words",
        validate: (text) => (text.trim() === "" ? "Write a reply, or cancel" : undefined),
      });
      if (reply === undefined) {
        return "cancelled";
      }
      const pin = await editor.pick<boolean>(
        [
          { label: PIN_REPLY, detail: "pin your reply to the task instead of the proposed text", value: true },
          { label: REPLY_ONLY, detail: "nothing is pinned", value: false },
        ],
        "Pin your reply?",
      );
      if (pin === undefined) {
        return "cancelled";
      }
      params = { choice: "custom", text: reply, pin };
    }
    try {
      const answered = await this.ports.server.request<AnsweredProposal>(Methods.pinAnswer, {
        proposal_id: proposal.proposal_id,
        ...params,
      });
      editor.showMessage(
        "info",
        answered.pin === null
          ? `rutter: answered ${proposal.proposal_id} (${answered.proposal.choice}); nothing was pinned`
          : `rutter: pinned ${answered.pin.pin_id} to thread ${answered.pin.thread_id}`,
      );
      await this.refresh();
      return answered.pin === null ? "answered" : "pinned";
    } catch (error) {
      const info = typedError(error);
      const why = info.code === "conflict" ? "it was already answered" : info.message;
      editor.showMessage("error", `rutter: cannot answer ${proposal.proposal_id}: ${why}`);
      await this.refresh();
      return "failed";
    }
  }

  /** The thread of an active run the person picks (pins belong to threads). */
  private async pickThread(): Promise<string | undefined> {
    let runs: RunsAnswer["runs"] = [];
    try {
      runs = (await this.ports.server.request<RunsAnswer>(Methods.runs, {})).runs;
    } catch (error) {
      this.ports.editor.showMessage("error", `rutter: cannot list runs: ${typedError(error).message}`);
      return undefined;
    }
    const threads = new Map<string, PickItem<string>>();
    for (const run of runs) {
      if (run.thread_id !== undefined && !threads.has(run.thread_id)) {
        threads.set(run.thread_id, { label: run.goal, description: `${run.workspace_id} · ${run.thread_id}`, value: run.thread_id });
      }
    }
    if (threads.size === 0) {
      this.ports.editor.showMessage("info", "rutter: no active run: pins belong to a run's thread");
      return undefined;
    }
    return this.ports.editor.pick([...threads.values()], "Pin to the thread of which run?");
  }

  private async pickPin(): Promise<Pin | undefined> {
    const threadId = await this.pickThread();
    if (threadId === undefined) {
      return undefined;
    }
    const listed = await this.ports.server.request<PinList>(Methods.pinList, { thread_id: threadId });
    if (listed.pins.length === 0) {
      this.ports.editor.showMessage("info", `rutter: thread ${threadId} has no pins`);
      return undefined;
    }
    return this.ports.editor.pick(
      listed.pins.map((pin) => ({ label: firstLine(pin.text), description: `version ${pin.version}`, detail: pin.text, value: pin })),
      "Which pin?",
    );
  }

  async add(): Promise<Pin | undefined> {
    const threadId = await this.pickThread();
    if (threadId === undefined) {
      return undefined;
    }
    const text = await this.ports.editor.input({
      title: "Add Pin",
      prompt: "A requirement every later run of this thread keeps (at most 8192 characters)",
      validate: (value) => (value.trim() === "" ? "Write the requirement, or cancel" : undefined),
    });
    if (text === undefined) {
      return undefined;
    }
    return this.write(Methods.pinAdd, { thread_id: threadId, text }, "pinned");
  }

  async edit(): Promise<Pin | undefined> {
    const pin = await this.pickPin();
    if (pin === undefined) {
      return undefined;
    }
    const text = await this.ports.editor.input({ title: "Edit Pin", prompt: "The pin's new text", value: pin.text });
    if (text === undefined) {
      return undefined;
    }
    return this.write(Methods.pinEdit, { pin_id: pin.pin_id, version: pin.version, text }, "edited");
  }

  async remove(): Promise<boolean> {
    const pin = await this.pickPin();
    if (pin === undefined) {
      return false;
    }
    const sure = await this.ports.editor.askModal("Remove this pin? Later runs of its thread no longer carry it.", pin.text, [REMOVE]);
    if (sure !== REMOVE) {
      return false;
    }
    return (await this.write(Methods.pinRemove, { pin_id: pin.pin_id, version: pin.version }, "removed")) !== undefined;
  }

  private async write<T extends { pin_id: string }>(method: string, params: unknown, done: string): Promise<T | undefined> {
    try {
      const result = await this.ports.server.request<T>(method, params);
      this.ports.editor.showMessage("info", `rutter: ${done} ${result.pin_id}`);
      return result;
    } catch (error) {
      this.ports.editor.showMessage("error", `rutter: ${typedError(error).message}`);
      return undefined;
    }
  }

  dispose(): void {
    for (const disposable of this.disposables.splice(0)) {
      disposable.dispose();
    }
  }
}
