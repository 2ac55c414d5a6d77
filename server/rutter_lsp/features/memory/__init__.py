"""memory."""

from rutter_lsp.feature import LanguageFeature
from rutter_lsp.features.memory.memory import register


class Memory(LanguageFeature):
    def setup(self) -> None:
        register(self.server)


__all__ = ["Memory"]
