"""Human-readable output of `rutter context pin ...`. JSON output never passes through here.

Pin and proposal texts are written by people and agents: escaped, so `[...]` in them is never
console markup.
"""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from rutter_cli.render import who
from rutter_core.app.pins import AnsweredProposal, Pin, PinList, ProposalList, RemovedPin


def _say(console: Console, text: str) -> None:
    console.print(escape(text), highlight=False, soft_wrap=True)


def render_pin(console: Console, pin: Pin, did: str) -> None:
    _say(console, f"{did} {pin.pin_id} (version {pin.version}) in thread {pin.thread_id}:")
    _say(console, pin.text)
    if pin.redacted:
        console.print("  secrets in the text were replaced by \\[REDACTED:<kind>] markers.")


def render_pins(console: Console, found: PinList) -> None:
    whose = f"thread {found.thread_id}"
    if found.run_id is not None:
        whose += f" (carried by run {found.run_id})"
    if not found.pins:
        _say(console, f"No pins in {whose}.")
        return
    limits = found.limits
    _say(
        console,
        f"{found.count} of {limits.max_pins} pins in {whose}, {found.total_chars} of "
        f"{limits.max_total_chars} characters:",
    )
    table = Table(show_header=True, header_style="bold")
    for column in ("pin", "version", "updated", "text"):
        table.add_column(column, overflow="fold")
    for pin in found.pins:
        updated = f"{pin.updated_at} by {who(pin.updated_by, pin.updated_by_person)}"
        table.add_row(pin.pin_id, str(pin.version), escape(updated), escape(pin.text))
    console.print(table)


def render_removed(console: Console, removed: RemovedPin) -> None:
    _say(console, f"Removed {removed.pin_id} (version {removed.version}) from {removed.thread_id}.")


def render_proposals(console: Console, found: ProposalList) -> None:
    if not found.proposals:
        console.print("No proposals wait for an answer.")
        return
    for proposal in found.proposals:
        state = proposal.status if proposal.choice is None else f"answered: {proposal.choice}"
        _say(
            console,
            f"{proposal.proposal_id} · {state} · workspace {proposal.workspace_id} · thread "
            f"{proposal.thread_id} · by {who(proposal.proposed_by, proposal.proposed_by_person)}"
            f" · {proposal.created_at}",
        )
        for line in proposal.text.splitlines():
            _say(console, f"    {line}")
    if found.has_more:
        console.print("(more proposals than shown: answer these first)")
    console.print(
        "Answer with `rutter context pin answer PROPOSAL pin|discuss|custom [--text T] [--pin]`."
    )


def render_answered(console: Console, answered: AnsweredProposal) -> None:
    proposal = answered.proposal
    answerer = who(proposal.answered_by or "-", proposal.answered_by_person)
    _say(console, f"Answered {proposal.proposal_id}: {proposal.choice} (by {answerer}).")
    if answered.pin is not None:
        _say(console, f"Pinned {answered.pin.pin_id} in thread {answered.pin.thread_id}.")
    else:
        console.print("Nothing was pinned.")
