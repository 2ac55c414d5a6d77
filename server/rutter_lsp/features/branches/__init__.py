"""session branches: fork, resume, the session tree, comparing nodes."""

from rutter_lsp.features.branches.branches import register

__all__ = ["register"]
