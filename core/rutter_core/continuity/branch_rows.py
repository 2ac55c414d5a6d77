"""The operation keys of resumes and forks (migration 15): the only module touching
`branch_operations`, so the same key answers the same run."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import delete, insert, select
from sqlalchemy.engine import Connection

from rutter_core.store.schema import branch_operations, continuity_nodes, sessions


@dataclass(frozen=True, slots=True)
class BranchOperation:
    operation_key: str
    kind: str
    node_id: str
    request_sha256: str
    run_id: str
    marker_node_id: str


def find_branch_operation(conn: Connection, operation_key: str) -> BranchOperation | None:
    row = conn.execute(
        select(branch_operations).where(branch_operations.c.operation_key == operation_key)
    ).first()
    if row is None:
        return None
    return BranchOperation(
        str(row.operation_key), str(row.kind), str(row.node_id), str(row.request_sha256),
        str(row.run_id), str(row.marker_node_id),
    )  # fmt: skip


def insert_branch_operation(
    conn: Connection, found: BranchOperation, *, actor: str, now: str
) -> None:
    conn.execute(
        insert(branch_operations).values(
            operation_key=found.operation_key, kind=found.kind, node_id=found.node_id,
            request_sha256=found.request_sha256, run_id=found.run_id,
            marker_node_id=found.marker_node_id, created_by=actor, created_at=now,
        )
    )  # fmt: skip


def delete_workspace_branch_operations(conn: Connection, workspace_id: str) -> int:
    """Delete the operation keys of the resumes and forks of the workspace's runs."""
    owned = select(sessions.c.session_id).where(sessions.c.workspace_id == workspace_id)
    nodes = select(continuity_nodes.c.node_id).where(continuity_nodes.c.session_id.in_(owned))
    done = conn.execute(
        delete(branch_operations).where(
            branch_operations.c.node_id.in_(nodes) | branch_operations.c.marker_node_id.in_(nodes)
        )
    )
    return int(done.rowcount or 0)
