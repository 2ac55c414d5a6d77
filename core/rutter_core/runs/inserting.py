"""Inserting a run: its thread, mission, session, the node its line of continuity nodes starts
at, the run itself and revision 1 of its pinned instructions, in the caller's write transaction.

One path for every way a run comes to be: `create_run` and `import_run` (a root node, a new
mission) and `create_pinned_run` (the fork or resume of a node: a branch marker below it, a new
mission or the resumed one) all insert through `insert_run`.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.engine import Connection

from rutter_core.continuity.nodes import BranchPoint, add_branch_marker, add_root_node
from rutter_core.continuity.sessions import open_session
from rutter_core.continuity.threads import require_continuable_thread, start_thread
from rutter_core.discovery.snapshot import Snapshot
from rutter_core.kernel.errors import ConflictError
from rutter_core.kernel.ids import new_id
from rutter_core.runs import repo
from rutter_core.runs.model import RunMode, RunRecord
from rutter_core.runs.reading import load_run
from rutter_core.workspaces.service import find_workspace


def current_workspace(conn: Connection, workspace_id: str, root: str) -> None:
    """Refuse when the workspace was removed or moved since discovery read it."""
    found = find_workspace(conn, workspace_id)
    if found is None or found.root != root:
        raise ConflictError(
            "conflict",
            f"workspace {workspace_id!r} was removed or moved while the run "
            "was being created; nothing was created, try again",
            details={"workspace_id": workspace_id},
        )


def insert_run(
    conn: Connection,
    *,
    workspace_id: str,
    mission: str | Resumed,
    profile: str | None,
    mode: RunMode,
    target_path: str,
    thread_id: str | None,
    branch: BranchPoint | None,
    snapshot: Snapshot | None,
    actor: str,
    now: str,
) -> tuple[RunRecord, str]:
    """Thread (unless given), mission (a new one with the goal `mission`, or the resumed one),
    session, run, the node its line starts at (a root node, or a branch marker below `branch`)
    and revision 1 of its pinned instructions (when `snapshot` is given), in foreign-key order;
    returns the run as stored and its first node's ID."""
    if thread_id is None:
        thread_id = start_thread(conn, workspace_id=workspace_id, actor=actor, now=now)
    else:
        require_continuable_thread(conn, thread_id, workspace_id)
    if isinstance(mission, Resumed):
        mission_id = mission.mission_id
        repo.reopen_mission(conn, mission_id, now=now)
    else:
        mission_id = new_id("msn")
        repo.insert_mission(
            conn, mission_id=mission_id, workspace_id=workspace_id, goal=mission, actor=actor,
            now=now,
        )  # fmt: skip
    session_id = open_session(
        conn, workspace_id=workspace_id, thread_id=thread_id, actor=actor, now=now
    )
    run = repo.NewRun(
        run_id=new_id("run"),
        workspace_id=workspace_id,
        mission_id=mission_id,
        session_id=session_id,
        thread_id=thread_id,
        profile=profile,
        mode=mode,
        target_path=target_path,
    )
    repo.insert_run(conn, run, actor=actor, now=now)
    ids = {"run_id": run.run_id, "session_id": session_id, "thread_id": thread_id}
    if branch is None:
        first_node_id = add_root_node(conn, **ids, actor=actor, now=now)
    else:
        first_node_id = add_branch_marker(conn, **ids, branch=branch, actor=actor, now=now)
    if snapshot is not None:
        repo.append_revision(conn, run.run_id, 1, snapshot, replaces=None, actor=actor, now=now)
    return load_run(conn, run.run_id), first_node_id


@dataclass(frozen=True, slots=True)
class Resumed:
    """The mission a resumed run continues."""

    mission_id: str
