"""Pin proposals (docs/reference/pins.md): an agent proposes the exact text of a pin; it waits
until an operator answers it, once, with one of three choices.

- `pin`: pin the text as it was shown (no other text may come with it);
- `discuss`: answer without pinning (an optional reply in the person's own words);
- `custom`: the person's own reply, pinned only with the explicit pin flag.

A proposal never pins by itself. The proposed text is stored exactly as given apart from
redaction (section 8), which is what the person is shown and what `pin` pins. Any surface may
propose (`mcp` is the usual one); only an operator surface answers. An answer and the pin it
creates are one transaction, and a proposal already answered is `conflict`: the first answer
stands.
"""

from __future__ import annotations

import re
from typing import Final

from sqlalchemy.engine import Connection

from rutter_core.continuity.pins import repo
from rutter_core.continuity.pins.model import (
    CHOICES,
    MAX_LISTED_PROPOSALS,
    AnsweredProposal,
    Choice,
    Proposal,
    ProposalList,
)
from rutter_core.continuity.pins.service import (
    clean_pin_text,
    insert_within_bounds,
)
from rutter_core.continuity.policy import CleanText, require_thread_id
from rutter_core.continuity.threads import require_thread
from rutter_core.kernel.actors import ACTORS, is_actor, require_operator
from rutter_core.kernel.clock import now_rfc3339
from rutter_core.kernel.errors import ConflictError, Hint, NotFoundError, RejectedError, UsageError
from rutter_core.kernel.ids import new_id
from rutter_core.kernel.text import require_readable
from rutter_core.store import Store
from rutter_core.workspaces.service import project_workspace_ids

PROPOSAL_ID: Final = re.compile("prop_[0-9A-HJKMNP-TV-Z]{26}")


def propose(
    conn: Connection, thread_id: str, *, run_id: str | None, text: str, actor: str, now: str
) -> Proposal:
    """A pending proposal of `text` for the (active) thread, in the caller's write
    transaction."""
    if not is_actor(actor):
        raise RejectedError(
            "actor_not_allowed",
            f"actor {actor!r} may not propose pins",
            details={"actor": str(actor), "allowed": list(ACTORS)},
        )
    thread_id = require_thread_id(thread_id)
    clean = clean_pin_text("text", text)
    workspace_id = require_thread(conn, thread_id, writable=True)
    return repo.insert_proposal(
        conn,
        proposal_id=new_id("prop"),
        thread_id=thread_id,
        workspace_id=workspace_id,
        run_id=run_id,
        text=clean.text,
        redacted=clean.redacted,
        actor=actor,
        now=now,
    )


def list_proposals(
    store: Store,
    *,
    workspace_id: str | None = None,
    thread_id: str | None = None,
    include_answered: bool = False,
    proposed_by: str | None = None,
    only_answered: bool = False,
) -> ProposalList:
    """Proposals oldest first: the pending ones (or all, or with `only_answered` the answered
    ones), of a workspace or a thread if one is named, by one actor if `proposed_by` names it,
    at most 200."""
    if thread_id is not None:
        thread_id = require_thread_id(thread_id)
    with store.read() as conn:
        if thread_id is not None:
            require_thread(conn, thread_id, writable=False)
        found = repo.select_proposals(
            conn,
            # A project's proposals, made through any registration of it.
            workspace_ids=None
            if workspace_id is None
            else project_workspace_ids(conn, workspace_id),
            thread_id=thread_id,
            include_answered=include_answered or only_answered,
            only_answered=only_answered,
            proposed_by=proposed_by,
            limit=MAX_LISTED_PROPOSALS + 1,
        )
    return ProposalList(
        proposals=tuple(found[:MAX_LISTED_PROPOSALS]), has_more=len(found) > MAX_LISTED_PROPOSALS
    )


def require_proposal_id(proposal_id: object) -> str:
    if isinstance(proposal_id, str) and PROPOSAL_ID.fullmatch(proposal_id) is not None:
        return proposal_id
    raise NotFoundError(
        "proposal_not_found",
        "no such proposal: a proposal ID is prop_ followed by 26 ULID characters",
        hint=Hint("list_proposals"),
    )


def require_choice(choice: object) -> Choice:
    for known in CHOICES:
        if choice == known:
            return known
    raise UsageError(
        "invalid_choice",
        f"an answer is one of {', '.join(CHOICES)}",
        details={"allowed": list(CHOICES)},
    )


def answer(
    store: Store,
    proposal_id: str,
    *,
    choice: str,
    text: str | None = None,
    pin: bool = False,
    actor: str,
) -> AnsweredProposal:
    """Answer a pending proposal; `pin`, or `custom` with `pin`, creates the pin in the same
    transaction (within the thread's bounds, or nothing is answered)."""
    operator = require_operator(actor, what="answer pin proposals")
    proposal_id = require_proposal_id(proposal_id)
    checked = require_choice(choice)
    _require_answer_shape(checked, text, pin)
    reply = None if text is None else clean_pin_text("reply", text)
    now = now_rfc3339()
    with store.write() as conn:
        proposal = repo.find_proposal(conn, proposal_id)
        if proposal is None:
            raise NotFoundError(
                "proposal_not_found",
                f"no proposal {proposal_id}",
                details={"proposal_id": proposal_id},
                hint=Hint("list_proposals"),
            )
        if proposal.status != "pending":
            raise _answered(proposal)
        created = None
        if checked == "pin" or pin:
            # The shown text is the stored one, checked and redacted when it was proposed; one
            # stored before invisible characters were refused is not pinned as it is.
            if reply is None:
                require_readable(
                    "proposed text", proposal.text, allowed="\n\t", hint=Hint("answer_custom")
                )
            pinned = CleanText(proposal.text, proposal.redacted) if reply is None else reply
            created = insert_within_bounds(
                conn, proposal.thread_id, pinned, proposal_id=proposal.proposal_id,
                actor=operator, now=now,
            )  # fmt: skip
        done = repo.answer_proposal(
            conn, proposal_id, choice=checked,
            reply=None if reply is None else reply.text,
            reply_redacted=reply is not None and reply.redacted,
            pin_id=None if created is None else created.pin_id, actor=operator, now=now,
        )  # fmt: skip
        if not done:  # pragma: no cover - only without SQLite's write lock
            raise _answered(proposal)
        answered = repo.find_proposal(conn, proposal_id)
    assert answered is not None
    return AnsweredProposal(proposal=answered, pin=created)


def _require_answer_shape(choice: Choice, text: str | None, pin: bool) -> None:
    if choice == "pin" and text is not None:
        raise UsageError(
            "invalid_answer",
            "`pin` pins the proposed text as it was shown: it takes no text of its own (answer "
            "`custom` with the pin flag to pin your own words)",
            hint=Hint("answer_custom"),
        )
    if pin and choice != "custom":
        raise UsageError(
            "invalid_answer",
            "the pin flag goes with `custom` only (`pin` always pins, `discuss` never does)",
        )
    if choice == "custom" and text is None:
        raise UsageError("invalid_answer", "a `custom` answer needs its text")


def _answered(proposal: Proposal) -> ConflictError:
    return ConflictError(
        "conflict",
        f"proposal {proposal.proposal_id} was already answered ({proposal.choice}); an answer "
        "is final",
        details={
            "proposal_id": proposal.proposal_id,
            "status": proposal.status,
            "choice": proposal.choice,
            "pin_id": proposal.pin_id,
        },
        hint=Hint("list_proposals"),
    )
