"""lifecycle: `initialize`, `initialized` and `shutdown`, and the settings (and so the store)
they load and `workspace/didChangeConfiguration` reloads."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rutter_lsp.features.lifecycle import config, lifecycle

if TYPE_CHECKING:
    from rutter_lsp.server import RutterServer


def register(server: RutterServer) -> None:
    lifecycle.register(server)
    config.register(server)
