"""Sessions: one run's stretch of work on a thread (docs/reference/continuity.md)."""

from __future__ import annotations

from sqlalchemy.engine import Connection

from rutter_core.continuity import repo
from rutter_core.kernel.ids import new_id


def open_session(
    conn: Connection, *, workspace_id: str, thread_id: str, actor: str, now: str
) -> str:
    """A new active session on `thread_id`, in the caller's transaction; returns its ID."""
    session_id = new_id("ses")
    repo.insert_session(
        conn,
        session_id=session_id,
        workspace_id=workspace_id,
        thread_id=thread_id,
        actor=actor,
        now=now,
    )
    return session_id


def close_session(conn: Connection, session_id: str, *, now: str) -> None:
    """Close the session (its run ended), in the caller's transaction."""
    repo.close_session(conn, session_id, now=now)
