"""Operations on effective instructions: which instruction files apply to a target, in order,
and why (`EffectiveInstructionsParams` → the `project_instruction_snapshot.v1` `Snapshot`).

`effective` is the whole operation, in three steps that are public on their own: the
workspace's registration (`workspace`), discovery's walk (`stack`), and the snapshot of the walk
(`snapshot`). A caller that answers the same question many times a second (the language server)
keeps what it can between the steps (the registration, the encoded snapshot of an unchanged
stack) and still runs every rule here and in discovery, never a copy of them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Final

from pydantic import Field, model_validator

from rutter_core.app.models import Params
from rutter_core.discovery.assemble import snapshot_of
from rutter_core.discovery.snapshot import Snapshot
from rutter_core.discovery.stack import Stack
from rutter_core.discovery.targets import typed_target
from rutter_core.discovery.walk import SharedLevels, discover_stack
from rutter_core.kernel.errors import Hint, RutterError
from rutter_core.workspaces.service import Workspace, get_files_here, infer_workspace

if TYPE_CHECKING:
    from rutter_core.app.facade import Rutter

__all__ = [
    "MAX_BATCH_TARGETS",
    "EffectiveInstructionsBatchParams",
    "EffectiveInstructionsParams",
    "InstructionOperations",
    "Snapshot",
    "Stack",
    "Workspace",
]


class EffectiveInstructionsParams(Params):
    target: str
    """A file or directory (need not exist yet), as typed: relative to `directory` when that
    is inside the workspace, else workspace-relative, or absolute inside the root
    (docs/reference/workspaces.md; `typed_target`)."""
    workspace_id: str | None = None
    """The registered workspace; None: the deepest one containing `directory`."""
    directory: str | None = None
    """The surface's working directory (the CLI's): picks the workspace without
    `workspace_id`, and a relative `target` is resolved against it when it is inside the
    workspace."""

    @model_validator(mode="after")
    def _names_a_workspace(self) -> EffectiveInstructionsParams:
        if self.workspace_id is None and self.directory is None:
            raise ValueError("give workspace_id, or a directory inside the workspace")
        return self


MAX_BATCH_TARGETS: Final = 100_000
"""Targets one batch may ask about: a bound on the work a wrong input file can start."""


class EffectiveInstructionsBatchParams(Params):
    """Many targets of one workspace, answered in one pass (`effective_each`)."""

    targets: list[str] = Field(max_length=MAX_BATCH_TARGETS)
    """Workspace-relative paths, as for `EffectiveInstructionsParams.target`."""
    workspace_id: str | None = None
    directory: str | None = None

    @model_validator(mode="after")
    def _names_a_workspace(self) -> EffectiveInstructionsBatchParams:
        if self.workspace_id is None and self.directory is None:
            raise ValueError("give workspace_id, or a directory inside the workspace")
        return self


class InstructionOperations:
    def __init__(self, rutter: Rutter) -> None:
        self._rutter = rutter

    def effective(self, params: EffectiveInstructionsParams) -> Snapshot:
        """The snapshot for `params.target` as it is on disk now. Fails closed with a typed
        error (docs/reference/discovery.md, docs/reference/errors.md): `not_registered`,
        `workspace_required`, `invalid_utf8`, …"""
        if params.workspace_id is None:
            assert params.directory is not None  # the model requires one of them
            workspace = infer_workspace(
                self._rutter.store, Path(params.directory), machine=self._rutter.machine_id
            )
        else:
            workspace = self.workspace(params.workspace_id)
        target = typed_target(params.target, workspace.root, params.directory)
        return self.snapshot(self.stack(workspace, target))

    def effective_each(
        self, params: EffectiveInstructionsBatchParams
    ) -> Iterator[tuple[str, Snapshot | RutterError]]:
        """The snapshot of each target in order, or its typed error (one target failing does
        not stop the others). The workspace is resolved once, before the first answer: when it
        cannot be, that error is raised and nothing is answered.

        One pass over the tree: the levels targets have in common (the root's instruction
        files, a directory shared by many targets) are walked and read once, for the first
        target that reaches them; each directory on the way is still checked per target."""
        if params.workspace_id is None:
            assert params.directory is not None  # the model requires one of them
            workspace = infer_workspace(
                self._rutter.store, Path(params.directory), machine=self._rutter.machine_id
            )
        else:
            workspace = self.workspace(params.workspace_id)
        return self._each(workspace, params.targets, params.directory)

    def _each(
        self, workspace: Workspace, targets: list[str], directory: str | None
    ) -> Iterator[tuple[str, Snapshot | RutterError]]:
        shared = SharedLevels()
        reader = self._rutter.reader
        for target in targets:
            try:
                typed = typed_target(target, workspace.root, directory)
                stack = discover_stack(
                    workspace.workspace_id, workspace.root, typed, reader=reader, shared=shared
                )
                yield target, self.snapshot(stack)
            except RutterError as error:
                yield target, error

    def workspace(self, workspace_id: str) -> Workspace:
        """The registration discovery is confined to (`not_registered` when there is none;
        `workspace_on_other_machine` when it is another machine's: its root is not here)."""
        return get_files_here(self._rutter.store, workspace_id, self._rutter.machine_id)

    def stack(self, workspace: Workspace, target: str) -> Stack:
        """Discovery's walk for `target` in a registered `workspace`: what applies, what is
        ignored, the conflicts. Stacks of an unchanged tree compare equal, cheaply."""
        try:
            return discover_stack(
                workspace.workspace_id, workspace.root, target, reader=self._rutter.reader
            )
        except RutterError as error:
            raise naming_workspace(error, workspace.workspace_id) from None

    def snapshot(self, stack: Stack) -> Snapshot:
        """The snapshot of a walk, `loaded_at` now."""
        return snapshot_of(stack, reader=self._rutter.reader)


def naming_workspace(error: RutterError, workspace_id: str) -> RutterError:
    """`error`, its `move_workspace` hint (discovery found the root gone or linked, and does not
    know the ID) completed with the workspace's ID so the advice can name it."""
    if error.hint is not None and error.hint.fix == "move_workspace" and not error.hint.params:
        error.hint = Hint("move_workspace", {"workspace_id": workspace_id})
    return error
