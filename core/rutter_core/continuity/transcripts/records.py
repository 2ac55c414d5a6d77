"""What an agent's transcript holds, in neutral terms: the records every agent's parser returns
and the importer stores (docs/reference/transcripts.md).

A parser reads one JSON line at a time and answers a `LineOutcome`: the messages it maps to
(`Entry`), the parts it leaves out on purpose (`omitted`, by reason), the facts it names about
the session (its ID, the directory it ran in), or why the line is skipped (`problem`, a reason
code). Parsers are pure: no files, no clock, no store.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal, get_args

from rutter_core.continuity.model import Role

Agent = Literal["claude-code", "codex"]
AGENTS: Final[tuple[Agent, ...]] = get_args(Agent)

SkipReason = Literal[
    "invalid_utf8",
    "nul_byte",
    "invalid_json",
    "not_an_object",
    "unexpected_shape",
    "invalid_id",
    "line_too_long",
    "truncated",
]
"""Why a line is skipped (malformed): reported with its line number, never its content."""

OmitReason = Literal["reasoning", "sidechain", "metadata", "empty"]
"""What is left out on purpose, counted: hidden reasoning (Claude Code's thinking blocks, Codex's
reasoning items), sub-agent sidechains, records that are not messages (snapshots, settings,
events), and messages with no text."""

IMAGE_PLACEHOLDER: Final = "[image omitted]"
"""Stands for an image in a message: images are never stored, not even their bytes' size."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One message of the transcript, as the agent wrote it (not yet redacted or bounded)."""

    line: int
    """The 1-based line of the transcript it comes from."""
    local_id: str
    """Its ID in the agent's terms (see each parser); the importer makes it the external ID."""
    role: Role
    text: str
    timestamp: str | None
    """When the agent recorded it, RFC 3339 UTC to the second; None when the line has none."""


@dataclass(frozen=True, slots=True)
class LineOutcome:
    entries: tuple[Entry, ...] = ()
    omitted: tuple[OmitReason, ...] = ()
    session_id: str | None = None
    cwd: str | None = None
    problem: SkipReason | None = None


def skipped(reason: SkipReason) -> LineOutcome:
    return LineOutcome(problem=reason)


__all__ = [
    "AGENTS",
    "IMAGE_PLACEHOLDER",
    "Agent",
    "Entry",
    "LineOutcome",
    "OmitReason",
    "SkipReason",
    "skipped",
]
