"""codelens."""

from rutter_lsp.features.codelens.codelens import register

__all__ = ["register"]
