"""The only module of session continuity that touches its tables: threads, sessions and
continuity nodes.

Every function takes the caller's `Connection`, so what a run creates (its thread, session and
root node) is written in the run's own transaction.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import insert, select, update
from sqlalchemy.engine import Connection

from rutter_core.store.schema import continuity_nodes, sessions, threads


@dataclass(frozen=True, slots=True)
class ThreadRow:
    thread_id: str
    workspace_id: str
    status: str


def insert_thread(
    conn: Connection, *, thread_id: str, workspace_id: str, actor: str, now: str
) -> None:
    conn.execute(
        insert(threads).values(
            thread_id=thread_id,
            workspace_id=workspace_id,
            status="active",
            created_by=actor,
            created_at=now,
            updated_at=now,
        )
    )


def find_thread(conn: Connection, thread_id: str) -> ThreadRow | None:
    row = conn.execute(
        select(threads.c.thread_id, threads.c.workspace_id, threads.c.status).where(
            threads.c.thread_id == thread_id
        )
    ).first()
    if row is None:
        return None
    return ThreadRow(str(row.thread_id), str(row.workspace_id), str(row.status))


def insert_session(
    conn: Connection,
    *,
    session_id: str,
    workspace_id: str,
    thread_id: str,
    actor: str,
    now: str,
) -> None:
    conn.execute(
        insert(sessions).values(
            session_id=session_id,
            workspace_id=workspace_id,
            thread_id=thread_id,
            status="active",
            created_by=actor,
            created_at=now,
            updated_at=now,
        )
    )


def close_session(conn: Connection, session_id: str, *, now: str) -> None:
    conn.execute(
        update(sessions)
        .where(sessions.c.session_id == session_id)
        .values(status="closed", updated_at=now)
    )


def insert_node(
    conn: Connection,
    *,
    node_id: str,
    run_id: str,
    session_id: str,
    thread_id: str,
    parent_node_id: str | None,
    kind: str,
    actor: str,
    now: str,
) -> None:
    conn.execute(
        insert(continuity_nodes).values(
            node_id=node_id,
            run_id=run_id,
            session_id=session_id,
            thread_id=thread_id,
            parent_node_id=parent_node_id,
            kind=kind,
            created_by=actor,
            created_at=now,
        )
    )
