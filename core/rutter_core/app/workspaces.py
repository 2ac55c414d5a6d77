"""Operations on the workspace registry: params and result models, and `WorkspaceOperations`.

Removal is the one operation that spans areas: a workspace that still has project memories or
runs is not removed, and those counts belong to the memory and runs services. This layer asks
them and deletes the registration in one write transaction, so nothing can be added in between.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

from sqlalchemy.engine import Connection

from rutter_core.app.models import Params, Result
from rutter_core.kernel.errors import ConflictError, Hint
from rutter_core.workspaces.model import Workspace
from rutter_core.workspaces.service import (
    delete_workspace,
    ensure_workspace,
    get_workspace,
    infer_workspace,
    list_workspaces,
    register_workspace,
)

if TYPE_CHECKING:
    from rutter_core.app.facade import Rutter

__all__ = [
    "EnsureWorkspaceParams",
    "InferWorkspaceParams",
    "ListWorkspacesParams",
    "RegisterWorkspaceParams",
    "RegisteredWorkspace",
    "RemoveWorkspaceParams",
    "RemovedWorkspace",
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


class ListWorkspacesParams(Params):
    pass


class ShowWorkspaceParams(Params):
    workspace_id: str


class RemoveWorkspaceParams(Params):
    workspace_id: str


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


class RemovedWorkspace(Workspace, Result):
    removed: Literal[True] = True


class WorkspaceList(Result):
    workspaces: list[Workspace]
    """Sorted by ID."""


class WorkspaceOperations:
    def __init__(self, rutter: Rutter) -> None:
        self._rutter = rutter

    def register(self, params: RegisterWorkspaceParams) -> RegisteredWorkspace:
        """Idempotent for the same ID and root; an ID is bound to one root and a root to one
        ID (`conflict` otherwise)."""
        workspace, created = register_workspace(
            self._rutter.store, params.workspace_id, params.root, cwd=Path(params.cwd)
        )
        return RegisteredWorkspace(**workspace.model_dump(), created=created)

    def list(self, params: ListWorkspacesParams | None = None) -> WorkspaceList:
        return WorkspaceList(workspaces=list_workspaces(self._rutter.store))

    def show(self, params: ShowWorkspaceParams) -> Workspace:
        return get_workspace(self._rutter.store, params.workspace_id)

    def infer(self, params: InferWorkspaceParams) -> Workspace:
        """The deepest registered workspace containing the directory (`workspace_required`
        when none does)."""
        return infer_workspace(self._rutter.store, Path(params.directory))

    def ensure(self, params: EnsureWorkspaceParams) -> Workspace:
        """The registration of an editor folder, created under a free ID when there is none."""
        root = params.root
        return ensure_workspace(
            self._rutter.store, root, preferred_id=params.preferred_id, cwd=Path(root)
        )

    def remove(self, params: RemoveWorkspaceParams) -> RemovedWorkspace:
        """Unregister (the directory is not touched); `conflict` while project memories or
        runs belong to it."""
        workspace_id = params.workspace_id
        with self._rutter.store.write() as conn:
            _refuse_while_owned(conn, workspace_id)
            removed = delete_workspace(conn, workspace_id)
        return RemovedWorkspace(**removed.model_dump())


def _refuse_while_owned(conn: Connection, workspace_id: str) -> None:
    """Project memories belong to their workspace, and runs keep their pinned instructions for
    good: a workspace with either stays registered. Say how many there are and what to do."""
    # Imported here: every other workspace command would otherwise pay for loading both areas.
    from rutter_core.memory.service import count_project_memories
    from rutter_core.runs.service import count_runs

    # An unregistered ID has nothing (foreign keys): it passes here and `delete_workspace`
    # says `not_registered`.
    memories = count_project_memories(conn, workspace_id)
    if memories:
        noun = "memory" if memories == 1 else "memories"
        raise ConflictError(
            "conflict",
            f"workspace {workspace_id!r} still has {memories} project {noun}",
            details={"workspace_id": workspace_id, "project_memories": memories},
            hint=Hint("delete_project_memories", {"workspace_id": workspace_id}),
        )
    runs = count_runs(conn, workspace_id)
    if runs:
        noun = "run" if runs == 1 else "runs"
        raise ConflictError(
            "conflict",
            f"workspace {workspace_id!r} has {runs} {noun}; runs and their pinned instructions "
            "are kept for good, so a workspace with runs cannot be removed",
            details={"workspace_id": workspace_id, "runs": runs},
            hint=Hint("list_runs", {"workspace_id": workspace_id}),
        )
