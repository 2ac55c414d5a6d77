"""The budget arithmetic of an assembly (docs/reference/assembly.md): pure, sources in, entries out.

Authority order (the non-authority boundary, below operator input and runtime policy):
the run's pinned instructions, in their order of precedence, then the thread's pins, oldest
first, then the thread's latest summary, then its newest messages, then memories, user before
project, each scope by ID.

- Required context (instructions, pins and the summary) is delivered whole or not at all: when
  it does not fit `background`, the assembly fails `context_overflow`, naming every required
  source with its tokens, the total needed and the budget. No instruction source is ever cut
  or left out to make room, and nothing is delivered in silence without it.
- Memory gets the sub-budget `min(2048, background // 4, space left after required context)`.
  Each active memory is tried in order and included when it fits what is left of the
  sub-budget; one that does not fit is omitted and smaller later ones are still tried. Its
  reason is `required_context` when it would have fit had required context left the whole
  `min(2048, background // 4)`, else `quota`.
- Messages (the newest since the latest summary, at most `MESSAGES_CONSIDERED`) take what is
  left after required context and the memories included: the person's own messages first,
  newest first, then the others, newest first; each is included when it fits, and the included
  ones are listed in the thread's order. One that does not fit is omitted (`quota`).
- A disabled memory is omitted as `disabled`, an expired one as `expired` (disabled wins when
  both hold); their bodies are never read, so their tokens are null.
- Every kind of source left out is counted in a warning of the answer.

Every delivered text goes through the one redaction engine first; its digest and its estimate
are of the redacted text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from rutter_core.assembly.model import (
    MAX_MEMORY_BUDGET,
    Budget,
    DeliveredEntry,
    MemoryScope,
    Reason,
    SourceKind,
)
from rutter_core.assembly.tokens import TokenEstimator
from rutter_core.discovery.fingerprint import text_sha256
from rutter_core.discovery.redaction import redact

MemoryState = Literal["active", "disabled", "expired"]


@dataclass(frozen=True, slots=True)
class Candidate:
    """A source as configured. `text` is None for a memory whose body is not read (disabled
    or expired); then `stored_sha256` is its digest."""

    kind: SourceKind
    id: str
    version: int
    text: str | None
    scope: MemoryScope | None = None
    state: MemoryState = "active"
    stored_sha256: str | None = None
    from_person: bool = False
    """A message the person wrote (`user`): messages from the person come first."""


def memory_cap(background: int) -> int:
    """`min(2048, background // 4)`: the memory sub-budget before required context counts."""
    return min(MAX_MEMORY_BUDGET, background // 4)


class ContextOverflow(Exception):
    """Required context does not fit the budget: `required` lists each required source as
    (kind, id, tokens), `needed` their total."""

    def __init__(self, budget: int, needed: int, required: list[tuple[str, str, int]]) -> None:
        super().__init__(f"required context needs {needed} tokens, the budget is {budget}")
        self.budget = budget
        self.needed = needed
        self.required = required


def plan(
    instructions: Sequence[Candidate],
    pins: Sequence[Candidate],
    memories: Sequence[Candidate],
    *,
    background: int,
    estimator: TokenEstimator,
    summary: Candidate | None = None,
    messages: Sequence[Candidate] = (),
) -> tuple[Budget, list[DeliveredEntry]]:
    """The entries in authority order and the budget; `ContextOverflow` when required context
    does not fit."""
    required_sources = [*instructions, *pins, *([summary] if summary is not None else [])]
    required_entries: list[DeliveredEntry] = []
    required = 0
    for candidate in required_sources:
        text, sha256, tokens = _delivered(candidate, estimator)
        required += tokens
        required_entries.append(_included(candidate, text, sha256, tokens))
    if required > background:
        raise ContextOverflow(
            background,
            required,
            [(entry.kind, entry.id, entry.tokens or 0) for entry in required_entries],
        )
    cap = memory_cap(background)
    sub_budget = min(cap, background - required)
    memory_used = 0
    memory_entries: list[DeliveredEntry] = []
    for candidate in memories:
        if candidate.state != "active":
            assert candidate.stored_sha256 is not None
            memory_entries.append(
                _omitted(candidate, candidate.stored_sha256, None, candidate.state)
            )
            continue
        text, sha256, tokens = _delivered(candidate, estimator)
        if memory_used + tokens <= sub_budget:
            memory_used += tokens
            memory_entries.append(_included(candidate, text, sha256, tokens))
        elif memory_used + tokens <= cap:
            memory_entries.append(_omitted(candidate, sha256, tokens, "required_context"))
        else:
            memory_entries.append(_omitted(candidate, sha256, tokens, "quota"))
    room = background - required - memory_used
    message_entries = _messages(messages, room, estimator)
    messages_used = sum(e.tokens or 0 for e in message_entries if e.decision == "included")
    budget = Budget(
        background=background,
        memory_cap=cap,
        memory=sub_budget,
        required=required,
        used=required + memory_used + messages_used,
    )
    return budget, [*required_entries, *message_entries, *memory_entries]


def _messages(
    messages: Sequence[Candidate], room: int, estimator: TokenEstimator
) -> list[DeliveredEntry]:
    """The messages that fit `room`: the person's first, newest first, then the others;
    listed in the thread's order."""
    delivered = [_delivered(candidate, estimator) for candidate in messages]
    order = sorted(
        range(len(messages)), key=lambda index: (not messages[index].from_person, -index)
    )
    chosen: set[int] = set()
    for index in order:
        tokens = delivered[index][2]
        if tokens <= room:
            room -= tokens
            chosen.add(index)
    return [
        _included(candidate, *delivered[index])
        if index in chosen
        else _omitted(candidate, delivered[index][1], delivered[index][2], "quota")
        for index, candidate in enumerate(messages)
    ]


def _delivered(candidate: Candidate, estimator: TokenEstimator) -> tuple[str, str, int]:
    assert candidate.text is not None
    text = redact(candidate.text).text
    return text, text_sha256(text), estimator.estimate(text)


def _included(candidate: Candidate, text: str, sha256: str, tokens: int) -> DeliveredEntry:
    return DeliveredEntry(
        kind=candidate.kind,
        id=candidate.id,
        version=candidate.version,
        scope=candidate.scope,
        sha256=sha256,
        tokens=tokens,
        decision="included",
        reason=None,
        text=text,
    )


def _omitted(
    candidate: Candidate, sha256: str, tokens: int | None, reason: Reason
) -> DeliveredEntry:
    return DeliveredEntry(
        kind=candidate.kind,
        id=candidate.id,
        version=candidate.version,
        scope=candidate.scope,
        sha256=sha256,
        tokens=tokens,
        decision="omitted",
        reason=reason,
        text=None,
    )


__all__ = ["Candidate", "ContextOverflow", "MemoryState", "memory_cap", "plan"]
