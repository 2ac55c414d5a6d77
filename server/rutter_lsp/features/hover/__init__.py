"""hover."""

from rutter_lsp.feature import LanguageFeature
from rutter_lsp.features.hover.hover import register


class Hover(LanguageFeature):
    def setup(self) -> None:
        register(self.server)


__all__ = ["Hover"]
