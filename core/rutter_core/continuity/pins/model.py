"""The documents of thread pins and pin proposals (docs/reference/pins.md), as pydantic models.

A pin is a requirement a person keeps in front of every later run of a thread: text (redacted
per section 8, at most 8192 characters), versioned like memory. A proposal is an agent's
suggestion of such a text; it waits until an operator answers it with one of three choices, and
only `pin`, or `custom` with the explicit pin flag, creates a pin. Each model's JSON dump is the
wire document of every surface (CLI `--json`, language server, MCP tools).
"""

from __future__ import annotations

from typing import Final, Literal, get_args

from pydantic import Field

from rutter_core.continuity.model import ContinuityDocument
from rutter_core.kernel.actors import CREATED_BY_PERSON, UPDATED_BY_PERSON

MAX_PINS: Final = 32
"""Pins a thread holds at most."""
MAX_PIN_CHARS: Final = 8192
"""Characters of one pin's text, redacted (and of a proposal's, and of a reply)."""
MAX_TOTAL_PIN_CHARS: Final = 32768
"""Characters of all of a thread's pins together."""
MAX_LISTED_PROPOSALS: Final = 200

Choice = Literal["pin", "discuss", "custom"]
CHOICES: Final[tuple[Choice, ...]] = get_args(Choice)
ProposalStatus = Literal["pending", "answered"]


class PinLimits(ContinuityDocument):
    max_pins: int = MAX_PINS
    max_chars: int = MAX_PIN_CHARS
    max_total_chars: int = MAX_TOTAL_PIN_CHARS


class Pin(ContinuityDocument):
    """One pin of a thread: every change is version + 1, guarded by the version read."""

    pin_id: str
    thread_id: str
    text: str
    redacted: bool
    proposal_id: str | None
    """The proposal whose answer created it, if one did."""
    version: int
    created_by: str
    created_by_person: str | None = Field(description=CREATED_BY_PERSON)
    updated_by: str
    updated_by_person: str | None = Field(description=UPDATED_BY_PERSON)
    created_at: str
    updated_at: str


class PinList(ContinuityDocument):
    """A thread's pins, oldest first: what every later run of the thread carries. `run_id`
    names the run they were listed for (its thread's pins), when one was given."""

    thread_id: str
    run_id: str | None
    pins: tuple[Pin, ...]
    count: int
    total_chars: int
    limits: PinLimits = PinLimits()


class RemovedPin(ContinuityDocument):
    """`pin remove`: the pin as it was when removed (its last version)."""

    pin_id: str
    thread_id: str
    version: int
    removed: bool = True


class Proposal(ContinuityDocument):
    """An agent's proposal of a pin's exact text (redacted) and, once answered, the answer."""

    proposal_id: str
    thread_id: str
    workspace_id: str
    run_id: str | None
    text: str
    redacted: bool
    proposed_by: str
    proposed_by_person: str | None = Field(
        description="who proposed it: the person the agent's surface acted for (null: proposed "
        "before people were recorded)"
    )
    status: ProposalStatus
    choice: Choice | None
    reply: str | None
    """The operator's own words (`discuss` or `custom`), redacted."""
    reply_redacted: bool
    pin_id: str | None
    """The pin the answer created (`pin`, or `custom` with the pin flag)."""
    answered_by: str | None
    answered_by_person: str | None = Field(
        description="who answered it (null: unanswered, or answered before people were recorded)"
    )
    created_at: str
    answered_at: str | None


class ProposalList(ContinuityDocument):
    """Proposals, oldest first: the pending ones, or all (of a workspace or a thread)."""

    proposals: tuple[Proposal, ...]
    has_more: bool


class AnsweredProposal(ContinuityDocument):
    """`pin answer`: the proposal as answered and the pin it created (None: no pin)."""

    proposal: Proposal
    pin: Pin | None


__all__ = [
    "CHOICES",
    "MAX_LISTED_PROPOSALS",
    "MAX_PINS",
    "MAX_PIN_CHARS",
    "MAX_TOTAL_PIN_CHARS",
    "AnsweredProposal",
    "Choice",
    "Pin",
    "PinLimits",
    "PinList",
    "Proposal",
    "ProposalList",
    "ProposalStatus",
    "RemovedPin",
]
