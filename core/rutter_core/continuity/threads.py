"""Threads: the line of work that runs continue, one workspace's (docs/reference/continuity.md).

A run starts a new thread or continues an active one of its own workspace.
"""

from __future__ import annotations

from sqlalchemy.engine import Connection

from rutter_core.continuity import repo
from rutter_core.kernel.errors import Hint, NotFoundError, RejectedError
from rutter_core.kernel.ids import new_id
from rutter_core.workspaces.service import project_workspace_ids


def start_thread(conn: Connection, *, workspace_id: str, actor: str, now: str) -> str:
    """A new active thread of `workspace_id`, in the caller's transaction; returns its ID."""
    thread_id = new_id("thr")
    repo.insert_thread(conn, thread_id=thread_id, workspace_id=workspace_id, actor=actor, now=now)
    return thread_id


def runs_of_thread(conn: Connection, thread_id: str) -> list[str]:
    """The runs working in the thread, newest first."""
    return repo.runs_of_thread(conn, thread_id)


def require_continuable_thread(conn: Connection, thread_id: str, workspace_id: str) -> None:
    """Refuse unless `thread_id` is an active thread of `workspace_id`'s project (made through
    any registration of it) (`thread_not_found`,
    `thread_in_other_workspace`, `thread_archived`)."""
    thread = repo.find_thread(conn, thread_id)
    if thread is None:
        raise NotFoundError(
            "thread_not_found",
            f"no thread {thread_id!r}",
            details={"thread_id": thread_id},
            hint=Hint("start_or_find_thread"),
        )
    if thread.workspace_id not in project_workspace_ids(conn, workspace_id):
        raise RejectedError(
            "thread_in_other_workspace",
            f"thread {thread_id} belongs to workspace {thread.workspace_id!r}, not "
            f"{workspace_id!r} or another registration of its project; a run continues a "
            "thread of its own project only",
            details={"thread_id": thread_id, "workspace_id": thread.workspace_id},
        )
    if thread.status != "active":
        raise RejectedError(
            "thread_archived",
            f"thread {thread_id} is {thread.status}; start a new thread instead",
            details={"thread_id": thread_id, "status": thread.status},
        )


def require_thread(conn: Connection, thread_id: str, *, writable: bool) -> str:
    """Refuse unless `thread_id` names a thread (`thread_not_found`), and, when something is
    to be added to it, an active one (`thread_archived`); returns the thread's workspace."""
    thread = repo.find_thread(conn, thread_id)
    if thread is None:
        raise NotFoundError(
            "thread_not_found",
            f"no thread {thread_id}",
            details={"thread_id": thread_id},
            hint=Hint("find_thread"),
        )
    if writable and thread.status != "active":
        raise RejectedError(
            "thread_archived",
            f"thread {thread_id} is {thread.status}: nothing can be added to it",
            details={"thread_id": thread_id, "status": thread.status},
        )
    return thread.workspace_id
