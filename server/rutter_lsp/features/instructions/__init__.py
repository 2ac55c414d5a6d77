"""instructions."""

from rutter_lsp.features.instructions.instructions import Instructions

__all__ = ["Instructions"]
