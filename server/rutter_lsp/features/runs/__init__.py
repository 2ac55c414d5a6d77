"""runs."""

from rutter_lsp.features.runs.runs import register

__all__ = ["register"]
