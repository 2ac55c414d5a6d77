"""history search and read: the requests `rutter/historySearch` and `rutter/historyRead`."""

from rutter_lsp.features.history.history import register

__all__ = ["register"]
