"""context assembly: what a run's agent is given, and the stored audit of each assembly."""

from rutter_lsp.feature import LanguageFeature
from rutter_lsp.features.assembly.assembly import register


class Assembly(LanguageFeature):
    def setup(self) -> None:
        register(self.server)


__all__ = ["Assembly"]
