"""A thread's notes (docs/reference/continuity.md): decisions, summaries and facts, the operations.

A note is versioned like memory: every change names the version it was read at and is written
guarded by it inside one write transaction, so a stale version is `conflict` and says the current
one. A note is `active` until it is superseded (optionally by a new note of the same kind, added
in the same transaction, with the same references); a superseded note is final. Only operator
surfaces write notes (the actor is the surface's own, refused otherwise here and by the table's
CHECKs). Text is redacted
per docs/reference/redaction.md and bounded at 16 KiB: checkpoints carry the latest summary whole.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.engine import Connection

from rutter_core.continuity import repo
from rutter_core.continuity.model import (
    MAX_NOTE_BYTES,
    Note,
    NoteList,
    SupersededNote,
)
from rutter_core.continuity.policy import (
    clean_text,
    require_kind,
    require_note_id,
    require_thread_id,
    require_version,
)
from rutter_core.continuity.threads import require_thread
from rutter_core.kernel.actors import (
    OperatorActor,
    require_operator,
)
from rutter_core.kernel.clock import now_rfc3339
from rutter_core.kernel.errors import ConflictError, Hint, NotFoundError, RejectedError
from rutter_core.kernel.ids import new_id
from rutter_core.store import Store


def add_note(
    store: Store,
    thread_id: str,
    *,
    kind: str,
    text: str,
    references: Sequence[str] = (),
    actor: str,
) -> Note:
    """A new active note of `kind` at version 1. `references` come checked and normalised by
    the app layer (memory's rules for references: a note's may become a memory's)."""
    operator = require_operator(actor, what="write notes")
    checked_references = tuple(sorted(set(references)))
    thread_id = require_thread_id(thread_id)
    checked_kind = require_kind(kind)
    clean = clean_text("text", text, max_bytes=MAX_NOTE_BYTES)
    now = now_rfc3339()
    with store.write() as conn:
        require_thread(conn, thread_id, writable=True)
        return repo.insert_note(
            conn,
            note_id=new_id("note"),
            thread_id=thread_id,
            kind=checked_kind,
            text=clean.text,
            redacted=clean.redacted,
            references=checked_references,
            actor=operator,
            now=now,
        )


def list_notes(store: Store, thread_id: str, *, include_superseded: bool = False) -> NoteList:
    """The thread's notes in the order they were added: the active ones, or all."""
    thread_id = require_thread_id(thread_id)
    with store.read() as conn:
        require_thread(conn, thread_id, writable=False)
        found = repo.select_notes(conn, thread_id, include_superseded=include_superseded)
    return NoteList(thread_id=thread_id, notes=tuple(found))


def edit_note(store: Store, note_id: str, *, version: int, text: str, actor: str) -> Note:
    """The note's new text as version + 1; the same text changes nothing (and answers with
    the note as it is)."""
    operator = require_operator(actor, what="write notes")
    note_id = require_note_id(note_id)
    version = require_version(version)
    clean = clean_text("text", text, max_bytes=MAX_NOTE_BYTES)
    now = now_rfc3339()
    with store.write() as conn:
        note = _active_at(conn, note_id, version, action="edited")
        if note.text == clean.text:
            return note
        return _update(
            conn, note, actor=operator, now=now, text=clean.text,
            redacted=note.redacted or clean.redacted,
        )  # fmt: skip


def supersede_note(
    store: Store, note_id: str, *, version: int, text: str | None = None, actor: str
) -> SupersededNote:
    """Mark the note superseded (version + 1); with `text`, a new active note of the same
    kind replaces it, added in the same transaction and named in `superseded_by`."""
    operator = require_operator(actor, what="write notes")
    note_id = require_note_id(note_id)
    version = require_version(version)
    clean = None if text is None else clean_text("text", text, max_bytes=MAX_NOTE_BYTES)
    now = now_rfc3339()
    with store.write() as conn:
        note = _active_at(conn, note_id, version, action="superseded")
        replacement = None
        if clean is not None:
            require_thread(conn, note.thread_id, writable=True)
            replacement = repo.insert_note(
                conn,
                note_id=new_id("note"),
                thread_id=note.thread_id,
                kind=note.kind,
                text=clean.text,
                redacted=clean.redacted,
                references=note.references,
                actor=operator,
                now=now,
            )
        superseded = _update(
            conn, note, actor=operator, now=now, supersede=True,
            superseded_by=None if replacement is None else replacement.note_id,
        )  # fmt: skip
    return SupersededNote(note=superseded, replacement=replacement)


def latest_summary(conn: Connection, thread_id: str) -> Note | None:
    """The thread's active summary note written or edited last, in the caller's transaction:
    what a checkpoint carries as the latest summary until compactions exist."""
    return repo.latest_active_note(conn, thread_id, "summary")


def _active_at(conn: Connection, note_id: str, version: int, *, action: str) -> Note:
    note = repo.find_note(conn, note_id)
    if note is None:
        raise NotFoundError(
            "note_not_found",
            f"no note {note_id}",
            details={"note_id": note_id},
            hint=Hint("find_note"),
        )
    if note.version != version:
        raise _stale(note, version)
    if note.status != "active":
        raise RejectedError(
            "note_superseded",
            f"note {note_id} is superseded, which is final: it cannot be {action}",
            details={"note_id": note_id, "superseded_by": note.superseded_by},
        )
    return note


def _update(
    conn: Connection,
    read: Note,
    *,
    actor: OperatorActor,
    now: str,
    text: str | None = None,
    redacted: bool | None = None,
    supersede: bool = False,
    superseded_by: str | None = None,
) -> Note:
    """Version + 1, guarded by the version read (always true under SQLite's write lock; a
    writer in between elsewhere is a conflict stating what is there now)."""
    updated = repo.update_note(
        conn, read, actor=actor, now=now, text=text, redacted=redacted,
        supersede=supersede, superseded_by=superseded_by,
    )  # fmt: skip
    if updated is None:  # pragma: no cover - only without SQLite's write lock
        current = repo.find_note(conn, read.note_id)
        raise _stale(read if current is None else current, read.version)
    return updated


def _stale(current: Note, expected: int) -> ConflictError:
    return ConflictError(
        "conflict",
        f"note {current.note_id} is at version {current.version}, not {expected}: it changed "
        "since you read it",
        details={
            "note_id": current.note_id,
            "expected_version": expected,
            "current_version": current.version,
        },
        hint=Hint(
            "reread_note",
            {
                "note_id": current.note_id,
                "thread_id": current.thread_id,
                "version": current.version,
            },
        ),
    )
