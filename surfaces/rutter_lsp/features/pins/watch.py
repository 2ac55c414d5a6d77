"""`ProposalWatch`: tells the editor when pin proposals of a served workspace arrive or are
answered, from any process (an agent through `rutter mcp`, a person through the CLI).

Every `POLL_SECONDS`, on the disk worker, a cheap store revision (`StoreChanges`: one pragma on
SQLite) says whether anyone committed; only then are the pending proposals read again. When the
set of pending proposals of a served workspace differs from the last one seen (the first poll
included: proposals already waiting when the editor starts), the client gets
`rutter/pinProposalsChanged` `{"workspace_ids": [...]}` and asks `rutter/pin/proposals`.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from rutter_core.app.pins import ListProposalsParams
from rutter_core.store import Store
from rutter_core.store.changes import StoreChanges

if TYPE_CHECKING:
    from rutter_lsp.server import RutterServer

logger = logging.getLogger("rutter_lsp")

PIN_PROPOSALS_CHANGED: Final = "rutter/pinProposalsChanged"
POLL_SECONDS: Final = 1.0

Pending = dict[str, frozenset[str]]
"""Pending proposal IDs by workspace."""


@dataclass(frozen=True, slots=True)
class _Watch:
    store: Store
    changes: StoreChanges


class ProposalWatch:
    """Pending proposals of the served workspaces (event loop only)."""

    def __init__(self, server: RutterServer) -> None:
        self._server = server
        self._watch: _Watch | None = None
        self._seen: Pending = {}
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._poll())

    def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None
        watch, self._watch = self._watch, None
        if watch is not None:
            watch.changes.close()

    async def _poll(self) -> None:
        while True:
            await asyncio.sleep(POLL_SECONDS)
            try:
                changed = await self.check()
            except Exception as error:  # the store went away; the next tick retries
                logger.debug("pin proposal poll failed: %s", error)
                continue
            if changed:
                self._server.protocol.notify(PIN_PROPOSALS_CHANGED, {"workspace_ids": changed})

    async def check(self) -> list[str]:
        """The served workspaces whose pending proposals changed since the last check."""
        server = self._server
        session = server.session
        store, app = session.store, session.app
        served = {folder.workspace_id for folder in session.folders.values()}
        if store is None or app is None or not served:
            return []
        watch = self._watch
        if watch is None or watch.store is not store:
            if watch is not None:
                await session.worker.run(watch.changes.close)
            watch = self._watch = _Watch(store, StoreChanges(store))
        if not await session.worker.run(watch.changes.poll):
            return []
        listed = await session.worker.run(lambda: app.pins.proposals(ListProposalsParams()))
        pending: dict[str, set[str]] = {}
        for proposal in listed.proposals:
            if proposal.workspace_id in served:
                pending.setdefault(proposal.workspace_id, set()).add(proposal.proposal_id)
        current = {workspace: frozenset(ids) for workspace, ids in pending.items()}
        changed = sorted(
            workspace
            for workspace in current.keys() | self._seen.keys()
            if current.get(workspace) != self._seen.get(workspace)
        )
        self._seen = current
        return changed
