"""The documents of experience candidates (`context_memory_candidate.v1`, docs/reference/memory.md),
as pydantic models.

Each model's JSON dump (`to_json`) is the wire document every surface prints or returns. Field
order is the document's key order; a field that may be null is always present.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from rutter_core.memory.model import MemoryRecord

PROTOCOL_VERSION: Final = "context_memory_candidate.v1"

CandidateStatus = Literal["pending", "confirmed", "ignored"]
CompletionKind = Literal[
    "run_completed", "reply_completed", "delivery_checkpoint", "delivery_report"
]

MAX_SCANNED: Final = 200
"""Sources (notes) a listing looks at, per workspace."""
MAX_LISTED: Final = 50
"""Candidates a listing returns, per workspace."""

CONFIDENCE_NOTES: Final[dict[CompletionKind, str]] = {
    "run_completed": (
        "The run completed, which says the work ended, not that this note is right: check the "
        "conclusion and where it applies before saving it for the project."
    ),
    "reply_completed": (
        "A finished reply only proves the reply ended, not that the work is done or right: "
        "check the conclusion and where it applies before saving it for the project."
    ),
    "delivery_checkpoint": (
        "The run was checkpointed as delivered, which says what was handed over, not that this "
        "note is right: check the conclusion and where it applies before saving it."
    ),
    "delivery_report": (
        "A delivery report passed, which says the delivery was checked, not this note: check "
        "the conclusion and where it applies before saving it for the project."
    ),
}


class CandidateDocument(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class CandidateSource(CandidateDocument):
    """The note a candidate comes from, at the version it was read, and where it was written."""

    note_id: str
    note_version: int
    run_id: str | None
    """The run whose completion record counts (None: an imported thread no run continues)."""
    thread_id: str


class Completion(CandidateDocument):
    """The completion record that makes the note a candidate."""

    kind: CompletionKind
    at: str


class CandidateReview(CandidateDocument):
    """Who resolved a candidate, when, and the memory a confirmation created (its ID stays
    even when that memory is deleted later)."""

    by: str
    by_person: str | None = Field(
        description="who resolved it (null: resolved before people were recorded)"
    )
    at: str
    memory_id: str | None


class MemoryCandidate(CandidateDocument):
    """One candidate. Pending: the note's title, text and references as they would be saved.
    Resolved (confirmed or ignored): a tombstone, with identity, fingerprint and review and no
    title, text or references."""

    candidate_id: str
    protocol_version: Literal["context_memory_candidate.v1"] = PROTOCOL_VERSION
    workspace_id: str
    version: int
    """1 while pending, 2 once resolved."""
    fingerprint: str
    """JCS SHA-256 of what would be saved and where it comes from (stable for a note
    version): a confirmation names it, so the person confirms what they read."""
    status: CandidateStatus
    title: str | None
    content: str | None
    references: tuple[str, ...]
    redacted: bool
    """The note had secrets cut out: confirming needs the redacted text asked for."""
    source: CandidateSource
    completion: Completion
    confidence_note: str
    review: CandidateReview | None


class CandidateList(CandidateDocument):
    """A workspace's pending candidates, newest note change first."""

    workspace_id: str
    items: tuple[MemoryCandidate, ...]
    scanned: int
    """How many sources (notes) were looked at (at most 200)."""
    truncated: bool
    """More sources than were scanned, or more candidates than were listed (at most 50)."""


class ConfirmedCandidate(CandidateDocument):
    """The answer of a confirmation: the candidate, now a tombstone, and the project memory it
    created (None when that memory was deleted since: a repeated confirmation answers with what
    is left)."""

    candidate: MemoryCandidate
    memory: MemoryRecord | None


__all__ = [
    "CONFIDENCE_NOTES",
    "MAX_LISTED",
    "MAX_SCANNED",
    "PROTOCOL_VERSION",
    "CandidateDocument",
    "CandidateList",
    "CandidateReview",
    "CandidateSource",
    "CandidateStatus",
    "Completion",
    "CompletionKind",
    "ConfirmedCandidate",
    "MemoryCandidate",
]
