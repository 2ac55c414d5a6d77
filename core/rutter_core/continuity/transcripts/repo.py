"""The only module that touches `transcript_imports`: which thread holds which agent session."""

from __future__ import annotations

from sqlalchemy import insert, select
from sqlalchemy.engine import Connection

from rutter_core.store.schema import transcript_imports


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
            created_at=now,
        )
    )


__all__ = ["insert_import", "thread_of"]
