"""A workspace's continuity, counted and removed with it (`workspace remove`, contract
section 4): its sessions, and its threads with their messages, notes, nodes and checkpoints.

Removal comes in two steps around the runs area's, because the tables refer to each other:
nodes name their run (so they go before the runs), runs name their session and thread (so those
go after). The app layer calls both in one write transaction with the append-only guards lifted.
"""

from __future__ import annotations

from sqlalchemy.engine import Connection

from rutter_core.continuity import repo


def count_sessions(conn: Connection, workspace_id: str) -> int:
    """How many sessions (any status) belong to `workspace_id`, in the caller's transaction."""
    return repo.count_sessions(conn, workspace_id)


def remove_thread_contents(conn: Connection, workspace_id: str) -> dict[str, int]:
    """Delete the checkpoints, nodes, messages and notes of the workspace's threads; how many
    of each (`checkpoints`, `nodes`, `messages`, `notes`)."""
    return repo.delete_thread_contents(conn, workspace_id)


def remove_sessions_and_threads(conn: Connection, workspace_id: str) -> tuple[int, int]:
    """Delete the workspace's sessions and threads, once its runs are gone; how many of each."""
    return repo.delete_sessions_and_threads(conn, workspace_id)
