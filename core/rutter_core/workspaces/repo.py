"""The `workspaces` and `projects` tables: the only module that reads or writes them.

Every function works inside the caller's transaction (`Connection`), so a service, or the
application layer orchestrating several areas, decides what one unit of work holds.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, func, insert, or_, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from rutter_core.kernel.errors import ConflictError
from rutter_core.kernel.ids import may_name_a_record
from rutter_core.store.schema import projects as projects_table
from rutter_core.store.schema import workspaces as workspaces_table
from rutter_core.workspaces.model import Workspace
from rutter_core.workspaces.project import ProjectSource, local_project


class RegisteredConcurrently(ConflictError):
    """The ID or the root was registered by another writer between our check and our insert
    (databases without SQLite's write lock): the unique constraints refused the insert."""


def _from_row(row: Any) -> Workspace:
    # A row written without a project (by hand, outside rutter) reads as its own local one.
    local = row.project_id is None
    return Workspace(
        workspace_id=str(row.workspace_id),
        root=str(row.root),
        created_at=str(row.created_at),
        project_id=local_project(str(row.workspace_id)) if local else str(row.project_id),
        project_source="local" if local else row.source,
        machine_id=None if row.machine_id is None else str(row.machine_id),
    )


def _joined() -> Any:
    """Live registrations (with a root) and their projects' sources."""
    return (
        select(
            workspaces_table.c.workspace_id,
            workspaces_table.c.root,
            workspaces_table.c.created_at,
            workspaces_table.c.project_id,
            workspaces_table.c.machine_id,
            projects_table.c.source,
        )
        .join(projects_table, projects_table.c.project_id == workspaces_table.c.project_id)
        .where(workspaces_table.c.root.is_not(None))
    )


def retired_project(conn: Connection, workspace_id: str) -> str | None:
    """The project of a registration kept without a location (`retire`), or None when
    `workspace_id` is live or unknown."""
    if not may_name_a_record(workspace_id):
        return None
    row = conn.execute(
        select(workspaces_table.c.project_id).where(
            workspaces_table.c.workspace_id == workspace_id, workspaces_table.c.root.is_(None)
        )
    ).first()
    return None if row is None else str(row.project_id)


def retire(conn: Connection, workspace_id: str) -> None:
    """Keep the registration's row, for the records made through it, without a location."""
    conn.execute(
        update(workspaces_table)
        .where(workspaces_table.c.workspace_id == workspace_id)
        .values(root=None)
    )


def live_members(conn: Connection, project_id: str) -> list[str]:
    """The IDs of the registrations of `project_id` that have a location, sorted."""
    rows = conn.execute(
        select(workspaces_table.c.workspace_id)
        .where(workspaces_table.c.project_id == project_id, workspaces_table.c.root.is_not(None))
        .order_by(workspaces_table.c.workspace_id)
    )
    return [str(row.workspace_id) for row in rows]


def by_id(conn: Connection, workspace_id: str) -> Workspace | None:
    if not may_name_a_record(workspace_id):
        return None
    row = conn.execute(_joined().where(workspaces_table.c.workspace_id == workspace_id)).first()
    return None if row is None else _from_row(row)


def _on(machine: str) -> Any:
    """Registrations of `machine`, and those registered before machines were known (NULL:
    the first machine that looks one up takes it, `claim`)."""
    return or_(workspaces_table.c.machine_id == machine, workspaces_table.c.machine_id.is_(None))


def by_root(conn: Connection, root: str, machine: str) -> Workspace | None:
    """The registration of `root` on `machine` (or one not yet taken by any machine)."""
    row = conn.execute(
        _joined()
        .where(workspaces_table.c.root == root, _on(machine))
        # This machine's own first: an old row at the same root is another's by then.
        .order_by(workspaces_table.c.machine_id.is_(None))
    ).first()
    return None if row is None else _from_row(row)


def on_machine(conn: Connection, machine: str) -> list[Workspace]:
    """The live registrations of `machine`, and those not yet taken by any machine, by ID."""
    rows = conn.execute(_joined().where(_on(machine)).order_by(workspaces_table.c.workspace_id))
    return [_from_row(row) for row in rows]


def claim(conn: Connection, workspace_id: str, machine: str) -> bool:
    """Make a registration that has no machine yet `machine`'s; False when it has one by now."""
    done = conn.execute(
        update(workspaces_table)
        .where(
            workspaces_table.c.workspace_id == workspace_id,
            workspaces_table.c.machine_id.is_(None),
        )
        .values(machine_id=machine)
    )
    return bool(done.rowcount)


def all_by_id(conn: Connection) -> list[Workspace]:
    rows = conn.execute(_joined().order_by(workspaces_table.c.workspace_id))
    return [_from_row(row) for row in rows]


def project_members(conn: Connection, project_id: str) -> list[str]:
    """The IDs of every registration of `project_id` (kept ones without a location too),
    sorted."""
    rows = conn.execute(
        select(workspaces_table.c.workspace_id)
        .where(workspaces_table.c.project_id == project_id)
        .order_by(workspaces_table.c.workspace_id)
    )
    return [str(row.workspace_id) for row in rows]


def ensure_project(
    conn: Connection, project_id: str, source: ProjectSource, created_at: str
) -> None:
    """The project's row, inserted when it is new (a project keeps the source it began with)."""
    found = conn.execute(
        select(projects_table.c.project_id).where(projects_table.c.project_id == project_id)
    ).first()
    if found is None:
        conn.execute(
            insert(projects_table).values(
                project_id=project_id, source=source, created_at=created_at
            )
        )


def drop_project_if_unused(conn: Connection, project_id: str) -> None:
    """Delete the project's row once no registration names it (its records are the
    registrations'; a later registration of the same identity begins it again)."""
    used = conn.execute(
        select(func.count())
        .select_from(workspaces_table)
        .where(workspaces_table.c.project_id == project_id)
    ).scalar_one()
    if not used:
        conn.execute(delete(projects_table).where(projects_table.c.project_id == project_id))


def set_project(conn: Connection, workspace_id: str, project_id: str) -> None:
    conn.execute(
        update(workspaces_table)
        .where(workspaces_table.c.workspace_id == workspace_id)
        .values(project_id=project_id)
    )


def add(conn: Connection, workspace: Workspace) -> None:
    try:
        ensure_project(conn, workspace.project_id, workspace.project_source, workspace.created_at)
        conn.execute(
            insert(workspaces_table).values(
                workspace_id=workspace.workspace_id,
                root=workspace.root,
                created_at=workspace.created_at,
                project_id=workspace.project_id,
                machine_id=workspace.machine_id,
            )
        )
    except IntegrityError as exc:
        raise RegisteredConcurrently(
            "conflict",
            f"workspace {workspace.workspace_id!r} or root {workspace.root} was registered by "
            "another process at the same time",
            path=workspace.root,
            details={"workspace_id": workspace.workspace_id, "root": workspace.root},
        ) from exc


def set_root(conn: Connection, workspace_id: str, root: str, machine: str) -> None:
    """Point the registration at `root` on `machine` (a location is where its root was
    resolved); a root registered meanwhile by another writer on that machine (the unique
    constraint) is a `conflict`."""
    try:
        conn.execute(
            update(workspaces_table)
            .where(workspaces_table.c.workspace_id == workspace_id)
            .values(root=root, machine_id=machine)
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
        project_id = conn.execute(
            select(workspaces_table.c.project_id).where(
                workspaces_table.c.workspace_id == workspace_id
            )
        ).scalar_one_or_none()
        conn.execute(
            delete(workspaces_table).where(workspaces_table.c.workspace_id == workspace_id)
        )
        if project_id is not None:
            drop_project_if_unused(conn, str(project_id))
    except IntegrityError as exc:
        raise ConflictError(
            "conflict",
            f"workspace {workspace_id!r} is still referenced by other records (runs, "
            "memories, ...); remove those first",
            details={"workspace_id": workspace_id},
        ) from exc
