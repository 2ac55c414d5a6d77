"""The registrations of the served folders' workspaces, as last read from the store.

Session state rather than a feature's: which workspace a served folder is registered as changes
with the folders and the store, which the session holds; requests that need the registration
(the effective instructions) read it from here instead of asking the store every time.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from rutter_core.app.instructions import Workspace
from rutter_core.store import Store

REVALIDATE_SECONDS: Final = 2.0
"""A registration older than this is read again (another process may remove or move it)."""


@dataclass(frozen=True, slots=True)
class _Registration:
    store: Store
    workspace: Workspace
    checked: float


class WorkspaceCache:
    """Workspace ID → its registration, as last read from the store (event loop only)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._entries: dict[str, _Registration] = {}
        self.clock = clock

    def clear(self) -> None:
        """Forget everything (served folders or the store changed)."""
        self._entries.clear()

    def get(self, store: Store, workspace_id: str) -> Workspace | None:
        entry = self._entries.get(workspace_id)
        if entry is None or entry.store is not store:
            return None
        if self.clock() - entry.checked > REVALIDATE_SECONDS:
            return None
        return entry.workspace

    def put(self, store: Store, workspace: Workspace, checked: float) -> None:
        self._entries[workspace.workspace_id] = _Registration(store, workspace, checked)
