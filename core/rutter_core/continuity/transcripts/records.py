"""What an agent's transcript holds, in neutral terms: the records every agent's parser returns
and the importer stores (docs/reference/transcripts.md).

A parser reads one JSON line at a time and answers a `LineOutcome`: the messages it maps to
(`Entry`), the parts it leaves out on purpose (`omitted`, by reason), the facts it names about
the session (its ID, the directory it ran in), what the line says about the conversation's
shape (`node`: its place in Claude Code's tree; `rollback`: Codex undoing turns), or why the
line is skipped (`problem`, a reason code). Parsers are pure: no files, no clock, no store.
Which entries are the conversation the agent went on with is decided over the whole transcript
by `conversation`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal, get_args

from rutter_core.continuity.model import Injected, Role

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
    "nesting_too_deep",
]
"""Why a line is skipped (malformed): reported with its line number, never its content."""

OmitReason = Literal["reasoning", "sidechain", "metadata", "empty", "abandoned", "rolled_back"]
"""What is left out on purpose, counted: hidden reasoning (Claude Code's thinking blocks, Codex's
reasoning items), sub-agent sidechains, records that are not messages (snapshots, settings,
events), messages with no text, messages of a branch the person rewound away from (Claude
Code), and messages of turns the agent rolled back (Codex)."""

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
    injected: Injected | None = None
    """What kind of text the agent's harness inserted (never the person's words); None for what
    a participant said or did."""


@dataclass(frozen=True, slots=True)
class TreeNode:
    """A Claude Code record's place in the conversation tree."""

    uuid: str
    parent: str | None
    """`parentUuid`, or across a compaction boundary (whose `parentUuid` is null) its
    `logicalParentUuid`: the history before a compaction stays the conversation's."""
    stated: bool
    """Whether the record has a `parentUuid` field at all (Claude Code always writes one, null
    at a root); a record without it follows the tree record before it in the file."""
    order: tuple[str, int]
    """When it was written (the full-precision time, '' when unknown) and its line: the newest
    leaf is the largest."""
    leaf: bool
    """Whether the conversation can end here: a user or assistant record of the main
    conversation (not a sub-agent's, not a meta record)."""


@dataclass(frozen=True, slots=True)
class LineOutcome:
    entries: tuple[Entry, ...] = ()
    omitted: tuple[OmitReason, ...] = ()
    session_id: str | None = None
    cwd: str | None = None
    problem: SkipReason | None = None
    node: TreeNode | None = None
    """The line's place in Claude Code's tree (its entries belong to it); None outside it."""
    rollback: int | None = None
    """Codex's `thread_rolled_back`: how many of the last turns the agent undid."""


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
    "TreeNode",
    "skipped",
]
