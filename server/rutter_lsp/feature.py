"""What a feature of the language server is: an object built with the server, with hooks the
server's lifecycle calls in the order of the feature list (`rutter_lsp.setup.FEATURES`).

As esbonio's `LanguageFeature`: the server builds each feature with itself and calls `setup`
once (the feature installs its handlers and creates what it owns: a monitor, a watcher, a
cache); the lifecycle feature then calls the other hooks at `initialize`, `initialized`, when
the settings replace the store, and at `shutdown`; the refresher calls the refresh hooks once
per round. Every hook runs on the event loop. A feature never imports another: what two of them
share lives in a module both use (`rutter_lsp.presentation`, `rutter_lsp.registrations`), and
what one needs of the server's state it reads from the session.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lsprotocol import types

if TYPE_CHECKING:
    from rutter_lsp.index.analysis import OpenDoc
    from rutter_lsp.server import RutterServer


@dataclass(frozen=True, slots=True)
class RefreshRound:
    """One refresh round as the features see it (immutable): what became stale, and the open
    documents the new index was built for."""

    docs: Sequence[OpenDoc]
    rebuilt: bool
    """The index was rebuilt (folders, settings, documents or files on disk changed)."""
    index: bool
    """Folders or settings changed: every open document's directory was discovered again."""
    all_diagnostics: bool
    """Every document's diagnostics and every run are looked at again."""
    changes: Mapping[str, frozenset[str]]
    """Instruction files changed on disk: workspace ID -> workspace-relative paths."""
    runs: bool
    """The store changed: runs may have been created, refreshed or ended."""
    agents: bool
    """A file only agents read (or their settings) changed."""
    diagnostics: frozenset[str]
    """Documents whose diagnostics must be published again (edited, opened)."""
    forced: frozenset[str] = field(default=frozenset())
    """Documents whose diagnostics other features changed this round (`LanguageFeature.refresh`):
    published again whatever they were."""


class LanguageFeature:
    """A feature: `setup` installs its handlers; the other hooks do nothing unless overridden."""

    def __init__(self, server: RutterServer) -> None:
        self.server = server

    def setup(self) -> None:
        """Install the feature's handlers and create what it owns (called once, in order)."""

    def initialize(self, params: types.InitializeParams) -> None:
        """`initialize` (before the capabilities are computed): nothing here touches the disk."""

    async def initialized(self) -> None:
        """`initialized`, once the settings are loaded and the store is open."""

    async def store_replaced(self) -> None:
        """The settings named another store, which is open now."""

    async def refresh(self, round: RefreshRound) -> frozenset[str]:
        """The first step of a refresh round, once the index is rebuilt: bring what the feature
        derives from the store and the index up to date; returns the documents whose
        diagnostics it changed."""
        return frozenset()

    async def refreshed(self, round: RefreshRound) -> None:
        """The second step: tell the client (diagnostics, refresh requests, notifications)."""

    def diagnostics_for(self, uri: str) -> list[types.Diagnostic]:
        """Diagnostics this feature adds to a document's own (run drift)."""
        return []

    def shutdown(self) -> None:
        """`shutdown`: stop what the feature started."""
