"""`SessionsMonitor`: tells the client when continuity data of a served workspace changed,
written by this server or by any other process (the CLI, another editor).

Notification `rutter/sessionsChanged` `{"workspace_ids": [...]}`: threads, sessions, nodes
(checkpoints, fork and resume markers, the roots of new runs), messages or notes of those
workspaces changed. How it is noticed:

- every `POLL_SECONDS` the store's change feed (`StoreChanges`: one `PRAGMA data_version` on
  SQLite) says whether anything was committed at all; only then is the continuity revision
  of each served workspace read (`app.continuity.revisions`: a few counts per workspace);
- after this server's own writes (`changed_here`), the same check runs at once.

A burst of commits (a script adding twenty messages) is one notification: once a change is
seen, the feed is polled again every `SETTLE_SECONDS` until it stays quiet (at most
`MAX_SETTLE_ROUNDS` times), and only then are the revisions compared. A workspace seen for the
first time (just served) sets its baseline without a notification. Nothing is read while no
folder is served.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from rutter_core.app.continuity import RevisionsParams
from rutter_core.kernel.errors import RutterError
from rutter_core.store import Store
from rutter_core.store.changes import StoreChanges

if TYPE_CHECKING:
    from rutter_lsp.server import RutterServer

logger = logging.getLogger("rutter_lsp")

SESSIONS_CHANGED: Final = "rutter/sessionsChanged"
POLL_SECONDS: Final = 1.0
SETTLE_SECONDS: Final = 0.15
MAX_SETTLE_ROUNDS: Final = 10


@dataclass(frozen=True, slots=True)
class _Watch:
    store: Store
    changes: StoreChanges


def changed_workspaces(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """Workspaces known before whose revision differs now (a new one only sets its baseline)."""
    return sorted(ws for ws, revision in after.items() if ws in before and before[ws] != revision)


class SessionsMonitor:
    """Event loop only, like every send."""

    def __init__(self, server: RutterServer) -> None:
        self._server = server
        self._watch: _Watch | None = None
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self.revisions: dict[str, str] = {}
        """The last revision read per served workspace."""

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())

    def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None
        watch, self._watch = self._watch, None
        if watch is not None:
            watch.changes.close()

    def changed_here(self) -> None:
        """This server wrote continuity data: check now rather than at the next tick."""
        self._wake.set()

    async def _run(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), POLL_SECONDS)
            self._wake.clear()
            try:
                await self._check()
            except asyncio.CancelledError:
                raise
            except Exception:  # a bug here must not stop the server's other work
                logger.exception("cannot follow the sessions of the served workspaces")

    async def _poll(self) -> bool | None:
        """Whether the store changed since the last poll (None: no store or no folder)."""
        server = self._server
        store = server.session.store
        if store is None or not server.session.folders:
            return None
        watch = self._watch
        if watch is None or watch.store is not store:
            if watch is not None:
                await server.session.worker.run(watch.changes.close)
            watch = self._watch = _Watch(store, StoreChanges(store))
            self.revisions = {}
        try:
            return await server.session.worker.run(watch.changes.poll)
        except Exception as error:  # the store went away; the next tick retries
            logger.debug("store change poll failed: %s", error)
            return None

    async def _check(self) -> None:
        server = self._server
        served = sorted({folder.workspace_id for folder in server.session.folders.values()})
        changed = await self._poll()
        if changed is None:
            return
        new_workspace = any(ws not in self.revisions for ws in served)
        if not changed and not new_workspace:
            return
        for _ in range(MAX_SETTLE_ROUNDS):  # one notification per burst
            await asyncio.sleep(SETTLE_SECONDS)
            if not await self._poll():
                break
        app = server.session.app
        if app is None:
            return
        try:
            answer = await server.session.worker.run_background(
                app.continuity.revisions, RevisionsParams(workspace_ids=tuple(served))
            )
        except RutterError as error:
            logger.warning("cannot read the sessions' revisions: %s", error.message)
            return
        before, self.revisions = self.revisions, answer.revisions
        workspaces = changed_workspaces(before, answer.revisions)
        if workspaces:
            server.protocol.notify(SESSIONS_CHANGED, {"workspace_ids": workspaces})
