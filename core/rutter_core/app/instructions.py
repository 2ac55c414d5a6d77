"""Operations on effective instructions: params and result models, and `InstructionOperations`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rutter_core.discovery.fsread import FileReader
from rutter_core.discovery.snapshot import DEFAULT_LIMITS, Limits, Snapshot
from rutter_core.discovery.walk import discover
from rutter_core.store import Store
from rutter_core.workspaces.service import get_workspace

if TYPE_CHECKING:
    from rutter_core.app.facade import Rutter


def effective_instructions(
    store: Store,
    workspace_id: str,
    target: str,
    *,
    reader: FileReader,
    limits: Limits = DEFAULT_LIMITS,
) -> Snapshot:
    """Discovery for `target` in a registered workspace (`not_registered` when there is none)."""
    workspace = get_workspace(store, workspace_id)
    return discover(workspace.workspace_id, workspace.root, target, reader=reader, limits=limits)


class InstructionOperations:
    def __init__(self, rutter: Rutter) -> None:
        self._rutter = rutter
