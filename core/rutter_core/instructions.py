"""The effective-instructions service shared by the CLI and the language server."""

from __future__ import annotations

from rutter_core.discovery import discover
from rutter_core.fsread import FileReader
from rutter_core.snapshot import DEFAULT_LIMITS, Limits, Snapshot
from rutter_core.store import Store
from rutter_core.workspaces import get_workspace


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
