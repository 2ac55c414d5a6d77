"""Following session continuity: `rutter/sessionsChanged` and `rutter/session/recent`."""

from rutter_lsp.features.sessions.sessions import Sessions

__all__ = ["Sessions"]
