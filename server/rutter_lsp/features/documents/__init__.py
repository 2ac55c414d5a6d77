"""documents: open, edited, saved and closed documents, and watched instruction files."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rutter_lsp.features.documents import documents, watching

if TYPE_CHECKING:
    from rutter_lsp.server import RutterServer


def register(server: RutterServer) -> None:
    documents.register(server)
    watching.register(server)
