"""folders."""

from rutter_lsp.features.folders.folders import Folders

__all__ = ["Folders"]
