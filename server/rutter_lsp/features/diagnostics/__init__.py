"""diagnostics."""

from rutter_lsp.features.diagnostics.diagnostics import register

__all__ = ["register"]
