"""Workspace registry (docs/reference/workspaces.md): register, list, get, infer, ensure, delete.

A workspace is an operator-chosen ID bound to one resolved directory on one machine. Every
discovery is confined to a registered root, so roots are stored as realpaths and compared
component-wise. Whatever looks a registration up by its directory (a root, the current
directory, an editor folder) is given this machine's ID (`machine`: `workspaces.machine`) and
sees only that machine's registrations, and those registered before machines were known,
which the first machine to look one up takes (`claim`, under the write lock).
Only `workspaces.repo` touches the table; other areas check a workspace through
`find_workspace` / `require_workspace` inside their own transaction. Removal refuses while
other areas' records belong to the workspace: those checks are theirs, so the application
layer (`app.workspaces`) runs them and `delete_workspace` in one transaction.

Why one module: registering, moving, reviving and looking a registration up by its directory
keep the same invariants together (one root per machine and one ID per root there, a
registration from before machines taken by exactly one machine under the write lock, a kept
registration revived only for its project); split, each half would have to restate the rules
the other enforces.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePath

from sqlalchemy.engine import Connection

from rutter_core.kernel.clock import now_rfc3339
from rutter_core.kernel.errors import ConflictError, Hint, NotFoundError, RejectedError, UsageError
from rutter_core.kernel.ids import may_name_a_record
from rutter_core.store import Store
from rutter_core.workspaces import repo
from rutter_core.workspaces.model import (
    Workspace,
    numbered_id,
    validate_workspace_id,
    workspace_id_from_name,
)
from rutter_core.workspaces.project import ProjectSource, local_project

ProjectChoice = tuple[str, ProjectSource]
"""A project identity and where it came from (`remote` or `named`); None where a function
takes one means the registration's own local identity."""

__all__ = [
    "Workspace",
    "delete_kept",
    "delete_workspace",
    "ensure_workspace",
    "files_here",
    "find_workspace",
    "find_workspace_by_root",
    "get_files_here",
    "get_workspace",
    "infer_workspace",
    "kept_registrations",
    "list_workspaces",
    "location_of",
    "move_workspace",
    "other_locations",
    "project_workspace_ids",
    "register_workspace",
    "require_workspace",
    "resolve_root",
    "retire_workspace",
    "set_workspace_project",
    "workspace_id_from_name",
]

_MAX_SUFFIX_ATTEMPTS = 1000


def resolve_root(root: str | Path, *, cwd: Path) -> str:
    """The realpath of an existing directory; relative ROOTs are taken relative to `cwd`.

    A missing directory is `not_found` (exit 5); something that exists but is not a
    directory, or a path that cannot be resolved, is `invalid_root` (exit 3).
    """
    text = os.fspath(root)
    if not text or "\0" in text:
        raise RejectedError("invalid_root", f"invalid workspace root {text!r}", path=text)
    candidate = Path(text).expanduser()
    if not candidate.is_absolute():
        candidate = cwd / candidate
    try:
        resolved = os.path.realpath(candidate, strict=True)
    except FileNotFoundError as exc:
        raise NotFoundError(
            "not_found",
            f"workspace root {candidate} does not exist; create it or pass an existing directory",
            path=str(candidate),
        ) from exc
    except OSError as exc:  # symlink loop, permission denied on a parent, ...
        raise RejectedError(
            "invalid_root",
            f"cannot resolve workspace root {candidate}: {exc.strerror or exc}",
            path=str(candidate),
        ) from exc
    if not Path(resolved).is_dir():
        raise RejectedError(
            "invalid_root",
            f"workspace root {candidate} is not a directory; pass the project directory",
            path=str(candidate),
        )
    return resolved


def find_workspace(conn: Connection, workspace_id: str) -> Workspace | None:
    """The registration of `workspace_id` inside the caller's transaction, or None."""
    return repo.by_id(conn, workspace_id)


def require_workspace(conn: Connection, workspace_id: str) -> Workspace:
    """The registration of `workspace_id` inside the caller's transaction (`not_registered`
    when there is none): other areas check their workspace through this, not its table."""
    found = repo.by_id(conn, workspace_id)
    if found is None:
        raise _not_registered(workspace_id)
    return found


def _not_registered(workspace_id: str) -> NotFoundError:
    return NotFoundError(
        "not_registered",
        f"no workspace {workspace_id!r} is registered",
        details={"workspace_id": workspace_id},
        hint=Hint("register_workspace", {"workspace_id": workspace_id}),
    )


def project_workspace_ids(conn: Connection, workspace_id: str) -> tuple[str, ...]:
    """Every registration of the project `workspace_id` is a location of (itself included),
    sorted, inside the caller's transaction: what the project's records are read across. An
    unregistered ID is just itself (it has no records; whoever needs it registered checks),
    one that could name no record (`may_name_a_record`) none."""
    if not may_name_a_record(workspace_id):
        return ()
    found = repo.by_id(conn, workspace_id)
    project_id = repo.retired_project(conn, workspace_id) if found is None else found.project_id
    if project_id is None:
        return (workspace_id,)
    return tuple(repo.project_members(conn, project_id))


def register_workspace(
    store: Store,
    workspace_id: str,
    root: str | Path,
    *,
    cwd: Path,
    machine: str,
    project: ProjectChoice | None = None,
    explicit: bool = False,
) -> tuple[Workspace, bool]:
    """Register `workspace_id` at `root` on `machine` as a location of `project` (None: a local
    project of its own); returns the workspace and whether it is new.

    Idempotent for the same ID, root and machine (the project it has is kept, unless `explicit`
    names another: `conflict`, changed only by `set_workspace_project`). An ID is bound to one
    root on one machine, and a root on a machine to one ID; another machine registers the same
    path under an ID of its own.
    """
    validate_workspace_id(workspace_id)
    resolved = resolve_root(root, cwd=cwd)
    try:
        return _register_resolved(
            store, workspace_id, resolved, project, explicit=explicit, machine=machine
        )
    except repo.RegisteredConcurrently:
        # The SQLite write lock makes check-then-insert atomic; elsewhere (PostgreSQL) another
        # writer can insert in between. Its row is visible now, so checking again decides.
        return _register_resolved(
            store, workspace_id, resolved, project, explicit=explicit, machine=machine
        )


def _register_resolved(
    store: Store,
    workspace_id: str,
    resolved: str,
    project: ProjectChoice | None,
    *,
    explicit: bool,
    machine: str,
) -> tuple[Workspace, bool]:
    with store.write() as conn:
        existing = repo.by_id(conn, workspace_id)
        kept = None if existing is not None else repo.retired_project(conn, workspace_id)
        if kept is not None:
            return _revive(conn, workspace_id, kept, resolved, project, machine)
        if existing is not None and existing.machine_id not in (None, machine):
            raise ConflictError(
                "conflict",
                f"workspace {workspace_id!r} is another machine's registration",
                path=resolved,
                details={"workspace_id": workspace_id, "other_machine": True},
                hint=Hint("choose_another_id", {"workspace_id": workspace_id}),
            )
        if existing is not None:
            if existing.root == resolved:
                if explicit and project is not None and project[0] != existing.project_id:
                    raise ConflictError(
                        "conflict",
                        f"workspace {workspace_id!r} is registered as a location of another "
                        "project",
                        path=resolved,
                        details={"workspace_id": workspace_id, "project_id": existing.project_id},
                        hint=Hint("set_workspace_project", {"workspace_id": workspace_id}),
                    )
                return _claimed(conn, existing, machine), False
            raise ConflictError(
                "conflict",
                f"workspace {workspace_id!r} is already registered with root {existing.root}",
                path=resolved,
                details={"workspace_id": workspace_id, "existing_root": existing.root},
                hint=Hint("move_workspace_or_choose_another_id", {"workspace_id": workspace_id}),
            )
        holder = repo.by_root(conn, resolved, machine)
        if holder is not None:
            raise _root_taken(resolved, holder.workspace_id)
        project_id, source = project or (local_project(workspace_id), "local")
        created = Workspace(
            workspace_id=workspace_id,
            root=resolved,
            created_at=now_rfc3339(),
            project_id=project_id,
            project_source=source,
            machine_id=machine,
        )
        repo.add(conn, created)
        return created, True


def _claimed(conn: Connection, found: Workspace, machine: str) -> Workspace:
    """`found`, made `machine`'s when it has no machine yet (inside a write transaction)."""
    if found.machine_id is not None:
        return found
    repo.claim(conn, found.workspace_id, machine)
    return found.model_copy(update={"machine_id": machine})


def _revive(
    conn: Connection,
    workspace_id: str,
    kept: str,
    resolved: str,
    project: ProjectChoice | None,
    machine: str,
) -> tuple[Workspace, bool]:
    """Register again an ID kept without a location for the records made through it (of
    project `kept`): only as a location of the same project (they are that project's)."""
    wanted = (project or (local_project(workspace_id), "local"))[0]
    if wanted != kept:
        raise ConflictError(
            "conflict",
            f"workspace {workspace_id!r} was removed from a project that keeps records made "
            "through it; register it again only as a location of that project",
            path=resolved,
            details={"workspace_id": workspace_id, "project_id": kept},
            hint=Hint("move_workspace_or_choose_another_id", {"workspace_id": workspace_id}),
        )
    holder = repo.by_root(conn, resolved, machine)
    if holder is not None:
        raise _root_taken(resolved, holder.workspace_id)
    repo.set_root(conn, workspace_id, resolved, machine)
    revived = repo.by_id(conn, workspace_id)
    assert revived is not None  # written in this transaction
    return revived, True


def location_of(conn: Connection, workspace_id: str, machine: str | None = None) -> Workspace:
    """The registration whose files stand for `workspace_id`'s: itself, or, for one kept
    without a location (removed while its project had others), its project's first live
    registration by ID, `machine`'s first when given; `not_registered` when there is
    neither."""
    found = repo.by_id(conn, workspace_id)
    if found is not None:
        return found
    project_id = repo.retired_project(conn, workspace_id)
    live = [
        each
        for member in ([] if project_id is None else repo.live_members(conn, project_id))
        if (each := repo.by_id(conn, member)) is not None
    ]
    if live:
        return min(live, key=lambda each: each.machine_id != machine)  # stable: by ID else
    raise _not_registered(workspace_id)


def files_here(
    conn: Connection, workspace_id: str, machine: str, *, named: bool = True
) -> Workspace:
    """The registration whose root is read on `machine` for `workspace_id`: itself when it is
    `machine`'s (or not yet any machine's: read as it is, taken only by a lookup of its
    directory), or, for one kept without a location, its project's live location (`machine`'s
    first). A registration of another machine has its root on that machine, so it is never
    read here: when `named` (the person gave its ID) it is refused, `workspace_on_other_machine`;
    otherwise (a record's registration: a run's, a node's, a thread's) this machine's first
    registration of the same project by ID stands for it, and without one it is refused too."""
    found = location_of(conn, workspace_id, machine)
    if found.machine_id in (None, machine):
        return found
    mine = [
        each
        for each in repo.on_machine(conn, machine)
        if each.project_id == found.project_id and each.machine_id == machine
    ]
    if mine and not (named and found.workspace_id == workspace_id):
        return mine[0]
    raise _on_other_machine(workspace_id, found.project_id, [each.workspace_id for each in mine])


def _on_other_machine(workspace_id: str, project_id: str, mine: list[str]) -> UsageError:
    """`workspace_id` is a location on another machine: its files are not here. Names this
    machine's registrations of the project, never the other machine's root."""
    return UsageError(
        "workspace_on_other_machine",
        f"workspace {workspace_id!r} is another machine's registration: its files are on that "
        "machine, not this one",
        details={
            "workspace_id": workspace_id,
            "project_id": project_id,
            "this_machine_workspace_ids": mine,
        },
        hint=Hint(
            "use_this_machine_workspace",
            {"workspace_id": workspace_id, "this_machine_workspace_id": mine[0] if mine else None},
        ),
    )


def get_files_here(store: Store, workspace_id: str, machine: str) -> Workspace:
    """`files_here` for a workspace the person named, in a read transaction of its own."""
    with store.read() as conn:
        return files_here(conn, workspace_id, machine)


def other_locations(conn: Connection, workspace_id: str) -> list[str]:
    """The other registrations of `workspace_id`'s project that have a location (live)."""
    found = require_workspace(conn, workspace_id)
    return [w for w in repo.live_members(conn, found.project_id) if w != workspace_id]


def kept_registrations(conn: Connection, workspace_id: str) -> list[str]:
    """The registrations of `workspace_id`'s project kept without a location (removed while
    others were live, for the records made through them)."""
    found = require_workspace(conn, workspace_id)
    live = set(repo.live_members(conn, found.project_id))
    return [w for w in repo.project_members(conn, found.project_id) if w not in live]


def retire_workspace(conn: Connection, workspace_id: str) -> Workspace:
    """Remove the location of `workspace_id` but keep its row (the records made through it
    stay its project's, read through the project's other registrations), in the caller's
    transaction. Its ID and root read as unregistered from then on."""
    found = require_workspace(conn, workspace_id)
    repo.retire(conn, workspace_id)
    return found


def delete_kept(conn: Connection, workspace_id: str) -> None:
    """Delete the row of a registration kept without a location, once its records are gone
    (`workspace remove --cascade` of its project's last location)."""
    project_id = repo.retired_project(conn, workspace_id)
    if project_id is not None:
        repo.remove(conn, workspace_id)


def set_workspace_project(
    store: Store, workspace_id: str, project: ProjectChoice | None
) -> tuple[Workspace, str]:
    """Make `workspace_id` a location of `project` (None: its own local project again); returns
    the registration and the project it was a location of. The records made through it go with
    it (they are the registration's, read across its project). A project no registration names
    any more is forgotten. Setting the project it has writes nothing."""
    validate_workspace_id(workspace_id)
    with store.write() as conn:
        existing = require_workspace(conn, workspace_id)
        project_id, source = project or (local_project(workspace_id), "local")
        if existing.project_id == project_id:
            return existing, existing.project_id
        repo.ensure_project(conn, project_id, source, now_rfc3339())
        repo.set_project(conn, workspace_id, project_id)
        repo.drop_project_if_unused(conn, existing.project_id)
        updated = repo.by_id(conn, workspace_id)
        assert updated is not None  # written in this transaction
        return updated, existing.project_id


def _root_taken(root: str, holder_id: str, *, moving: str | None = None) -> ConflictError:
    """`root` is registered as `holder_id` (one root, one ID): use that ID, or free the root."""
    details: dict[str, str] = {"workspace_id": holder_id, "root": root}
    if moving is not None:
        details["moving"] = moving
    return ConflictError(
        "conflict",
        f"root {root} is already registered as workspace {holder_id!r}",
        path=root,
        details=details,
        hint=Hint("use_or_remove_holder", {"workspace_id": holder_id}),
    )


def move_workspace(
    store: Store, workspace_id: str, new_root: str | Path, *, cwd: Path, machine: str
) -> tuple[Workspace, str]:
    """Point `workspace_id` at `new_root` on `machine` (its directory moved or was cloned
    elsewhere); returns the registration and the root it had. Runs, memories and history keep
    the ID: discovery reads the new root from then on. `new_root` must be an existing
    directory of this machine, stored resolved, and the registration becomes this machine's
    location; a root registered on this machine to another ID is a `conflict`. Moving to the
    root it has on this machine writes nothing.
    """
    validate_workspace_id(workspace_id)
    resolved = resolve_root(new_root, cwd=cwd)
    with store.write() as conn:
        existing = require_workspace(conn, workspace_id)
        if existing.root == resolved and existing.machine_id in (None, machine):
            return _claimed(conn, existing, machine), existing.root
        holder = repo.by_root(conn, resolved, machine)
        if holder is not None and holder.workspace_id != workspace_id:
            raise _root_taken(resolved, holder.workspace_id, moving=workspace_id)
        repo.set_root(conn, workspace_id, resolved, machine)
        return existing.model_copy(update={"root": resolved, "machine_id": machine}), (
            existing.root
        )


def list_workspaces(store: Store) -> list[Workspace]:
    with store.read() as conn:
        return repo.all_by_id(conn)


def get_workspace(store: Store, workspace_id: str) -> Workspace:
    with store.read() as conn:
        return require_workspace(conn, workspace_id)


def find_workspace_by_root(
    store: Store, root: str | Path, *, cwd: Path, machine: str
) -> Workspace | None:
    """The registration of exactly this directory on `machine`, if any (the language server
    reuses it); one registered before machines were known becomes this machine's."""
    resolved = resolve_root(root, cwd=cwd)
    with store.read() as conn:
        found = repo.by_root(conn, resolved, machine)
    return None if found is None else _take(store, found, machine)


def _take(store: Store, found: Workspace, machine: str) -> Workspace | None:
    """`found`, a registration looked up by its directory on `machine`: when it has no machine
    yet, this machine takes it under the write lock, unless another took it first (None then:
    it is that machine's location now)."""
    if found.machine_id is not None:
        return found
    with store.write() as conn:
        if repo.claim(conn, found.workspace_id, machine):
            return found.model_copy(update={"machine_id": machine})
        again = repo.by_id(conn, found.workspace_id)
    return again if again is not None and again.machine_id == machine else None


def delete_workspace(conn: Connection, workspace_id: str) -> Workspace:
    """Unregister inside the caller's transaction; `not_registered` when there is nothing to
    delete, `conflict` while records of other areas still refer to it (their foreign keys).

    The caller runs the other areas' refusals (memories, runs) in the same transaction first,
    so they can say how many records there are and what to do.
    """
    found = require_workspace(conn, workspace_id)
    repo.remove(conn, workspace_id)
    return found


def _contains(root: str, path: str) -> bool:
    # Component-wise and case-folded where the platform is: /a/bc is not inside /a/b.
    return PurePath(os.path.normcase(path)).is_relative_to(os.path.normcase(root))


def infer_workspace(store: Store, cwd: Path, *, machine: str) -> Workspace:
    """The deepest workspace registered on `machine` whose root contains realpath(`cwd`)."""
    here = os.path.realpath(cwd)
    with store.read() as conn:
        registered = repo.on_machine(conn, machine)
    matches = [ws for ws in registered if _contains(ws.root, here)]
    while matches:
        deepest = max(matches, key=lambda ws: len(PurePath(ws.root).parts))
        taken = _take(store, deepest, machine)
        if taken is not None:
            return taken
        matches.remove(deepest)  # another machine took it just now
    raise UsageError(
        "workspace_required",
        f"no workspace registered on this machine contains {here}",
        path=here,
        hint=Hint("choose_workspace"),
    )


# -- the language server's folder registration (docs/reference/workspaces.md)
# -----------------------------


def ensure_workspace(
    store: Store,
    root: str | Path,
    *,
    preferred_id: str,
    cwd: Path,
    machine: str,
    project: ProjectChoice | None = None,
) -> Workspace:
    """The registration of `root` on `machine`, creating it when there is none.

    An existing registration of the same (resolved) root on this machine is reused whatever
    its ID. Otherwise the ID is `workspace_id_from_name(preferred_id)`, made unique with a
    numeric suffix (`demo`, `demo-2`, `demo-3`, ...) when another root, or another machine,
    already holds it. Safe against a concurrent registration of the same root by another
    process.
    """
    resolved = resolve_root(root, cwd=cwd)
    existing = find_workspace_by_root(store, resolved, cwd=cwd, machine=machine)
    if existing is not None:
        return existing
    base = workspace_id_from_name(preferred_id)
    for number in range(1, _MAX_SUFFIX_ATTEMPTS + 1):
        candidate = numbered_id(base, number)
        try:
            workspace, _created = register_workspace(
                store, candidate, resolved, cwd=cwd, project=project, machine=machine
            )
        except ConflictError as exc:
            if exc.details.get("root") == resolved:  # registered meanwhile under another ID
                holder = find_workspace_by_root(store, resolved, cwd=cwd, machine=machine)
                if holder is not None:
                    return holder
            continue  # the ID belongs to another root: try the next suffix
        return workspace
    raise ConflictError(
        "conflict",
        f"could not find a free workspace ID for {resolved} (tried {base} to "
        f"{numbered_id(base, _MAX_SUFFIX_ATTEMPTS)})",
        path=resolved,
        details={"preferred_id": base},
        hint=Hint("register_workspace"),
    )
