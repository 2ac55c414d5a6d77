"""What a thread holds, kept in the history index (`rutter_core.history`): the repos call these
with the connection of each write, so a message, note or checkpoint and its entry are one
transaction. Messages of role `tool` are receipts, `summary` notes are summaries; a checkpoint
is searched by its title and summary."""

from __future__ import annotations

from sqlalchemy.engine import Connection

from rutter_core.continuity.model import Note
from rutter_core.history import service as history


def index_messages(conn: Connection, rows: list[tuple[str, str, str, str]]) -> None:
    """New messages as (message ID, thread ID, role, text)."""
    history.index_thread_texts(
        conn,
        [
            history.ThreadText(
                source_kind=history.message_kind(role),
                source_id=message_id,
                thread_id=thread_id,
                version=1,
                text=text,
            )
            for message_id, thread_id, role, text in rows
        ],
    )


def index_note(conn: Connection, note: Note) -> None:
    """A note as just written (a superseded one leaves the index)."""
    history.index_note(
        conn,
        history.ThreadText(
            source_kind=history.note_kind(note.kind),
            source_id=note.note_id,
            thread_id=note.thread_id,
            version=note.version,
            text=note.text,
        ),
        active=note.status == "active",
    )


def index_checkpoint(
    conn: Connection, node_id: str, thread_id: str, title: str, summary: str | None
) -> None:
    history.index_thread_texts(
        conn,
        [
            history.ThreadText(
                source_kind="checkpoint",
                source_id=node_id,
                thread_id=thread_id,
                version=1,
                text=title if summary is None else f"{title}\n{summary}",
            )
        ],
    )


def unindex_threads(conn: Connection, thread_ids: list[str]) -> None:
    """Entries of removed threads (a workspace removal)."""
    history.unindex_owners(conn, thread_ids)


def index_existing(conn: Connection, batch: int = 500) -> None:
    """Index what the threads held before the index existed (an upgraded store), skipping
    what is indexed already, in the caller's write."""
    from rutter_core.continuity import repo

    pending: list[history.ThreadText] = []

    def add(item: history.ThreadText) -> None:
        pending.append(item)
        if len(pending) >= batch:
            history.backfill_thread_texts(conn, pending)
            pending.clear()

    for message_id, thread_id, role, text in list(repo.all_messages(conn)):
        add(history.ThreadText(history.message_kind(role), message_id, thread_id, 1, text))
    for note_id, thread_id, kind, version, text in list(repo.active_notes(conn)):
        add(history.ThreadText(history.note_kind(kind), note_id, thread_id, version, text))
    for node_id, thread_id, title, summary in list(repo.all_checkpoints(conn)):
        text = title if summary is None else f"{title}\n{summary}"
        add(history.ThreadText("checkpoint", node_id, thread_id, 1, text))
    history.backfill_thread_texts(conn, pending)
