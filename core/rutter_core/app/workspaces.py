"""Operations on the workspace registry: params and result models, and `WorkspaceOperations`.

Removal is the one operation that spans areas. Without `cascade`, a workspace that still has
runs, sessions or project memories is not removed: the counts belong to the runs, continuity and
memory services, and this layer asks them and deletes the registration in one write transaction,
so nothing can be added in between. With `cascade`, the same transaction deletes all of it
through those services, with the append-only guards lifted for its duration only
(`Store.append_only_lifted`), then purges the store so no deleted text stays in its files.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import StrictBool, StrictStr
from sqlalchemy.engine import Connection

from rutter_core.app.models import Params, Result
from rutter_core.kernel.errors import ConflictError, Hint, NotFoundError, RejectedError
from rutter_core.workspaces.model import (
    MachineMark,
    Workspace,
    machine_mark,
    validate_workspace_id,
)
from rutter_core.workspaces.project import named_project, normalize_remote
from rutter_core.workspaces.service import (
    ProjectChoice,
    delete_kept,
    delete_workspace,
    ensure_workspace,
    find_workspace_by_root,
    get_files_here,
    get_workspace,
    infer_workspace,
    kept_registrations,
    list_workspaces,
    move_workspace,
    other_locations,
    register_workspace,
    require_workspace,
    resolve_root,
    retire_workspace,
    set_workspace_project,
)

if TYPE_CHECKING:
    from rutter_core.app.facade import Rutter

__all__ = [
    "EnsureWorkspaceParams",
    "FindWorkspaceParams",
    "InferWorkspaceParams",
    "ListWorkspacesParams",
    "ListedWorkspace",
    "MoveWorkspaceParams",
    "MovedWorkspace",
    "ProjectChanged",
    "RegisterWorkspaceParams",
    "RegisteredWorkspace",
    "RemoveWorkspaceParams",
    "RemovedContents",
    "RemovedWorkspace",
    "SetWorkspaceProjectParams",
    "ShowWorkspaceParams",
    "Workspace",
    "WorkspaceList",
    "WorkspaceOperations",
]


class RegisterWorkspaceParams(Params):
    workspace_id: str
    root: str
    """An existing directory; stored resolved (realpath)."""
    cwd: str
    """The directory a relative `root` is taken from."""
    project: StrictStr | None = None
    """The project this is a location of, by name (a remote's URL form is normalised like a
    remote). Without it: the normalised `origin` remote of the repository at `root`, else a
    local project of its own."""


class SetWorkspaceProjectParams(Params):
    workspace_id: str
    project: StrictStr | None = None
    """The project's name (a remote's URL form is normalised like a remote)."""
    from_remote: StrictBool = False
    """Take the project from the repository's `origin` remote instead (`no_origin_remote`
    when it has none that names a project). Neither this nor `project`: a local project of
    its own again."""


class ListWorkspacesParams(Params):
    all: StrictBool = False
    """Every registration in the store. Without it: this machine's, those not yet taken by a
    machine, and the other machines' registrations of the projects registered here."""


class ShowWorkspaceParams(Params):
    workspace_id: str


class RemoveWorkspaceParams(Params):
    workspace_id: str
    cascade: StrictBool = False
    """Remove it with everything that belongs to it (runs, sessions, threads with their
    messages, notes and checkpoints, pinned revisions, project memories)."""


class MoveWorkspaceParams(Params):
    workspace_id: str
    root: str
    """The workspace's new directory: existing; stored resolved (realpath)."""
    cwd: str
    """The directory a relative `root` is taken from."""


class FindWorkspaceParams(Params):
    root: str
    """A directory's absolute path: the registration of exactly this root is looked up."""


class InferWorkspaceParams(Params):
    directory: str
    """A directory inside the workspace (the CLI's current directory)."""


class EnsureWorkspaceParams(Params):
    root: str
    """An editor folder's absolute path."""
    preferred_id: str
    """The folder's name: the ID is derived from it when the root is not registered yet."""


# The results are workspace registrations with one more field: their JSON is the registration's
# fields, then that field (`rutter workspace register/remove --json`).
class RegisteredWorkspace(Workspace, Result):
    created: bool
    """Whether this call registered it (False: it already was, with the same root)."""


class RemovedContents(Result):
    """How many records a removal deleted with the registration (all 0 without `cascade`)."""

    runs: int = 0
    missions: int = 0
    revisions: int = 0
    """Pinned instruction snapshot revisions."""
    sessions: int = 0
    threads: int = 0
    checkpoints: int = 0
    nodes: int = 0
    """Continuity nodes: each run's root or branch marker, and its checkpoints."""
    messages: int = 0
    notes: int = 0
    pins: int = 0
    pin_proposals: int = 0
    transcript_imports: int = 0
    """Records of which thread holds which imported agent transcript."""
    assemblies: int = 0
    """Stored audits of context assemblies of the workspace's runs."""
    project_memories: int = 0


class RemovedWorkspace(Workspace, Result):
    removed: Literal[True] = True
    cascade: bool
    kept_for_project: bool = False
    """True when records were made through this registration and its project has other
    registrations: they stay the project's (read through those), so the registration's row is
    kept without a location; its ID can be registered again only for the same project."""
    deleted: RemovedContents
    purged: bool
    """Whether the store's files were rewritten so that nothing deleted is left in them (False:
    a long reader kept that from completing; the next purge finishes it)."""


class MovedWorkspace(Workspace, Result):
    previous_root: str
    moved: bool
    """False when the workspace already had this root (nothing was written)."""


class ProjectChanged(Workspace, Result):
    previous_project_id: str
    changed: bool
    """False when the registration already was a location of this project (nothing written)."""


class ListedWorkspace(Workspace, Result):
    machine: MachineMark
    """Whose location it is: this machine's, another machine's (a location of the same project
    elsewhere, or with `all` any), or `unclaimed` (registered before machines were known: the
    first machine that looks its root up takes it)."""


class WorkspaceList(Result):
    machine_id: str
    """This machine's ID (docs/team.md, machines)."""
    workspaces: list[ListedWorkspace]
    """Sorted by ID."""


class WorkspaceOperations:
    def __init__(self, rutter: Rutter) -> None:
        self._rutter = rutter

    def register(self, params: RegisterWorkspaceParams) -> RegisteredWorkspace:
        """Idempotent for the same ID and root; an ID is bound to one root and a root to one
        ID (`conflict` otherwise)."""
        validate_workspace_id(params.workspace_id)
        cwd = Path(params.cwd)
        explicit = params.project is not None
        if params.project is not None:
            project: ProjectChoice | None = (named_project(params.project), "named")
        else:
            project = remote_project(resolve_root(params.root, cwd=cwd))
        workspace, created = register_workspace(
            self._rutter.store, params.workspace_id, params.root, cwd=cwd, project=project,
            explicit=explicit, machine=self._rutter.machine_id,
        )  # fmt: skip
        return RegisteredWorkspace(**workspace.model_dump(), created=created)

    def set_project(self, params: SetWorkspaceProjectParams) -> ProjectChanged:
        """Make the registration a location of another project: a name, its `origin` remote,
        or (neither) a local project of its own. Its records go with it."""
        if params.project is not None and params.from_remote:
            raise RejectedError(
                "invalid_project", "give a project name or take it from the remote, not both"
            )
        project: ProjectChoice | None = None
        if params.project is not None:
            project = (named_project(params.project), "named")
        elif params.from_remote:
            root = get_files_here(
                self._rutter.store, params.workspace_id, self._rutter.machine_id
            ).root
            project = remote_project(root)
            if project is None:
                raise NotFoundError(
                    "no_origin_remote",
                    f"the repository at {root} has no origin remote that names a project; give the "
                    "project's name instead",
                    path=root,
                    details={"workspace_id": params.workspace_id},
                )
        workspace, previous = set_workspace_project(
            self._rutter.store, params.workspace_id, project
        )
        return ProjectChanged(
            **workspace.model_dump(),
            previous_project_id=previous,
            changed=previous != workspace.project_id,
        )

    def list(self, params: ListWorkspacesParams | None = None) -> WorkspaceList:
        """The registrations, each marked with whose location it is (see `all`)."""
        machine = self._rutter.machine_id
        everything = list_workspaces(self._rutter.store)
        here = {w.project_id for w in everything if w.machine_id in (None, machine)}
        shown = [
            ListedWorkspace(**w.model_dump(), machine=machine_mark(w.machine_id, machine))
            for w in everything
            if (params is not None and params.all) or w.project_id in here
        ]
        return WorkspaceList(machine_id=machine, workspaces=shown)

    def show(self, params: ShowWorkspaceParams) -> Workspace:
        return get_workspace(self._rutter.store, params.workspace_id)

    def local(self, params: ShowWorkspaceParams) -> Workspace:
        """The registration, when its files are on this machine (this machine's, or not yet any
        machine's); `workspace_on_other_machine` for another machine's (docs/team.md#machines)."""
        return get_files_here(self._rutter.store, params.workspace_id, self._rutter.machine_id)

    def infer(self, params: InferWorkspaceParams) -> Workspace:
        """The deepest registered workspace containing the directory (`workspace_required`
        when none does)."""
        return infer_workspace(
            self._rutter.store, Path(params.directory), machine=self._rutter.machine_id
        )

    def find_by_root(self, params: FindWorkspaceParams) -> Workspace | None:
        """This machine's registration of exactly this (resolved) root, or None; registers
        nothing (one registered before machines were known becomes this machine's)."""
        return find_workspace_by_root(
            self._rutter.store, params.root, cwd=Path(params.root), machine=self._rutter.machine_id
        )

    def ensure(self, params: EnsureWorkspaceParams) -> Workspace:
        """This machine's registration of an editor folder, created under a free ID when there
        is none."""
        root = params.root
        machine = self._rutter.machine_id
        existing = find_workspace_by_root(self._rutter.store, root, cwd=Path(root), machine=machine)
        if existing is not None:
            return existing
        project = remote_project(resolve_root(root, cwd=Path(root)))
        return ensure_workspace(
            self._rutter.store, root, preferred_id=params.preferred_id, cwd=Path(root),
            project=project, machine=machine,
        )  # fmt: skip

    def move(self, params: MoveWorkspaceParams) -> MovedWorkspace:
        """Point the workspace at its new directory (moved or cloned elsewhere). Runs, memories
        and history keep the ID; each run's next discovery shows its drift against the new
        root as usual. `conflict` when another ID holds that root."""
        moved, previous = move_workspace(
            self._rutter.store, params.workspace_id, params.root, cwd=Path(params.cwd),
            machine=self._rutter.machine_id,
        )  # fmt: skip
        return MovedWorkspace(
            **moved.model_dump(), previous_root=previous, moved=previous != moved.root
        )

    def remove(self, params: RemoveWorkspaceParams) -> RemovedWorkspace:
        """Unregister (the directory is not touched). Without `cascade`: `conflict` while runs,
        sessions or project memories belong to it. With `cascade`: all of them are deleted with
        it in one transaction, and none is readable afterwards."""
        workspace_id = params.workspace_id
        store = self._rutter.store
        kept = False
        with store.purging_write() as purge:
            conn = purge.conn
            require_workspace(conn, workspace_id)
            others = other_locations(conn, workspace_id)
            # With no other location, the records kept for the project go with the last one.
            gone = [workspace_id, *([] if others else kept_registrations(conn, workspace_id))]
            if params.cascade:
                with store.append_only_lifted(conn):
                    deleted = _delete_all(conn, gone)
                removed = delete_workspace(conn, workspace_id)
                for each in gone[1:]:
                    delete_kept(conn, each)
            elif others:
                deleted = RemovedContents()
                kept = bool(any(_owned_counts(conn, workspace_id).values()))
                if kept:
                    removed = retire_workspace(conn, workspace_id)
                else:
                    removed = delete_workspace(conn, workspace_id)
            else:
                _refuse_while_owned(conn, workspace_id, gone)
                deleted = RemovedContents()
                removed = delete_workspace(conn, workspace_id)
        return RemovedWorkspace(
            **removed.model_dump(),
            cascade=params.cascade,
            kept_for_project=kept,
            deleted=deleted,
            purged=purge.purged,
        )


def remote_project(root: str) -> ProjectChoice | None:
    """The project the `origin` remote of the repository at `root` names, normalised (its
    credentials never leave this function), or None."""
    from rutter_core.continuity.service import read_origin_url

    url = read_origin_url(root)
    identity = None if url is None else normalize_remote(url)
    return None if identity is None else (identity, "remote")


def _owned_counts(conn: Connection, workspace_id: str) -> dict[str, int]:
    """How many runs, sessions, project memories and threads were made through it."""
    # Imported here: every other workspace command would otherwise pay for loading the areas.
    from rutter_core.continuity.service import count_sessions, count_threads_without_session
    from rutter_core.memory.service import count_project_memories
    from rutter_core.runs.service import count_runs

    return {
        "runs": count_runs(conn, workspace_id),
        "sessions": count_sessions(conn, workspace_id),
        "project_memories": count_project_memories(conn, workspace_id),
        "threads": count_threads_without_session(conn, workspace_id),
    }


def _refuse_while_owned(conn: Connection, workspace_id: str, gone: list[str]) -> None:
    """Runs, sessions and project memories belong to their project: while its last location
    has any (its own, or kept from removed registrations of the project: `gone`), it stays
    registered. Say how many of each there are, and both ways out."""
    counts = {"runs": 0, "sessions": 0, "project_memories": 0, "threads": 0}
    for each in gone:
        for name, count in _owned_counts(conn, each).items():
            counts[name] += count
    if not any(counts.values()):
        return
    nouns = {
        "runs": "run",
        "sessions": "session",
        "project_memories": "project memory",
        "threads": "thread",
    }
    held = [_counted(count, nouns[name]) for name, count in counts.items() if count]
    listed = held[0] if len(held) == 1 else f"{', '.join(held[:-1])} and {held[-1]}"
    raise ConflictError(
        "conflict",
        f"workspace {workspace_id!r} still has {listed}; it is removed only with them",
        details={"workspace_id": workspace_id, **counts},
        hint=Hint("move_or_cascade_workspace", {"workspace_id": workspace_id}),
    )


def _counted(count: int, noun: str) -> str:
    if count == 1:
        return f"1 {noun}"
    plural = noun[:-1] + "ies" if noun.endswith("y") else noun + "s"
    return f"{count} {plural}"


def _delete_all(conn: Connection, workspace_ids: list[str]) -> RemovedContents:
    """`_delete_contents` of each, summed."""
    total: dict[str, int] = {}
    for each in workspace_ids:
        for name, count in _delete_contents(conn, each).model_dump().items():
            total[name] = total.get(name, 0) + count
    return RemovedContents(**total)


def _delete_contents(conn: Connection, workspace_id: str) -> RemovedContents:
    """Delete everything of the workspace, in the order the tables refer to each other:
    continuity's nodes and thread contents name runs, runs name sessions and threads."""
    from rutter_core.assembly.service import remove_workspace_assemblies
    from rutter_core.candidates.service import remove_workspace_candidates
    from rutter_core.continuity.service import (
        remove_sessions_and_threads,
        remove_thread_contents,
    )
    from rutter_core.memory.service import remove_project_memories
    from rutter_core.runs.service import remove_workspace_runs

    # Resolved candidates are tombstones (no text): they go with the workspace, uncounted.
    remove_workspace_candidates(conn, workspace_id)
    contents = remove_thread_contents(conn, workspace_id)
    assemblies = remove_workspace_assemblies(conn, workspace_id)
    runs, revisions, missions = remove_workspace_runs(conn, workspace_id)
    sessions, threads = remove_sessions_and_threads(conn, workspace_id)
    return RemovedContents(
        runs=runs,
        missions=missions,
        revisions=revisions,
        sessions=sessions,
        threads=threads,
        project_memories=remove_project_memories(conn, workspace_id),
        assemblies=assemblies,
        **contents,
    )
