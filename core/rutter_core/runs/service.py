"""Runs and their pinned instruction snapshots (docs/reference/runs.md): the operations.

A Run works on a Mission, in a Session, as part of a Thread. `create_run` creates all of them
in one write transaction together with the run's root continuity node and revision 1 of its
pinned instruction snapshot: from then on the run uses exactly those instructions, whatever
happens on disk. `inspect_run` compares the pinned snapshot with a fresh discovery (the
"live" one) and `confirm_refresh` appends the live snapshot as the next revision, but only
when the caller names both fingerprints it reviewed and both are still current.
`create_pinned_run` is the fork or resume of a continuity node: a run pinned to a revision the
caller already read and verified, inside the caller's transaction (docs/reference/continuity.md).

Revisions live in an append-only table; every read of one passes `integrity.verified`. The
runs' tables are reached through `repo` only; the thread, session and root node a run gets
through `rutter_core.continuity`, and its workspace through `rutter_core.workspaces.service`,
each with this transaction's connection.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from sqlalchemy.engine import Connection

from rutter_core.continuity.nodes import BranchPoint
from rutter_core.continuity.sessions import close_session
from rutter_core.discovery.fsread import FileReader
from rutter_core.discovery.snapshot import Snapshot
from rutter_core.discovery.targets import normalize_target
from rutter_core.discovery.walk import discover
from rutter_core.kernel.actors import require_operator
from rutter_core.kernel.clock import now_rfc3339
from rutter_core.kernel.errors import ConflictError, Hint, NotFoundError, RejectedError, RutterError
from rutter_core.runs import repo
from rutter_core.runs.diff import diff_snapshots, inspection_of
from rutter_core.runs.inserting import Resumed, current_workspace, insert_run
from rutter_core.runs.integrity import verified
from rutter_core.runs.model import (
    ALLOWED_TRANSITIONS,
    DEFAULT_MODE,
    DEFAULT_TARGET,
    NO_REVISION,
    RUN_STATUSES,
    TERMINAL_STATUSES,
    CreatedRun,
    PinnedRevision,
    RunInspection,
    RunRecord,
    RunStatus,
    SnapshotDiff,
    is_run_status,
)
from rutter_core.runs.policy import (
    MAX_GOAL_CHARS,
    validate_fingerprint,
    validate_goal,
    validate_mode,
    validate_profile,
)
from rutter_core.runs.reading import (
    discover_live,
    latest_pinned,
    load_run,
    load_run_of_session,
    pinned_revision,
    workspace_root,
)
from rutter_core.store import Store
from rutter_core.workspaces.service import get_workspace, project_workspace_ids

# -- reading ----------------------------------------------------------------------------------


def get_run(store: Store, run_id: str) -> RunRecord:
    with store.read() as conn:
        return load_run(conn, run_id)


def get_verified_run(store: Store, run_id: str) -> RunRecord:
    """The run, once the latest revision its `revision` and `fingerprint` name has passed the
    integrity check (`snapshot_tampered` otherwise): for surfaces that show those to people."""
    with store.read() as conn:
        run = load_run(conn, run_id)
        latest_pinned(conn, run)  # the same read snapshot as `run`: the very revision it names
        return run


def list_runs(
    store: Store, *, workspace_id: str | None = None, active_only: bool = False
) -> list[RunRecord]:
    """Runs in creation order; `active_only` leaves out completed, failed and cancelled ones."""
    with store.read() as conn:
        # A project's runs, made through any registration of it.
        of = None if workspace_id is None else project_workspace_ids(conn, workspace_id)
        return repo.select_runs(conn, workspace_ids=of, active_only=active_only)


def active_runs_through(conn: Connection, workspace_ids: Collection[str]) -> list[RunRecord]:
    """The active runs made through any of `workspace_ids`, in creation order."""
    if not workspace_ids:
        return []
    return repo.select_runs(conn, workspace_ids=sorted(workspace_ids), active_only=True)


def count_runs(conn: Connection, workspace_id: str) -> int:
    """How many runs (any status) belong to `workspace_id`, in the caller's transaction: runs
    are kept for good, so a workspace that has some cannot be removed."""
    return repo.count_runs(conn, workspace_id)


def remove_workspace_runs(conn: Connection, workspace_id: str) -> tuple[int, int, int]:
    """Delete the workspace's runs with their revisions and missions, in the caller's
    transaction (a `workspace remove --cascade`, after continuity's nodes): how many runs,
    revisions and missions."""
    return repo.delete_workspace_runs(conn, workspace_id)


def latest_revision(store: Store, run_id: str) -> PinnedRevision | None:
    """The run's newest revision, verified; None when it has none yet."""
    with store.read() as conn:
        return latest_pinned(conn, load_run(conn, run_id))


def read_revision(store: Store, run_id: str, revision: int) -> PinnedRevision:
    """One revision of the run, verified (`revision_not_found` when there is no such one)."""
    with store.read() as conn:
        run = load_run(conn, run_id)
        stored = repo.find_revision(conn, run_id, revision)
    if stored is None:
        raise NotFoundError(
            "revision_not_found",
            f"run {run_id} has no revision {revision}"
            + (f"; its latest is {run.revision}" if run.revision else "; it has none yet"),
            details={"run_id": run_id, "revision": revision, "latest": run.revision},
        )
    return verified(stored, run)


# -- creating ---------------------------------------------------------------------------------


def _new_run(
    store: Store,
    *,
    workspace_id: str,
    goal: str,
    actor: str,
    profile: str | None,
    mode: str,
    target: str,
    thread_id: str | None,
    pin_with: FileReader | None,
) -> tuple[RunRecord, str, Snapshot | None]:
    """A run with its mission, session, thread and root node, and revision 1 of its pinned
    instructions when `pin_with` reads the disk, in one write transaction. Returns the run as
    stored, its root node's ID and revision 1's snapshot."""
    require_operator(actor, what="create or change runs")
    goal = validate_goal(goal)
    checked_mode = validate_mode(mode)
    profile = validate_profile(profile)
    if pin_with is None:
        snapshot, target_path = None, normalize_target(target)
        workspace = get_workspace(store, workspace_id)
    else:
        workspace = get_workspace(store, workspace_id)
        # Discovery reads files: done before taking the write lock, then bound to the
        # workspace registration as it was read (re-checked under the lock).
        snapshot = discover(workspace.workspace_id, workspace.root, target, reader=pin_with)
        target_path = snapshot.target_path
    now = now_rfc3339()
    with store.write() as conn:
        current_workspace(conn, workspace.workspace_id, workspace.root)
        run, root_node_id = insert_run(
            conn,
            workspace_id=workspace.workspace_id,
            mission=goal,
            profile=profile,
            mode=checked_mode,
            target_path=target_path,
            thread_id=thread_id,
            branch=None,
            snapshot=snapshot,
            actor=actor,
            now=now,
        )
        return run, root_node_id, snapshot


def create_pinned_run(
    conn: Connection,
    source: RunRecord,
    snapshot: Snapshot,
    *,
    branch: BranchPoint,
    goal: str | None,
    actor: str,
    now: str,
    workspace_id: str | None = None,
) -> CreatedRun:
    """A new run of `source`'s target whose revision 1 is `snapshot`, a pinned
    revision the caller read from the ledger and verified, in the caller's write transaction:
    the fork or resume of a continuity node (docs/reference/continuity.md). Its line of nodes starts
    with a branch marker below `branch.parent_node_id`; it gets a new thread and session, and a
    new mission with `goal` (a fork) or `source`'s mission again, reopened when it was closed
    (a resume: `goal` None). The run is `source`'s workspace's, or `workspace_id`'s: another
    registration of the same project (the caller checked), whose files its drift is computed
    against; the snapshot is the same, stamped with that workspace (the fingerprint leaves the
    workspace out, so it stays the same).

    Nothing that authorises is taken from `source`: the run starts `created`, in the default
    mode (`ask`), without a profile; approvals, grants, credentials, leases and processes are
    not stored by rutter at all, so there is nothing else to leave behind.
    """
    require_operator(actor, what="create or change runs")
    mission: str | Resumed = Resumed(source.mission_id) if goal is None else validate_goal(goal)
    if (snapshot.workspace_id, snapshot.target_path) != (source.workspace_id, source.target_path):
        raise ValueError("a branch pins a snapshot of its source run's workspace and target")
    place = source.workspace_id if workspace_id is None else workspace_id
    if place != snapshot.workspace_id:
        snapshot = snapshot.model_copy(update={"workspace_id": place})
    run, marker_id = insert_run(
        conn,
        workspace_id=place,
        mission=mission,
        profile=None,
        mode=DEFAULT_MODE,
        target_path=source.target_path,
        thread_id=None,
        branch=branch,
        snapshot=snapshot,
        actor=actor,
        now=now,
    )
    return _created(run, marker_id, snapshot)


def _created(run: RunRecord, first_node_id: str, snapshot: Snapshot) -> CreatedRun:
    """The answer of a run just created with revision 1 pinned to `snapshot`."""
    return CreatedRun(
        run_id=run.run_id,
        mission_id=run.mission_id,
        session_id=run.session_id,
        thread_id=run.thread_id,
        root_node_id=first_node_id,
        revision=1,
        fingerprint=snapshot.fingerprint,
        snapshot=snapshot,
    )


def create_run(
    store: Store,
    *,
    workspace_id: str,
    goal: str,
    reader: FileReader,
    actor: str,
    profile: str | None = None,
    mode: str = DEFAULT_MODE,
    target: str = DEFAULT_TARGET,
    thread_id: str | None = None,
) -> CreatedRun:
    """Create a run with its mission, session, thread (unless `thread_id` names an active
    one of the workspace), root continuity node and revision 1 of its pinned instructions for
    `target`, in one write transaction. Discovery failing closed raises its error and creates
    nothing.
    """
    run, root_node_id, snapshot = _new_run(
        store,
        workspace_id=workspace_id,
        goal=goal,
        actor=actor,
        profile=profile,
        mode=mode,
        target=target,
        thread_id=thread_id,
        pin_with=reader,
    )
    assert snapshot is not None
    return _created(run, root_node_id, snapshot)


def import_run(
    store: Store,
    *,
    workspace_id: str,
    goal: str,
    actor: str,
    profile: str | None = None,
    mode: str = DEFAULT_MODE,
    target: str = DEFAULT_TARGET,
    thread_id: str | None = None,
) -> RunRecord:
    """Record a run that has no pinned instructions (one brought in from elsewhere).

    Everything `create_run` creates except revision 1: the run can be inspected read-only,
    and its first confirmed refresh pins revision 1.
    """
    run, _root_node_id, _no_snapshot = _new_run(
        store,
        workspace_id=workspace_id,
        goal=goal,
        actor=actor,
        profile=profile,
        mode=mode,
        target=target,
        thread_id=thread_id,
        pin_with=None,
    )
    return run


# -- status -----------------------------------------------------------------------------------


def _terminal(run: RunRecord, action: str) -> RejectedError:
    return RejectedError(
        "run_terminal",
        f"run {run.run_id} is {run.status}, which is final: it cannot {action}; create a new "
        "run instead",
        details={"run_id": run.run_id, "status": run.status},
    )


def set_run_status(store: Store, run_id: str, status: str, *, actor: str) -> RunRecord:
    """Move the run to `status` per `ALLOWED_TRANSITIONS`.

    Asking for the status the run already has changes nothing (and succeeds), so a retried
    request is harmless. When the run ends, its mission and session are closed with it.
    """
    require_operator(actor, what="create or change runs")
    if not is_run_status(status) or status == "created":
        targets = [s for s in RUN_STATUSES if s != "created"]
        raise RejectedError(
            "invalid_status",
            f"invalid run status {status!r}; use one of {', '.join(targets)}",
            details={"status": status, "allowed": targets},
        )
    target: RunStatus = status
    with store.write() as conn:
        run = load_run(conn, run_id)
        if run.status == target:
            return run
        if run.is_terminal:
            raise _terminal(run, f"become {target}")
        allowed = ALLOWED_TRANSITIONS[run.status]
        if target not in allowed:
            raise RejectedError(
                "invalid_transition",
                f"run {run_id} is {run.status} and cannot become {target}; from {run.status} "
                f"it can become {', '.join(sorted(allowed))}",
                details={"run_id": run_id, "from": run.status, "to": target,
                         "allowed": sorted(allowed)},
            )  # fmt: skip
        now = now_rfc3339()
        repo.update_run(conn, run_id, actor=actor, now=now, status=target)
        if target in TERMINAL_STATUSES:
            # A resumed mission has several runs: it closes with the last of them.
            if repo.count_active_runs(conn, run.mission_id) == 0:
                repo.close_mission(conn, run.mission_id, now=now)
            close_session(conn, run.session_id, now=now)
        return load_run(conn, run_id)


# -- drift ------------------------------------------------------------------------------------


def inspect_run(
    store: Store,
    run_id: str,
    *,
    reader: FileReader,
    local: str | None = None,
    machine: str | None = None,
) -> RunInspection:
    """The run's latest pinned revision (verified) against discovery now, in the files of
    `local` (a registration of the run's project) when given, else of the run's workspace, or,
    when that is another machine's than `machine`, of `machine`'s registration of the project
    (`workspace_root`). Read-only."""
    with store.read() as conn:
        run = load_run(conn, run_id)
        pinned = latest_pinned(conn, run)
        root = workspace_root(conn, run, local, machine)
    return inspection_of(run, pinned, discover_live(run, root, reader))


def confirm_refresh(
    store: Store,
    run_id: str,
    *,
    reader: FileReader,
    expected_fingerprint: str | None,
    expected_live_fingerprint: str,
    actor: str,
    local: str | None = None,
    machine: str | None = None,
) -> tuple[RunInspection, bool]:
    """Pin the live instructions as the run's next revision, bound to what was reviewed.

    `expected_fingerprint` is the pinned fingerprint the caller reviewed (`NO_REVISION` or
    None: the run had no revision), `expected_live_fingerprint` the live one. Inside one
    write transaction (BEGIN IMMEDIATE on SQLite) discovery runs again; unless the run's
    latest revision still has `expected_fingerprint` and discovery still yields
    `expected_live_fingerprint`, it fails with `conflict` (details: `current_fingerprint`,
    `live_fingerprint`) and appends nothing. When live equals pinned nothing is appended.
    Returns the inspection as it stands afterwards and whether a revision was appended.
    Terminal runs are `run_terminal`. `local`, `machine`: whose files discovery reads, as for
    `inspect_run`.
    """
    require_operator(actor, what="create or change runs")
    if expected_fingerprint == NO_REVISION:
        expected_fingerprint = None
    if expected_fingerprint is not None:
        validate_fingerprint(expected_fingerprint, option="expected fingerprint", run_id=run_id)
    validate_fingerprint(
        expected_live_fingerprint, option="expected live fingerprint", run_id=run_id
    )
    with store.write() as conn:
        run = load_run(conn, run_id)
        if run.is_terminal:
            raise _terminal(run, "take new instructions")
        pinned = latest_pinned(conn, run)
        current = None if pinned is None else pinned.fingerprint
        # Under the write lock: no other confirmation can interleave between this discovery
        # and the append, so the appended snapshot is exactly the one checked.
        live = discover_live(run, workspace_root(conn, run, local, machine), reader)
        live_fingerprint = live.fingerprint if isinstance(live, Snapshot) else None
        if current != expected_fingerprint or live_fingerprint != expected_live_fingerprint:
            raise _refresh_conflict(run, current, live, expected_fingerprint)
        assert isinstance(live, Snapshot)  # its fingerprint matched a valid one
        if live.fingerprint == current:
            return inspection_of(run, pinned, live), False
        now = now_rfc3339()
        revision = 1 if pinned is None else pinned.revision + 1
        person = repo.append_revision(
            conn, run_id, revision, live, replaces=current, actor=actor, now=now
        )
        repo.update_run(conn, run_id, actor=actor, now=now)
        refreshed_run = load_run(conn, run_id)
        appended = PinnedRevision(
            run_id=run_id,
            revision=revision,
            fingerprint=live.fingerprint,
            confirmed_by=actor,
            confirmed_by_person=person,
            confirmed_at=now,
            replaces_fingerprint=current,
            snapshot=live,
        )
    return inspection_of(refreshed_run, appended, live), True


def _refresh_conflict(
    run: RunRecord,
    current: str | None,
    live: Snapshot | RutterError,
    expected_fingerprint: str | None,
) -> ConflictError:
    details: dict[str, Any] = {
        "run_id": run.run_id,
        "current_fingerprint": current,
        "live_fingerprint": live.fingerprint if isinstance(live, Snapshot) else None,
    }
    if current != expected_fingerprint:
        why = (
            f"the run's pinned instructions are now {_short(current)} (revision {run.revision}), "
            f"not the {_short(expected_fingerprint)} you reviewed"
        )
    elif isinstance(live, RutterError):
        details["live_error"] = live.to_json()
        why = f"discovery now fails closed ({live.code}: {live.message})"
    else:
        why = (
            "the files on disk changed again since you reviewed them (live is now "
            f"{_short(live.fingerprint)})"
        )
    return ConflictError(
        "conflict",
        f"not refreshed: {why}; nothing was appended",
        details=details,
        hint=Hint("review_run_again", {"run_id": run.run_id}),
    )


def _short(fingerprint: str | None) -> str:
    return "no revision" if fingerprint is None else fingerprint[:12] + "…"


# The service is the runs' public API: what callers use from the model and the policy is
# passed on from here.
__all__ = [
    "ALLOWED_TRANSITIONS", "DEFAULT_MODE", "DEFAULT_TARGET", "MAX_GOAL_CHARS", "NO_REVISION",
    "RUN_STATUSES", "TERMINAL_STATUSES", "CreatedRun", "PinnedRevision", "RunInspection",
    "RunRecord", "RunStatus", "SnapshotDiff", "confirm_refresh", "count_runs",
    "create_pinned_run", "create_run", "diff_snapshots", "discover_live", "get_run",
    "get_verified_run", "import_run", "inspect_run", "latest_pinned", "latest_revision",
    "list_runs", "load_run", "load_run_of_session", "pinned_revision", "read_revision",
    "set_run_status", "workspace_root",
]  # fmt: skip
