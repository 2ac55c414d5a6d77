"""hover."""

from rutter_lsp.features.hover.hover import register

__all__ = ["register"]
