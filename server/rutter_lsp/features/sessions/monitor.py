"""`SessionsMonitor`: tells the client when continuity data of a served workspace changed,
written by this server or by any other process (the CLI, another editor).

Notification `rutter/sessionsChanged` `{"workspace_ids": [...]}`: threads, sessions, nodes
(checkpoints, fork and resume markers, the roots of new runs), messages or notes of those
workspaces changed. How it is noticed: the session's `StoreWatch` (one poll of the store's
change feed per tick, a burst of commits settled into one change) calls `store_changed`; only
when the store changed, or a workspace is served that has no baseline yet, is the continuity
revision of each served workspace read (`app.continuity.revisions`: a few counts per
workspace). After this server's own writes (the session and branches features wake the store
watch) the watch ticks at once.

A workspace seen for the first time (just served) sets its baseline without a notification;
so does every workspace when the store itself was replaced (the settings changed it).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Final

from rutter_core.app.continuity import RevisionsParams
from rutter_core.kernel.errors import RutterError
from rutter_core.store import Store

if TYPE_CHECKING:
    from rutter_lsp.server import RutterServer

logger = logging.getLogger("rutter_lsp")

SESSIONS_CHANGED: Final = "rutter/sessionsChanged"


def changed_workspaces(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """Workspaces known before whose revision differs now (a new one only sets its baseline)."""
    return sorted(ws for ws, revision in after.items() if ws in before and before[ws] != revision)


class SessionsMonitor:
    """Event loop only, like every send."""

    def __init__(self, server: RutterServer) -> None:
        self._server = server
        self._store: Store | None = None
        self.revisions: dict[str, str] = {}
        """The last revision read per served workspace."""

    async def store_changed(self, changed: bool) -> None:
        """A tick of the session's store watch."""
        server = self._server
        session = server.session
        if session.store is not self._store:
            self._store, self.revisions = session.store, {}
        served = sorted({folder.workspace_id for folder in session.folders.values()})
        new_workspace = any(ws not in self.revisions for ws in served)
        app = session.app
        if app is None or not served or not (changed or new_workspace):
            return
        try:
            answer = await session.worker.run_background(
                app.continuity.revisions, RevisionsParams(workspace_ids=tuple(served))
            )
        except RutterError as error:
            logger.warning("cannot read the sessions' revisions: %s", error.message)
            return
        before, self.revisions = self.revisions, answer.revisions
        workspaces = changed_workspaces(before, answer.revisions)
        if workspaces:
            server.protocol.notify(SESSIONS_CHANGED, {"workspace_ids": workspaces})
