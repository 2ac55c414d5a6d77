"""Reading a run inside a caller's transaction: the run, its latest pinned revision (verified),
its workspace's root, and what discovery yields for it now.

The runs service builds its operations on these; other areas' operations that must see a run
in their own transaction (a checkpoint reads the run and its pinned revision in the same
transaction that appends its node) get them through the service.
"""

from __future__ import annotations

from sqlalchemy.engine import Connection

from rutter_core.discovery.fsread import FileReader
from rutter_core.discovery.snapshot import Snapshot
from rutter_core.discovery.walk import discover
from rutter_core.kernel.errors import Hint, NotFoundError, RutterError, UsageError
from rutter_core.runs import repo
from rutter_core.runs.integrity import verified
from rutter_core.runs.model import PinnedRevision, RunRecord
from rutter_core.workspaces.service import (
    files_here,
    location_of,
    project_workspace_ids,
    require_workspace,
)


def run_not_found(run_id: str) -> NotFoundError:
    return NotFoundError(
        "run_not_found",
        f"no run {run_id!r}",
        details={"run_id": run_id},
        hint=Hint("find_run"),
    )


def run_place(conn: Connection, run_id: str) -> tuple[str, str]:
    """(workspace ID, thread ID) of the run (`run_not_found` when there is none)."""
    found = repo.find_run_place(conn, run_id)
    if found is None:
        raise run_not_found(run_id)
    return found


def load_run(conn: Connection, run_id: str) -> RunRecord:
    """The run as stored (`run_not_found` when there is none)."""
    found = repo.find_run(conn, run_id)
    if found is None:
        raise run_not_found(run_id)
    return found


def latest_pinned(conn: Connection, run: RunRecord) -> PinnedRevision | None:
    """The run's newest pinned revision, verified (`snapshot_tampered` otherwise); None when
    it has none yet."""
    stored = repo.find_revision(conn, run.run_id, None)
    return None if stored is None else verified(stored, run)


def pinned_revision(conn: Connection, run: RunRecord, revision: int) -> PinnedRevision | None:
    """Revision `revision` of the run, verified (`snapshot_tampered` otherwise); None when the
    run has no such revision."""
    stored = repo.find_revision(conn, run.run_id, revision)
    return None if stored is None else verified(stored, run)


def load_run_of_session(conn: Connection, session_id: str) -> RunRecord:
    """The run of a session (`session_not_found` when no run has it)."""
    found = repo.find_run_of_session(conn, session_id)
    if found is None:
        raise NotFoundError(
            "session_not_found",
            f"no session {session_id!r}",
            details={"session_id": session_id},
            hint=Hint("find_session"),
        )
    return found


def workspace_root(
    conn: Connection, run: RunRecord, local: str | None = None, machine: str | None = None
) -> str:
    """The files the run's discovery reads: `local`'s root when given (another registration
    of the run's project, on another path or machine: `run_not_in_project` when it is not
    one), else its workspace's root, or, when that registration was removed and kept for its
    project's records, the project's first live location's. Runs reference their workspace
    (a foreign key): the row cannot be gone.

    With `machine` (the machine reading), no other machine's root is read (`files_here`): a
    `local` of another machine is refused (`workspace_on_other_machine`), and without `local`
    a run made through another machine's registration is read against `machine`'s
    registration of its project (refused when it has none)."""
    if machine is not None:
        if local is not None and local != run.workspace_id:
            _require_in_project(conn, run, local)
        named = local is not None
        return files_here(conn, local or run.workspace_id, machine, named=named).root
    if local is not None and local != run.workspace_id:
        _require_in_project(conn, run, local)
        return require_workspace(conn, local).root
    return location_of(conn, run.workspace_id).root


def _require_in_project(conn: Connection, run: RunRecord, local: str) -> None:
    require_workspace(conn, local)
    if local not in project_workspace_ids(conn, run.workspace_id):
        raise UsageError(
            "run_not_in_project",
            f"run {run.run_id} belongs to another project than workspace {local}'s",
            details={"run_id": run.run_id, "workspace_id": local},
            hint=Hint("choose_workspace"),
        )


def discover_live(run: RunRecord, root: str, reader: FileReader) -> Snapshot | RutterError:
    """Discovery for the run's workspace and target now, or its error (discovery fails
    closed: the error is reported, nothing is delivered)."""
    try:
        return discover(run.workspace_id, root, run.target_path, reader=reader)
    except RutterError as error:
        return error
