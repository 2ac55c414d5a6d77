"""A workspace's continuity, counted and removed with it (`workspace remove`,
docs/reference/workspaces.md): its sessions, and its threads with their messages, notes, nodes and
checkpoints.

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


def count_threads_without_session(conn: Connection, workspace_id: str) -> int:
    """How many of the workspace's threads no session continues: an imported transcript's
    (a run's thread is counted with its run and session)."""
    return repo.count_threads_without_session(conn, workspace_id)


def remove_thread_contents(conn: Connection, workspace_id: str) -> dict[str, int]:
    """Delete the pins, pin proposals, transcript records, checkpoints, nodes, messages and
    notes of the workspace's threads; how many of each (`pins`, `pin_proposals`,
    `transcript_imports`, `checkpoints`, `nodes`, `messages`, `notes`)."""
    from rutter_core.continuity.compaction.latest import remove_workspace_compactions
    from rutter_core.continuity.pins.service import remove_workspace_pins
    from rutter_core.continuity.transcripts.service import remove_workspace_imports

    # Compactions and the keys of resumes and forks name threads, runs and nodes: they go
    # first (they are not counted apart: a compaction is part of its thread's messages).
    remove_workspace_compactions(conn, workspace_id)
    repo.delete_workspace_branch_operations(conn, workspace_id)
    pins, proposals = remove_workspace_pins(conn, workspace_id)
    imports = remove_workspace_imports(conn, workspace_id)
    return {
        "pins": pins,
        "pin_proposals": proposals,
        "transcript_imports": imports,
        **repo.delete_thread_contents(conn, workspace_id),
    }


def remove_sessions_and_threads(conn: Connection, workspace_id: str) -> tuple[int, int]:
    """Delete the workspace's sessions and threads, once its runs are gone; how many of each."""
    return repo.delete_sessions_and_threads(conn, workspace_id)
