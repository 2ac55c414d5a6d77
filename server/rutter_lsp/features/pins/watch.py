"""`ProposalWatch`: tells the editor when pin proposals of a served workspace arrive or are
answered, from any process (an agent through `rutter mcp`, a person through the CLI).

The session's `StoreWatch` (one poll of the store's change feed per tick) calls
`store_changed`; only when someone committed are the pending proposals read again. When the
set of pending proposals of a served workspace differs from the last one seen (the first poll
included: proposals already waiting when the editor starts), the client gets
`rutter/pinProposalsChanged` `{"workspace_ids": [...]}` and asks `rutter/pin/proposals`.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Final

from rutter_core.app.pins import ListProposalsParams

if TYPE_CHECKING:
    from rutter_lsp.server import RutterServer

logger = logging.getLogger("rutter_lsp")

PIN_PROPOSALS_CHANGED: Final = "rutter/pinProposalsChanged"

Pending = dict[str, frozenset[str]]
"""Pending proposal IDs by workspace."""


class ProposalWatch:
    """Pending proposals of the served workspaces (event loop only)."""

    def __init__(self, server: RutterServer) -> None:
        self._server = server
        self._seen: Pending = {}

    async def store_changed(self, changed: bool) -> None:
        """A tick of the session's store watch: after a commit, compare the proposals."""
        if not changed:
            return
        try:
            workspaces = await self.check()
        except Exception as error:  # the store went away; the next change retries
            logger.debug("pin proposal check failed: %s", error)
            return
        if workspaces:
            self._server.protocol.notify(PIN_PROPOSALS_CHANGED, {"workspace_ids": workspaces})

    async def check(self) -> list[str]:
        """The served workspaces whose pending proposals changed since the last check."""
        session = self._server.session
        app = session.app
        served = {folder.workspace_id for folder in session.folders.values()}
        if app is None or not served:
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
