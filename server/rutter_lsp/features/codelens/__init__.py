"""codelens."""

from rutter_lsp.features.codelens.codelens import CodeLens

__all__ = ["CodeLens"]
