"""Following session continuity: `rutter/sessionsChanged` and `rutter/session/recent`."""

from rutter_lsp.features.sessions.sessions import register

__all__ = ["register"]
