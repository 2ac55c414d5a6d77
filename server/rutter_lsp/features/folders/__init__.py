"""folders."""

from rutter_lsp.features.folders.folders import register

__all__ = ["register"]
