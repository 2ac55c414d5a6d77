"""instructions."""

from rutter_lsp.features.instructions.instructions import register

__all__ = ["register"]
