"""The documents of a thread's content (docs/reference/continuity.md): messages and notes, as
pydantic models.

Each model's JSON dump (`to_json`) is exactly the wire document every surface prints or returns:
the CLI's `--json`, the language server's results, and later the HTTP API. Field order is the
document's key order; a field that may be null is always present. The checkpoint's documents
are in `continuity.snapshot`.
"""

from __future__ import annotations

from typing import Any, Final, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from rutter_core.kernel.actors import CREATED_BY_PERSON, UPDATED_BY_PERSON

Role = Literal["user", "assistant", "tool", "system"]
NoteKind = Literal["decision", "summary", "fact"]
NoteStatus = Literal["active", "superseded"]

Injected = Literal[
    "interruption",
    "command",
    "command_output",
    "notification",
    "reminder",
    "compaction_prompt",
    "compaction_summary",
    "instructions",
    "environment_context",
    "skill",
    "meta",
    "event",
    "session_title",
]
"""Text an agent's harness put into its transcript, never the person's words
(docs/reference/transcripts.md), by kind: an interruption marker (Claude Code's `[Request
interrupted by user]`, Codex's `<turn_aborted>`), a command the person ran through the harness
(slash commands, `!` shell commands) and its output, a task or sub-agent notification, a system
reminder, the compaction prompt and the summary that continues a compacted conversation,
instructions and environment context the harness sends the model (AGENTS.md, developer
messages), a skill's text, other meta records, the harness's own events (system records), and a
session's title."""

ROLES: Final[tuple[Role, ...]] = get_args(Role)
INJECTED: Final[tuple[Injected, ...]] = get_args(Injected)
NOTE_KINDS: Final[tuple[NoteKind, ...]] = get_args(NoteKind)
SURFACE_SOURCES: Final = ("cli", "lsp", "mcp", "http")
"""The sources a surface names itself; an importer's source is `import:<agent>`."""
IMPORT_PREFIX: Final = "import:"

MAX_MESSAGE_BYTES: Final = 64 * 1024
"""A message's text, redacted, in UTF-8 bytes (docs/reference/continuity.md)."""
MAX_NOTE_BYTES: Final = 16 * 1024
"""A note's text, redacted: summaries and decisions are short, and checkpoints carry them."""
MAX_EXTERNAL_ID_BYTES: Final = 256
DEFAULT_LIST_LIMIT: Final = 50
MAX_LIST_LIMIT: Final = 500


class ContinuityDocument(BaseModel):
    """Base of the continuity documents: frozen, no unknown fields, `to_json` is the dump."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class Message(ContinuityDocument):
    """One message of a thread, as stored: append-only, its text redacted
    (docs/reference/redaction.md)."""

    message_id: str
    thread_id: str
    seq: int
    """1, 2, 3, ... in the order the thread received its messages."""
    role: Role
    source: str
    """Provenance: `cli`, `lsp`, `mcp`, `http` or `import:<agent>`, set by the surface."""
    source_person: str | None = Field(
        description="whose session added or imported it: the person the surface acted for "
        "(null: added before people were recorded)"
    )
    external_id: str | None
    """The message's ID where it came from (an imported transcript's): unique per thread and
    source, so adding it again adds nothing."""
    text: str
    redacted: bool
    created_at: str
    injected: Injected | None = None
    """For an imported message: the kind of text the agent's harness inserted (its role is then
    `system`, never `user`); None for what a participant said or did."""


class AddedMessage(Message):
    """`message add`: the stored message, and whether this call stored it (False: a message
    with the same external ID and the same content was already there)."""

    created: bool


class MessageList(ContinuityDocument):
    """A thread's messages, oldest first: the most recent ones up to the limit (before a
    `seq`, when one is given)."""

    thread_id: str
    messages: tuple[Message, ...]
    has_more: bool
    """Older messages exist than the first one listed."""


class ThreadSummary(ContinuityDocument):
    """A thread as `session threads` lists it."""

    thread_id: str
    title: str | None
    """The session's own title when the agent wrote one (Claude Code's summary), else the
    first line of the first thing the person said, cut at 80 characters; None when neither."""
    source: str
    """Where the thread came from: `import:<agent>` for an imported transcript, else the surface
    that started it (`cli`, `lsp`, `http`)."""
    created_by_person: str | None = Field(
        description="who started or imported it (null: before people were recorded)"
    )
    message_count: int
    last_activity_at: str | None
    """The newest message's time as recorded (an imported message's: the agent's own; a
    session's title, which has no time of its own, does not count); None for a thread without
    messages."""


class ThreadList(ContinuityDocument):
    """`session threads`: newest activity first (threads without messages last, newest
    first)."""

    items: tuple[ThreadSummary, ...]


class Note(ContinuityDocument):
    """A note of a thread: versioned (every change is version + 1, guarded by the version the
    caller read), `active` until superseded."""

    note_id: str
    thread_id: str
    kind: NoteKind
    text: str
    redacted: bool
    references: tuple[str, ...]
    """What the note points at (paths, URLs, other identifiers), sorted; a decision or summary
    with one can become a memory candidate once its run has a completion record."""
    status: NoteStatus
    superseded_by: str | None
    """The note that replaced this one, when it was superseded by a new text."""
    version: int
    created_by: str
    created_by_person: str | None = Field(description=CREATED_BY_PERSON)
    updated_by: str
    updated_by_person: str | None = Field(description=UPDATED_BY_PERSON)
    created_at: str
    updated_at: str


class NoteList(ContinuityDocument):
    """A thread's notes in the order they were added (active ones, or all)."""

    thread_id: str
    notes: tuple[Note, ...]


class SupersededNote(ContinuityDocument):
    """`note supersede`: the note as superseded, and the note that replaces it (when a new
    text was given)."""

    note: Note
    replacement: Note | None


__all__ = [
    "DEFAULT_LIST_LIMIT",
    "IMPORT_PREFIX",
    "INJECTED",
    "MAX_EXTERNAL_ID_BYTES",
    "MAX_LIST_LIMIT",
    "MAX_MESSAGE_BYTES",
    "MAX_NOTE_BYTES",
    "NOTE_KINDS",
    "ROLES",
    "SURFACE_SOURCES",
    "AddedMessage",
    "ContinuityDocument",
    "Injected",
    "Message",
    "MessageList",
    "Note",
    "NoteKind",
    "NoteList",
    "NoteStatus",
    "Role",
    "SupersededNote",
    "ThreadList",
    "ThreadSummary",
]
