"""The documents of a thread's content (docs/reference/continuity.md): messages and notes, as
pydantic models.

Each model's JSON dump (`to_json`) is exactly the wire document every surface prints or returns:
the CLI's `--json`, the language server's results, and later the HTTP API. Field order is the
document's key order; a field that may be null is always present. The checkpoint's documents
are in `continuity.snapshot`.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict

Role = Literal["user", "assistant", "tool", "system"]
NoteKind = Literal["decision", "summary", "fact"]
NoteStatus = Literal["active", "superseded"]

ROLES: Final[tuple[Role, ...]] = ("user", "assistant", "tool", "system")
NOTE_KINDS: Final[tuple[NoteKind, ...]] = ("decision", "summary", "fact")
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
    external_id: str | None
    """The message's ID where it came from (an imported transcript's): unique per thread and
    source, so adding it again adds nothing."""
    text: str
    redacted: bool
    created_at: str


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
    updated_by: str
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
    "MAX_EXTERNAL_ID_BYTES",
    "MAX_LIST_LIMIT",
    "MAX_MESSAGE_BYTES",
    "MAX_NOTE_BYTES",
    "NOTE_KINDS",
    "ROLES",
    "SURFACE_SOURCES",
    "AddedMessage",
    "ContinuityDocument",
    "Message",
    "MessageList",
    "Note",
    "NoteKind",
    "NoteList",
    "NoteStatus",
    "Role",
    "SupersededNote",
]
