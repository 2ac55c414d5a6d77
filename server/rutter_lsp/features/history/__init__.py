"""history search and read: the requests `rutter/historySearch` and `rutter/historyRead`."""

from rutter_lsp.feature import LanguageFeature
from rutter_lsp.features.history.history import register


class History(LanguageFeature):
    def setup(self) -> None:
        register(self.server)


__all__ = ["History"]
