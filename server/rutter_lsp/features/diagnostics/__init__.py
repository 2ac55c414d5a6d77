"""diagnostics."""

from rutter_lsp.features.diagnostics.diagnostics import Diagnostics

__all__ = ["Diagnostics"]
