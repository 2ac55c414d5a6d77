/**
 * The "Pin Proposals" view's nodes: the pins agents proposed that wait for an answer, each
 * with the exact text it would pin. Pure: the controller (`pins.ts`) sets them.
 */

import type { Proposal } from "./protocol";
import { who } from "./people";
import type { ViewNode } from "./ports";

export const ANSWER_PROPOSAL_COMMAND = "rutter.answerPinProposal";
export const PROPOSAL_CONTEXT = "pinProposal";
const MAX_LABEL = 80;

export function firstLine(text: string): string {
  const [first = ""] = text.split("\n");
  return first.length > MAX_LABEL || first !== text ? `${first.slice(0, MAX_LABEL - 1)}…` : first;
}

export function proposalNodes(proposals: readonly Proposal[]): ViewNode[] {
  return proposals.map((proposal) => ({
    id: proposal.proposal_id,
    label: firstLine(proposal.text),
    description: `${proposal.workspace_id} · by ${who(proposal.proposed_by, proposal.proposed_by_person)}`,
    tooltip:
      `${proposal.text}\n\nProposed by ${who(proposal.proposed_by, proposal.proposed_by_person)} at ${proposal.created_at} for thread ` +
      `${proposal.thread_id}${proposal.run_id === null ? "" : ` (run ${proposal.run_id})`}.\n` +
      "Click to answer: pin it, discuss it without pinning, or reply in your own words.",
    icon: "pin",
    contextValue: PROPOSAL_CONTEXT,
    command: { command: ANSWER_PROPOSAL_COMMAND, title: "Answer", arguments: [proposal.proposal_id] },
  }));
}

/** The proposal ID a command was given: a node of the view, or the ID itself. */
export function proposalIdOf(argument: unknown): string | undefined {
  if (typeof argument === "string" && argument.startsWith("prop_")) {
    return argument;
  }
  if (typeof argument === "object" && argument !== null && "id" in argument) {
    const id: unknown = argument.id;
    return typeof id === "string" && id.startsWith("prop_") ? id : undefined;
  }
  return undefined;
}
