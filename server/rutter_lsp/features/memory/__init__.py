"""memory."""

from rutter_lsp.features.memory.memory import register

__all__ = ["register"]
