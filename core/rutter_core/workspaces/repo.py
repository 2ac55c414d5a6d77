"""The `workspaces` table: the only module that reads or writes it.

Every function works inside the caller's transaction (`Connection`), so a service, or the
application layer orchestrating several areas, decides what one unit of work holds.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, insert, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from rutter_core.kernel.errors import ConflictError
from rutter_core.store.schema import workspaces as workspaces_table
from rutter_core.workspaces.model import Workspace


class RegisteredConcurrently(ConflictError):
    """The ID or the root was registered by another writer between our check and our insert
    (databases without SQLite's write lock): the unique constraints refused the insert."""


def _from_row(row: Any) -> Workspace:
    return Workspace(
        workspace_id=str(row.workspace_id), root=str(row.root), created_at=str(row.created_at)
    )


def by_id(conn: Connection, workspace_id: str) -> Workspace | None:
    row = conn.execute(
        select(workspaces_table).where(workspaces_table.c.workspace_id == workspace_id)
    ).first()
    return None if row is None else _from_row(row)


def by_root(conn: Connection, root: str) -> Workspace | None:
    row = conn.execute(select(workspaces_table).where(workspaces_table.c.root == root)).first()
    return None if row is None else _from_row(row)


def all_by_id(conn: Connection) -> list[Workspace]:
    rows = conn.execute(select(workspaces_table).order_by(workspaces_table.c.workspace_id))
    return [_from_row(row) for row in rows]


def add(conn: Connection, workspace: Workspace) -> None:
    try:
        conn.execute(insert(workspaces_table).values(**workspace.model_dump()))
    except IntegrityError as exc:
        raise RegisteredConcurrently(
            "conflict",
            f"workspace {workspace.workspace_id!r} or root {workspace.root} was registered by "
            "another process at the same time",
            path=workspace.root,
            details={"workspace_id": workspace.workspace_id, "root": workspace.root},
        ) from exc


def set_root(conn: Connection, workspace_id: str, root: str) -> None:
    """Point the registration at `root`; a root registered meanwhile by another writer (the
    unique constraint) is a `conflict`."""
    try:
        conn.execute(
            update(workspaces_table)
            .where(workspaces_table.c.workspace_id == workspace_id)
            .values(root=root)
        )
    except IntegrityError as exc:
        raise RegisteredConcurrently(
            "conflict",
            f"root {root} was registered by another process at the same time",
            path=root,
            details={"workspace_id": workspace_id, "root": root},
        ) from exc


def remove(conn: Connection, workspace_id: str) -> None:
    """Delete the row; a record that still refers to it (the foreign keys) is a `conflict`."""
    try:
        conn.execute(
            delete(workspaces_table).where(workspaces_table.c.workspace_id == workspace_id)
        )
    except IntegrityError as exc:
        raise ConflictError(
            "conflict",
            f"workspace {workspace_id!r} is still referenced by other records (runs, "
            "memories, ...); remove those first",
            details={"workspace_id": workspace_id},
        ) from exc
