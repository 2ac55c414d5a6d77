"""Operations on thread pins and pin proposals (docs/reference/pins.md): one params model per
operation, and `PinOperations` (`Rutter(store, reader).pins`).

Who acts (`actor`) is the surface's own fact, never a param: the CLI and the language server
are operators (they add, edit, remove pins and answer proposals), the MCP server is an agent
(it proposes; a pin write with actor `mcp` is refused here, and by the store). A run's pins are
its thread's: listing by run is how a later run of the thread sees what it carries.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from pydantic import Field, StrictBool, StrictInt, StrictStr

from rutter_core.app.models import NullMeansAbsent, allowed, whole_number
from rutter_core.continuity.pins import proposals, service
from rutter_core.continuity.pins.model import (
    AnsweredProposal,
    Choice,
    Pin,
    PinList,
    Proposal,
    ProposalList,
    ProposalStatus,
    RemovedPin,
)
from rutter_core.kernel.actors import Actor, OperatorActor
from rutter_core.kernel.clock import now_rfc3339
from rutter_core.kernel.errors import Hint, UsageError
from rutter_core.runs import service as runs

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection

    from rutter_core.app.facade import Rutter


class PinParams(NullMeansAbsent):
    """Base of the pin params: a JSON `null` means the field was not given."""


# Checked by the pins service (`invalid_version`, `invalid_choice`); stated in the schemas.
PinVersion = Annotated[
    StrictInt, whole_number(1), Field(description="the pin's version as last read")
]
ChoiceName = Annotated[StrictStr, allowed(Choice)]

_THREAD = Field(None, description="the thread's ID (thr_...)")
_RUN = Field(None, description="a run's ID (run_...): its thread")


class AddPinParams(PinParams):
    thread_id: StrictStr = Field(description="the thread's ID (thr_...)")
    text: StrictStr = Field(description="the pin (stored redacted; at most 8192 characters)")


class ListPinsParams(PinParams):
    thread_id: StrictStr | None = _THREAD
    run_id: StrictStr | None = _RUN


class EditPinParams(PinParams):
    pin_id: StrictStr = Field(description="the pin's ID (pin_...)")
    version: PinVersion
    text: StrictStr = Field(description="the new text (stored redacted)")


class RemovePinParams(PinParams):
    pin_id: StrictStr = Field(description="the pin's ID (pin_...)")
    version: PinVersion


class ProposePinParams(PinParams):
    text: StrictStr = Field(
        description="the exact text to keep pinned (stored redacted; at most 8192 characters)"
    )
    thread_id: StrictStr | None = _THREAD
    run_id: StrictStr | None = _RUN


class ListProposalsParams(PinParams):
    workspace_id: StrictStr | None = Field(
        None,
        description="only the proposals of this workspace's project (made through any "
        "registration of it)",
    )
    thread_id: StrictStr | None = Field(None, description="only this thread's proposals")
    all: StrictBool = Field(False, description="include answered proposals")


class OwnProposalsParams(PinParams):
    """An agent's own proposals of a thread and how each was answered."""

    thread_id: StrictStr | None = Field(None, description="the thread's ID (thr_...)")
    run_id: StrictStr | None = Field(
        None,
        description="a run's ID (run_...): its thread (with thread_id too, the run must be "
        "that thread's)",
    )
    status: ProposalStatus | None = Field(
        None, description="only pending or only answered proposals (default: both)"
    )


class AnswerProposalParams(PinParams):
    proposal_id: StrictStr = Field(description="the proposal's ID (prop_...)")
    choice: ChoiceName = Field(
        description="pin (pin the shown text), discuss (answer without pinning) or custom "
        "(your own reply, pinned only with `pin`)"
    )
    text: StrictStr | None = Field(
        None, description="your reply (discuss: optional; custom: required; pin: not allowed)"
    )
    pin: StrictBool = Field(False, description="custom only: pin your reply")


def _one_of(thread_id: str | None, run_id: str | None) -> None:
    if (thread_id is None) == (run_id is None):
        raise UsageError(
            "thread_or_run",
            "name one thread or one run (whose thread is meant)",
            hint=Hint("name_thread_or_run"),
        )


def _some_of(thread_id: str | None, run_id: str | None) -> None:
    if thread_id is None and run_id is None:
        raise UsageError(
            "thread_or_run",
            "name a thread, or a run (whose thread is meant), or both when the run is the thread's",
            hint=Hint("name_thread_or_run"),
        )


def _thread_of(
    conn: Connection, thread_id: str | None, run_id: str | None
) -> tuple[str, str | None]:
    """The thread and run meant: a run's own thread, which a thread given with it must be."""
    if run_id is None:
        assert thread_id is not None
        return thread_id, None
    run = runs.load_run(conn, run_id)
    if thread_id is not None and thread_id != run.thread_id:
        raise UsageError(
            "thread_run_mismatch",
            "the run given belongs to another thread than the one given: give the run alone "
            "(its thread is meant), or its own thread",
            hint=Hint("name_thread_or_run"),
        )
    return run.thread_id, run.run_id


class PinOperations:
    def __init__(self, rutter: Rutter) -> None:
        self._rutter = rutter

    def add(self, params: AddPinParams, *, actor: OperatorActor) -> Pin:
        return service.add_pin(self._rutter.store, params.thread_id, text=params.text, actor=actor)

    def list(self, params: ListPinsParams) -> PinList:
        """The pins of a thread, or of a run's thread (what that run carries)."""
        _one_of(params.thread_id, params.run_id)
        with self._rutter.store.read() as conn:
            if params.run_id is not None:
                run = runs.load_run(conn, params.run_id)
                return service.list_pins(conn, run.thread_id, run_id=run.run_id)
            assert params.thread_id is not None
            return service.list_pins(conn, params.thread_id)

    def edit(self, params: EditPinParams, *, actor: OperatorActor) -> Pin:
        return service.edit_pin(
            self._rutter.store, params.pin_id, version=params.version, text=params.text,
            actor=actor,
        )  # fmt: skip

    def remove(self, params: RemovePinParams, *, actor: OperatorActor) -> RemovedPin:
        return service.remove_pin(
            self._rutter.store, params.pin_id, version=params.version, actor=actor
        )

    def propose(self, params: ProposePinParams, *, actor: Actor) -> Proposal:
        """A pending proposal for a thread (or a run's thread); it never pins by itself. A
        thread and a run given together must agree (`thread_run_mismatch`)."""
        _some_of(params.thread_id, params.run_id)
        now = now_rfc3339()
        with self._rutter.store.write() as conn:
            thread_id, run_id = _thread_of(conn, params.thread_id, params.run_id)
            return proposals.propose(
                conn, thread_id, run_id=run_id, text=params.text, actor=actor, now=now
            )

    def proposals(self, params: ListProposalsParams) -> ProposalList:
        return proposals.list_proposals(
            self._rutter.store,
            workspace_id=params.workspace_id,
            thread_id=params.thread_id,
            include_answered=params.all,
        )

    def own_proposals(self, params: OwnProposalsParams, *, actor: Actor) -> ProposalList:
        """The proposals `actor` made for a thread (or a run's thread), oldest first, each with
        its status and, once answered, the answer: what an agent may read back of its own.
        Nobody else's proposals are listed."""
        _some_of(params.thread_id, params.run_id)
        with self._rutter.store.read() as conn:
            thread_id, _run_id = _thread_of(conn, params.thread_id, params.run_id)
        return proposals.list_proposals(
            self._rutter.store,
            thread_id=thread_id,
            include_answered=params.status != "pending",
            only_answered=params.status == "answered",
            proposed_by=actor,
        )

    def answer(self, params: AnswerProposalParams, *, actor: OperatorActor) -> AnsweredProposal:
        return proposals.answer(
            self._rutter.store, params.proposal_id, choice=params.choice, text=params.text,
            pin=params.pin, actor=actor,
        )  # fmt: skip


__all__ = [
    "AddPinParams",
    "AnswerProposalParams",
    "AnsweredProposal",
    "EditPinParams",
    "ListPinsParams",
    "ListProposalsParams",
    "OwnProposalsParams",
    "Pin",
    "PinList",
    "PinOperations",
    "Proposal",
    "ProposalList",
    "ProposePinParams",
    "RemovePinParams",
    "RemovedPin",
]
