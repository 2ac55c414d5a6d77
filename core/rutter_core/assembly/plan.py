"""The budget arithmetic of an assembly (docs/reference/assembly.md): pure, sources in, entries out.

Authority order (the non-authority boundary, below operator input and runtime policy):
the run's pinned instructions, in their order of precedence, then the thread's pins, oldest
first, then memories, user before project, each scope by ID.

- Required context (instructions, then pins) is taken while it fits `background`. The first
  source that does not fit cuts it: that source and every later instruction or pin are
  omitted (`instructions` for an instruction source, `required_context` for a pin), so an agent
  never gets a later source without an earlier one it would override or depend on.
- Memory gets the sub-budget `min(2048, background // 4, space left after required context)`;
  when required context was cut, no space is left. Each active memory is tried in order and
  included when it fits what is left of the sub-budget; one that does not fit is omitted and
  smaller later ones are still tried. Its reason is `required_context` when it would have fit
  had required context left the whole `min(2048, background // 4)`, else `quota`.
- A disabled memory is omitted as `disabled`, an expired one as `expired` (disabled wins when
  both hold); their bodies are never read, so their tokens are null.

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


def memory_cap(background: int) -> int:
    """`min(2048, background // 4)`: the memory sub-budget before required context counts."""
    return min(MAX_MEMORY_BUDGET, background // 4)


def plan(
    instructions: Sequence[Candidate],
    pins: Sequence[Candidate],
    memories: Sequence[Candidate],
    *,
    background: int,
    estimator: TokenEstimator,
) -> tuple[Budget, list[DeliveredEntry]]:
    entries: list[DeliveredEntry] = []
    used = 0
    cut = False
    required_sources: list[tuple[Candidate, Reason]] = [
        *((source, "instructions") for source in instructions),
        *((pin, "required_context") for pin in pins),
    ]
    for candidate, cut_reason in required_sources:
        text, sha256, tokens = _delivered(candidate, estimator)
        if not cut and used + tokens <= background:
            used += tokens
            entries.append(_included(candidate, text, sha256, tokens))
        else:
            cut = True
            entries.append(_omitted(candidate, sha256, tokens, cut_reason))
    required = used
    cap = memory_cap(background)
    sub_budget = 0 if cut else min(cap, background - required)
    memory_used = 0
    for candidate in memories:
        if candidate.state != "active":
            assert candidate.stored_sha256 is not None
            entries.append(_omitted(candidate, candidate.stored_sha256, None, candidate.state))
            continue
        text, sha256, tokens = _delivered(candidate, estimator)
        if memory_used + tokens <= sub_budget:
            memory_used += tokens
            entries.append(_included(candidate, text, sha256, tokens))
        elif memory_used + tokens <= cap:
            entries.append(_omitted(candidate, sha256, tokens, "required_context"))
        else:
            entries.append(_omitted(candidate, sha256, tokens, "quota"))
    budget = Budget(
        background=background,
        memory_cap=cap,
        memory=sub_budget,
        required=required,
        used=required + memory_used,
    )
    return budget, entries


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


__all__ = ["Candidate", "MemoryState", "memory_cap", "plan"]
