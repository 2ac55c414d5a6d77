"""The `context_assemblies` table: the only module that reads or writes it.

Every function runs in the caller's transaction. Rows are appended, never changed (the store's
append-only guard refuses UPDATE and DELETE, except inside a workspace's cascade removal).
"""

from __future__ import annotations

import json
from typing import Any, Final

from sqlalchemy import delete, insert, select
from sqlalchemy.engine import Connection

from rutter_core.assembly.model import AuditedAssembly, AuditRecord, FollowedReport
from rutter_core.store import person_of
from rutter_core.store.schema import context_assemblies, context_assembly_reports

_INSERT: Final = insert(context_assemblies)


def insert_assembly(
    conn: Connection,
    document: dict[str, Any],
    *,
    assembly_id: str,
    run_id: str,
    thread_id: str,
    workspace_id: str,
    revision: int,
    budget: int,
    fingerprint: str,
    actor: str,
    now: str,
) -> str:
    """Append one assembly: `document` is its audit (`AuditedAssembly`'s JSON, no text); the
    person it records as assembling it."""
    person = person_of(conn)
    conn.execute(
        _INSERT,
        {
            "assembly_id": assembly_id,
            "run_id": run_id,
            "thread_id": thread_id,
            "workspace_id": workspace_id,
            "revision": revision,
            "budget": budget,
            "fingerprint": fingerprint,
            "document_json": json.dumps(document, ensure_ascii=False, separators=(",", ":")),
            "created_by": actor,
            "created_at": now,
            "created_by_person": person,
        },
    )
    return person


def _person(value: object) -> str | None:
    """A stored `*_person` column (null: written before people were recorded)."""
    return None if value is None else str(value)


def select_assemblies(conn: Connection, run_id: str, *, limit: int) -> list[AuditRecord]:
    """The run's assemblies, newest first (IDs are ULIDs: they sort by creation), at most
    `limit`, each with its report when one was made."""
    reports = context_assembly_reports
    rows = conn.execute(
        select(
            context_assemblies.c.document_json,
            context_assemblies.c.created_by_person,
            reports.c.followed_json,
            reports.c.ignored_json,
            reports.c.reported_by,
            reports.c.reported_by_person,
            reports.c.reported_at,
        )
        .select_from(
            context_assemblies.outerjoin(
                reports, reports.c.assembly_id == context_assemblies.c.assembly_id
            )
        )
        .where(context_assemblies.c.run_id == run_id)
        .order_by(context_assemblies.c.assembly_id.desc())
        .limit(limit)
    )
    found = []
    for row in rows:
        audited = AuditedAssembly.model_validate_json(str(row.document_json))
        report = None
        if row.reported_by is not None:
            report = FollowedReport(
                assembly_id=audited.assembly_id,
                followed=tuple(json.loads(row.followed_json)),
                ignored=tuple(json.loads(row.ignored_json)),
                reported_by=str(row.reported_by),
                reported_by_person=_person(row.reported_by_person),
                reported_at=str(row.reported_at),
            )
        found.append(
            AuditRecord(
                **{**dict(audited), "created_by_person": _person(row.created_by_person)},
                followed=report,
            )
        )
    return found


def find_assembly(conn: Connection, assembly_id: str) -> AuditedAssembly | None:
    row = conn.execute(
        select(context_assemblies.c.document_json).where(
            context_assemblies.c.assembly_id == assembly_id
        )
    ).first()
    return None if row is None else AuditedAssembly.model_validate_json(str(row.document_json))


def has_report(conn: Connection, assembly_id: str) -> bool:
    found = conn.execute(
        select(context_assembly_reports.c.assembly_id).where(
            context_assembly_reports.c.assembly_id == assembly_id
        )
    ).first()
    return found is not None


def insert_report(conn: Connection, report: FollowedReport, *, workspace_id: str) -> FollowedReport:
    """Append the report; as recorded, with the person who made it."""
    person = person_of(conn)
    conn.execute(
        insert(context_assembly_reports).values(
            assembly_id=report.assembly_id,
            workspace_id=workspace_id,
            followed_json=json.dumps(list(report.followed), separators=(",", ":")),
            ignored_json=json.dumps(list(report.ignored), separators=(",", ":")),
            reported_by=report.reported_by,
            reported_by_person=person,
            reported_at=report.reported_at,
        )
    )
    return report.model_copy(update={"reported_by_person": person})


def delete_workspace_assemblies(conn: Connection, workspace_id: str) -> int:
    """Delete the workspace's assemblies and their reports (the caller has lifted the
    append-only guards); how many assemblies."""
    conn.execute(
        delete(context_assembly_reports).where(
            context_assembly_reports.c.workspace_id == workspace_id
        )
    )
    done = conn.execute(
        delete(context_assemblies).where(context_assemblies.c.workspace_id == workspace_id)
    )
    return int(done.rowcount)


__all__ = [
    "delete_workspace_assemblies",
    "find_assembly",
    "has_report",
    "insert_assembly",
    "insert_report",
    "select_assemblies",
]
