"""The `context_assemblies` table: the only module that reads or writes it.

Every function runs in the caller's transaction. Rows are appended, never changed (the store's
append-only guard refuses UPDATE and DELETE, except inside a workspace's cascade removal).
"""

from __future__ import annotations

import json

from sqlalchemy import delete, insert, select
from sqlalchemy.engine import Connection

from rutter_core.assembly.model import AuditedAssembly
from rutter_core.store.schema import context_assemblies


def insert_assembly(conn: Connection, audited: AuditedAssembly, *, revision: int) -> None:
    conn.execute(
        insert(context_assemblies).values(
            assembly_id=audited.assembly_id,
            run_id=audited.run_id,
            thread_id=audited.thread_id,
            workspace_id=audited.workspace_id,
            revision=revision,
            budget=audited.budget.background,
            fingerprint=audited.fingerprint,
            document_json=json.dumps(audited.to_json(), ensure_ascii=False, separators=(",", ":")),
            created_by=audited.created_by,
            created_at=audited.created_at,
        )
    )


def select_assemblies(conn: Connection, run_id: str, *, limit: int) -> list[AuditedAssembly]:
    """The run's assemblies, newest first (IDs are ULIDs: they sort by creation), at most
    `limit`."""
    rows = conn.execute(
        select(context_assemblies.c.document_json)
        .where(context_assemblies.c.run_id == run_id)
        .order_by(context_assemblies.c.assembly_id.desc())
        .limit(limit)
    )
    return [AuditedAssembly.model_validate_json(str(row.document_json)) for row in rows]


def delete_workspace_assemblies(conn: Connection, workspace_id: str) -> int:
    """Delete the workspace's assemblies (the caller has lifted the append-only guards); how
    many."""
    done = conn.execute(
        delete(context_assemblies).where(context_assemblies.c.workspace_id == workspace_id)
    )
    return int(done.rowcount)


__all__ = ["delete_workspace_assemblies", "insert_assembly", "select_assemblies"]
