"""The only module that touches the runs' tables: missions, runs, the append-only ledger of
pinned instruction revisions (`run_instruction_snapshots`) and the append-only reports on runs'
deliveries (`delivery_reports`).

Every function takes the caller's `Connection`: the service decides what one transaction holds.
Revision rows come back as stored (`StoredRevision`); `integrity` checks them before anything
uses them.

Missions live here rather than in continuity: a mission is the goal a run works on (every read
of a run joins it for `goal`), and it is created and closed with its runs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from sqlalchemy import and_, bindparam, delete, func, insert, select, update
from sqlalchemy.engine import Connection, Row
from sqlalchemy.sql import Select

from rutter_core.discovery.fingerprint import canonical_text
from rutter_core.discovery.snapshot import Snapshot
from rutter_core.kernel.errors import StoreError
from rutter_core.kernel.ids import may_name_a_record
from rutter_core.runs.model import (
    ACTIVE_STATUSES,
    DeliveryReport,
    DeliveryResult,
    RunMode,
    RunRecord,
    RunStatus,
    is_run_mode,
    is_run_status,
)
from rutter_core.store import person_of
from rutter_core.store.schema import delivery_reports, missions, run_instruction_snapshots, runs


def _run_query() -> Select[Any]:
    """Runs with their mission's goal and their latest revision's number and fingerprint.

    The latest revision is a correlated MAX per run: an index lookup on the ledger's
    UNIQUE (run_id, revision), so reading one run does not aggregate every run's revisions.
    """
    ledger = run_instruction_snapshots
    pinned = ledger.alias("pinned")
    latest = (
        select(func.max(ledger.c.revision))
        .where(ledger.c.run_id == runs.c.run_id)
        .correlate(runs)
        .scalar_subquery()
    )
    return (
        select(
            runs,
            missions.c.goal,
            pinned.c.revision.label("latest_revision"),
            pinned.c.fingerprint.label("latest_fingerprint"),
        )
        .join(missions, missions.c.mission_id == runs.c.mission_id)
        .outerjoin(pinned, and_(pinned.c.run_id == runs.c.run_id, pinned.c.revision == latest))
    )


_RUN_QUERY: Final = _run_query()
"""Built once: statements are immutable, `.where()` derives new ones."""


def _person(value: object) -> str | None:
    """A stored `*_person` column (null: written before people were recorded)."""
    return None if value is None else str(value)


def _record(row: Row[Any]) -> RunRecord:
    mode, status = str(row.mode), str(row.status)
    if not is_run_mode(mode) or not is_run_status(
        status
    ):  # the table's CHECKs make this impossible
        raise StoreError(
            "invalid_run_row", f"run {row.run_id} has mode {mode!r}, status {status!r}"
        )
    return RunRecord(
        run_id=str(row.run_id),
        mission_id=str(row.mission_id),
        session_id=str(row.session_id),
        thread_id=str(row.thread_id),
        workspace_id=str(row.workspace_id),
        goal=str(row.goal),
        profile=None if row.profile is None else str(row.profile),
        mode=mode,
        target_path=str(row.target_path),
        status=status,
        revision=None if row.latest_revision is None else int(row.latest_revision),
        fingerprint=None if row.latest_fingerprint is None else str(row.latest_fingerprint),
        created_by=str(row.created_by),
        created_by_person=_person(row.created_by_person),
        updated_by=str(row.updated_by),
        updated_by_person=_person(row.updated_by_person),
        created_at=str(row.created_at),
        updated_at=str(row.updated_at),
    )


def find_run(conn: Connection, run_id: str) -> RunRecord | None:
    if not may_name_a_record(run_id):
        return None
    row = conn.execute(_RUN_QUERY.where(runs.c.run_id == run_id)).first()
    return None if row is None else _record(row)


_RUN_PLACE: Final = select(runs.c.workspace_id, runs.c.thread_id).where(
    runs.c.run_id == bindparam("run_id")
)


def find_run_place(conn: Connection, run_id: str) -> tuple[str, str] | None:
    """(workspace ID, thread ID) of the run, by its key alone (what history search asks on
    every call)."""
    if not may_name_a_record(run_id):
        return None
    row = conn.execute(_RUN_PLACE, {"run_id": run_id}).first()
    return None if row is None else (str(row[0]), str(row[1]))


def find_run_of_session(conn: Connection, session_id: str) -> RunRecord | None:
    """The run a session belongs to (each run opens its own session)."""
    if not may_name_a_record(session_id):
        return None
    row = conn.execute(_RUN_QUERY.where(runs.c.session_id == session_id)).first()
    return None if row is None else _record(row)


def select_runs(
    conn: Connection, *, workspace_ids: Sequence[str] | None, active_only: bool
) -> list[RunRecord]:
    """Runs in creation order; `active_only` leaves out completed, failed and cancelled ones."""
    query = _RUN_QUERY.order_by(runs.c.created_at, runs.c.run_id)
    if workspace_ids is not None:
        query = query.where(runs.c.workspace_id.in_(list(workspace_ids)))
    if active_only:
        query = query.where(runs.c.status.in_(ACTIVE_STATUSES))
    return [_record(row) for row in conn.execute(query)]


def count_runs(conn: Connection, workspace_id: str) -> int:
    return int(
        conn.execute(
            select(func.count()).select_from(runs).where(runs.c.workspace_id == workspace_id)
        ).scalar_one()
    )


def delete_workspace_runs(conn: Connection, workspace_id: str) -> tuple[int, int, int]:
    """Delete the workspace's revisions (the caller has lifted the append-only guards), runs
    and missions, in that order; how many of each."""
    of_workspace = select(runs.c.run_id).where(runs.c.workspace_id == workspace_id)
    # A delivery report is part of its run's record: not counted apart.
    conn.execute(delete(delivery_reports).where(delivery_reports.c.run_id.in_(of_workspace)))
    revisions = conn.execute(
        delete(run_instruction_snapshots).where(
            run_instruction_snapshots.c.run_id.in_(of_workspace)
        )
    ).rowcount
    removed_runs = conn.execute(delete(runs).where(runs.c.workspace_id == workspace_id)).rowcount
    removed_missions = conn.execute(
        delete(missions).where(missions.c.workspace_id == workspace_id)
    ).rowcount
    return int(removed_runs), int(revisions), int(removed_missions)


def insert_mission(
    conn: Connection, *, mission_id: str, workspace_id: str, goal: str, actor: str, now: str
) -> None:
    conn.execute(
        insert(missions).values(
            mission_id=mission_id,
            workspace_id=workspace_id,
            goal=goal,
            status="active",
            created_by=actor,
            created_by_person=person_of(conn),
            created_at=now,
            updated_at=now,
        )
    )


def reopen_mission(conn: Connection, mission_id: str, *, now: str) -> None:
    """A closed mission active again (a resumed run works on it)."""
    conn.execute(
        update(missions)
        .where(missions.c.mission_id == mission_id, missions.c.status == "closed")
        .values(status="active", updated_at=now)
    )


def count_active_runs(conn: Connection, mission_id: str) -> int:
    """How many runs of the mission are not finished (created, running or paused)."""
    return int(
        conn.execute(
            select(func.count())
            .select_from(runs)
            .where(runs.c.mission_id == mission_id, runs.c.status.in_(ACTIVE_STATUSES))
        ).scalar_one()
    )


def close_mission(conn: Connection, mission_id: str, *, now: str) -> None:
    conn.execute(
        update(missions)
        .where(missions.c.mission_id == mission_id)
        .values(status="closed", updated_at=now)
    )


@dataclass(frozen=True, slots=True)
class NewRun:
    """A run's row as `insert_run` writes it (status `created`)."""

    run_id: str
    workspace_id: str
    mission_id: str
    session_id: str
    thread_id: str
    profile: str | None
    mode: RunMode
    target_path: str


def insert_run(conn: Connection, run: NewRun, *, actor: str, now: str) -> None:
    conn.execute(
        insert(runs).values(
            run_id=run.run_id,
            workspace_id=run.workspace_id,
            mission_id=run.mission_id,
            session_id=run.session_id,
            thread_id=run.thread_id,
            profile=run.profile,
            mode=run.mode,
            target_path=run.target_path,
            status="created",
            created_by=actor,
            created_by_person=person_of(conn),
            updated_by=actor,
            updated_by_person=person_of(conn),
            created_at=now,
            updated_at=now,
        )
    )


def update_run(
    conn: Connection, run_id: str, *, actor: str, now: str, status: RunStatus | None = None
) -> None:
    """Stamp the run as changed by `actor` now (and move it to `status` when given)."""
    values = {"updated_by": actor, "updated_by_person": person_of(conn), "updated_at": now}
    if status is not None:
        values["status"] = status
    conn.execute(update(runs).where(runs.c.run_id == run_id).values(**values))


# -- the ledger -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StoredRevision:
    """A ledger row as stored: not yet checked (see `rutter_core.runs.integrity`)."""

    run_id: str
    revision: int
    snapshot_json: str
    fingerprint: str
    confirmed_by: str
    confirmed_by_person: str | None
    confirmed_at: str
    replaces_fingerprint: str | None


def find_revision(conn: Connection, run_id: str, revision: int | None) -> StoredRevision | None:
    """Revision `revision` of the run, or its latest when `revision` is None."""
    table = run_instruction_snapshots
    query = select(table).where(table.c.run_id == run_id)
    if revision is None:
        query = query.order_by(table.c.revision.desc()).limit(1)
    else:
        query = query.where(table.c.revision == revision)
    row = conn.execute(query).first()
    if row is None:
        return None
    replaces = row.replaces_fingerprint
    return StoredRevision(
        run_id=str(row.run_id),
        revision=int(row.revision),
        snapshot_json=row.snapshot_json,
        fingerprint=str(row.fingerprint),
        confirmed_by=str(row.confirmed_by),
        confirmed_by_person=_person(row.confirmed_by_person),
        confirmed_at=str(row.confirmed_at),
        replaces_fingerprint=None if replaces is None else str(replaces),
    )


def append_revision(
    conn: Connection,
    run_id: str,
    revision: int,
    snapshot: Snapshot,
    *,
    replaces: str | None,
    actor: str,
    now: str,
) -> str:
    """Append `snapshot` as revision `revision` of the run, confirmed by `actor` now; the
    person it records as confirming it. The ledger's UNIQUE (run_id, revision) declares the race
    between two confirmations: the store reports the loser as `conflict`."""
    person = person_of(conn)
    conn.execute(
        insert(run_instruction_snapshots).values(
            run_id=run_id,
            revision=revision,
            snapshot_json=canonical_text(snapshot.to_json()),
            fingerprint=snapshot.fingerprint,
            confirmed_by=actor,
            confirmed_by_person=person,
            confirmed_at=now,
            replaces_fingerprint=replaces,
        )
    )
    return person


# -- delivery reports ---------------------------------------------------------------------------


def insert_delivery_report(
    conn: Connection,
    *,
    report_id: str,
    run_id: str,
    result: DeliveryResult,
    summary: str,
    redacted: bool,
    references: tuple[str, ...],
    actor: str,
    now: str,
) -> DeliveryReport:
    """Append a report on `run_id`'s delivery, in the caller's transaction."""
    conn.execute(
        insert(delivery_reports).values(
            report_id=report_id,
            run_id=run_id,
            result=result,
            summary=summary,
            summary_redacted=int(redacted),
            references_json=json.dumps(list(references), ensure_ascii=False),
            created_by=actor,
            created_by_person=person_of(conn),
            created_at=now,
        )
    )
    found = select_delivery_reports(conn, run_id, report_id=report_id)
    assert len(found) == 1, report_id
    return found[0]


def select_delivery_reports(
    conn: Connection, run_id: str, *, report_id: str | None = None
) -> list[DeliveryReport]:
    """The run's delivery reports, oldest first (the ID breaks a tie: ULIDs sort by time)."""
    query = (
        select(delivery_reports, runs.c.thread_id)
        .join(runs, runs.c.run_id == delivery_reports.c.run_id)
        .where(delivery_reports.c.run_id == run_id)
        .order_by(delivery_reports.c.created_at, delivery_reports.c.report_id)
    )
    if report_id is not None:
        query = query.where(delivery_reports.c.report_id == report_id)
    return [
        DeliveryReport(
            report_id=str(row.report_id),
            run_id=str(row.run_id),
            thread_id=str(row.thread_id),
            result=row.result,
            summary=str(row.summary),
            summary_redacted=bool(row.summary_redacted),
            references=tuple(str(item) for item in json.loads(row.references_json)),
            created_by=str(row.created_by),
            created_by_person=_person(row.created_by_person),
            created_at=str(row.created_at),
        )
        for row in conn.execute(query)
    ]
