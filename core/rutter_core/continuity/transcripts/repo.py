"""The only module that touches `transcript_imports` (which thread holds which agent session),
and the import's bulk reads and writes of a thread's messages (its external IDs; many messages
in one statement), in the caller's transaction."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, insert, select
from sqlalchemy.engine import Connection

from rutter_core.continuity.indexing import index_messages
from rutter_core.store import person_of
from rutter_core.store.schema import messages, threads, transcript_imports


def thread_of(conn: Connection, source: str, session_id: str) -> str | None:
    found = conn.execute(
        select(transcript_imports.c.thread_id).where(
            transcript_imports.c.source == source,
            transcript_imports.c.external_session_id == session_id,
        )
    ).scalar_one_or_none()
    return None if found is None else str(found)


def insert_import(
    conn: Connection, *, source: str, session_id: str, thread_id: str, actor: str, now: str
) -> None:
    conn.execute(
        insert(transcript_imports).values(
            source=source,
            external_session_id=session_id,
            thread_id=thread_id,
            created_by=actor,
            created_by_person=person_of(conn),
            created_at=now,
        )
    )


def external_ids(conn: Connection, thread_id: str, source: str) -> set[str]:
    """The external IDs the thread holds under `source` (by the (thread, source, external_id)
    index)."""
    rows = conn.execute(
        select(messages.c.external_id).where(
            messages.c.thread_id == thread_id,
            messages.c.source == source,
            messages.c.external_id.is_not(None),
        )
    ).scalars()
    return {str(value) for value in rows}


def insert_messages(conn: Connection, rows: Sequence[dict[str, Any]]) -> None:
    """Many message rows (the columns of `messages`, but the person: the one the transaction
    acts for) in one executemany."""
    if rows:
        person = person_of(conn)
        conn.execute(insert(messages), [{**row, "source_person": person} for row in rows])
        index_messages(
            conn,
            [
                (str(row["message_id"]), str(row["thread_id"]), str(row["role"]), str(row["text"]))
                for row in rows
            ],
        )


__all__ = ["external_ids", "insert_import", "insert_messages", "thread_of"]


def delete_workspace_imports(conn: Connection, workspace_id: str) -> int:
    """Delete which-thread-holds-which-transcript rows of the workspace's threads (the caller
    has lifted the append-only guards); how many."""
    of_workspace = select(threads.c.thread_id).where(threads.c.workspace_id == workspace_id)
    done = conn.execute(
        delete(transcript_imports).where(transcript_imports.c.thread_id.in_(of_workspace))
    )
    return int(done.rowcount)
