"""runs."""

from rutter_lsp.features.runs.runs import Runs

__all__ = ["Runs"]
