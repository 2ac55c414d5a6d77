"""The continuity rows of a whole workspace, counted and deleted for `workspace remove`
(docs/reference/workspaces.md): its sessions, and its threads with their messages, notes, nodes and
checkpoint snapshots. Like `continuity.repo`, a module that touches the tables; kept apart
because only the removal needs these statements. The caller has lifted the append-only guards
(`Store.append_only_lifted`) before anything is deleted."""

from __future__ import annotations

from sqlalchemy import delete, func, select
from sqlalchemy.engine import Connection

from rutter_core.continuity.indexing import unindex_threads
from rutter_core.store.schema import (
    checkpoint_deliveries,
    continuity_nodes,
    continuity_snapshots,
    messages,
    notes,
    sessions,
    threads,
)


def count_sessions(conn: Connection, workspace_id: str) -> int:
    query = (
        select(func.count()).select_from(sessions).where(sessions.c.workspace_id == workspace_id)
    )
    return int(conn.execute(query).scalar_one())


def count_threads_without_session(conn: Connection, workspace_id: str) -> int:
    """Threads no session continues (an imported transcript's): a run's thread has one."""
    has_session = select(sessions.c.thread_id).where(sessions.c.thread_id == threads.c.thread_id)
    query = (
        select(func.count())
        .select_from(threads)
        .where(threads.c.workspace_id == workspace_id, ~has_session.exists())
    )
    return int(conn.execute(query).scalar_one())


def delete_thread_contents(conn: Connection, workspace_id: str) -> dict[str, int]:
    """Delete the checkpoint snapshots, nodes, messages and notes of the workspace's threads
    (the caller has lifted the append-only guards); how many of each."""
    of_workspace = select(threads.c.thread_id).where(threads.c.workspace_id == workspace_id)
    unindex_threads(conn, [str(t) for t in conn.execute(of_workspace).scalars()])
    nodes = select(continuity_nodes.c.node_id).where(continuity_nodes.c.thread_id.in_(of_workspace))
    # A delivery mark names its node: it goes first (not counted: it is part of its checkpoint).
    conn.execute(delete(checkpoint_deliveries).where(checkpoint_deliveries.c.node_id.in_(nodes)))
    done = {
        "checkpoints": conn.execute(
            delete(continuity_snapshots).where(continuity_snapshots.c.node_id.in_(nodes))
        ).rowcount,
        "messages": conn.execute(
            delete(messages).where(messages.c.thread_id.in_(of_workspace))
        ).rowcount,
        "notes": conn.execute(delete(notes).where(notes.c.thread_id.in_(of_workspace))).rowcount,
        "nodes": conn.execute(
            delete(continuity_nodes).where(continuity_nodes.c.thread_id.in_(of_workspace))
        ).rowcount,
    }
    return {name: int(count) for name, count in done.items()}


def delete_sessions_and_threads(conn: Connection, workspace_id: str) -> tuple[int, int]:
    """Delete the workspace's sessions, then its threads (after its runs); how many of each."""
    removed_sessions = conn.execute(
        delete(sessions).where(sessions.c.workspace_id == workspace_id)
    ).rowcount
    removed_threads = conn.execute(
        delete(threads).where(threads.c.workspace_id == workspace_id)
    ).rowcount
    return int(removed_sessions), int(removed_threads)
