"""session continuity: messages, notes, checkpoints."""

from rutter_lsp.features.session.session import register

__all__ = ["register"]
