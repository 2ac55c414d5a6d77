"""The documents of a compaction (docs/reference/continuity.md), and its bounds.

A compaction keeps the newest `KEPT_MESSAGES` messages of a thread verbatim and replaces, for
whoever assembles the thread's context later, the older ones (since the previous compaction)
with a summary. It deletes nothing: the messages stay listed and searchable. The summary is
data, like a note: it grants no authority and is redacted like every stored text.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import Field

from rutter_core.continuity.model import ContinuityDocument
from rutter_core.kernel.actors import CREATED_BY_PERSON
from rutter_core.kernel.errors import ErrorCategory, RutterError

SummarizerName = Literal["extractive", "command", "openai", "anthropic"]
SUMMARIZERS: Final[tuple[SummarizerName, ...]] = ("extractive", "command", "openai", "anthropic")
EndpointKind = Literal["openai", "anthropic"]
ENDPOINT_KINDS: Final[tuple[EndpointKind, ...]] = ("openai", "anthropic")
CompactionStatus = Literal["running", "completed", "failed", "pending_verification", "abandoned"]

KEPT_MESSAGES: Final = 4
"""The newest messages a compaction keeps verbatim."""
MAX_SUMMARY_BYTES: Final = 16 * 1024
"""A summary, redacted, in UTF-8 bytes: what a checkpoint can carry."""
MAX_FOCUS_BYTES: Final = 2 * 1024
MAX_OPERATION_KEY_CHARS: Final = 128
DEFAULT_INPUT_TOKENS: Final = 24_000
"""The summarizer's input window: the older messages it reads, newest first, at most this
many estimated tokens; the others are counted as unread."""
MIN_INPUT_TOKENS: Final = 256
MAX_INPUT_TOKENS: Final = 1_000_000
EXTRACTIVE_SUMMARY_TOKENS: Final = 1_024
"""The extractive summarizer's output budget."""
DEFAULT_COMMAND_TIMEOUT: Final = 120
MAX_COMMAND_TIMEOUT: Final = 3_600
MAX_COMMAND_OUTPUT_BYTES: Final = 64 * 1024
"""What a command summarizer may print; more is a failure (its summary must fit 16 KiB
anyway, after trimming)."""
MAX_ENDPOINT_RESPONSE_BYTES: Final = 1024 * 1024
"""What a model endpoint's answer may hold (its JSON, headers aside); more is a failure."""
ENDPOINT_OUTPUT_TOKENS: Final = 4_096
"""The most tokens a model endpoint is asked to write (`max_tokens`): a summary fits 16 KiB."""
STALE_AFTER_SECONDS: Final = MAX_COMMAND_TIMEOUT + 300
"""A `running` compaction untouched for longer than any summarizer may run is taken as dead,
even when its owner's process cannot be checked (another machine)."""


class SummarizerFailed(RutterError):
    """The summarizer gave no usable summary (exit 1): nothing was stored."""

    category = ErrorCategory.INTERNAL


class Summary(ContinuityDocument):
    text: str
    tokens: int


class Compaction(ContinuityDocument):
    """`session compact`'s answer (and `compaction resolve`'s): the operation as stored."""

    compaction_id: str
    operation_key: str
    thread_id: str
    status: CompactionStatus
    summary: Summary | None
    kept_message_ids: tuple[str, ...]
    """The newest messages, kept verbatim, oldest first."""
    compacted_message_count: int
    """The older messages (since the previous compaction) the summary stands for."""
    unread_message_count: int
    """How many of those the summarizer did not read (its input window was full)."""
    summarizer: SummarizerName
    created_by_person: str | None = Field(description=CREATED_BY_PERSON)


class LatestSummary(ContinuityDocument):
    """The thread's latest summary, wherever it came from: a rutter compaction (`compaction`,
    `id` its `cmp_` ID), a compaction summary an imported transcript carried (`imported`, `id`
    the message's), or, when there is neither, the active `summary` note written last (`note`).
    `through_seq`: the last message it stands for (null for a note)."""

    source: Literal["compaction", "imported", "note"]
    id: str
    version: int
    text: str
    redacted: bool
    through_seq: int | None


__all__ = [
    "DEFAULT_COMMAND_TIMEOUT",
    "DEFAULT_INPUT_TOKENS",
    "ENDPOINT_KINDS",
    "ENDPOINT_OUTPUT_TOKENS",
    "EXTRACTIVE_SUMMARY_TOKENS",
    "KEPT_MESSAGES",
    "MAX_COMMAND_OUTPUT_BYTES",
    "MAX_COMMAND_TIMEOUT",
    "MAX_ENDPOINT_RESPONSE_BYTES",
    "MAX_FOCUS_BYTES",
    "MAX_INPUT_TOKENS",
    "MAX_OPERATION_KEY_CHARS",
    "MAX_SUMMARY_BYTES",
    "MIN_INPUT_TOKENS",
    "STALE_AFTER_SECONDS",
    "SUMMARIZERS",
    "Compaction",
    "CompactionStatus",
    "EndpointKind",
    "LatestSummary",
    "SummarizerFailed",
    "SummarizerName",
    "Summary",
]
