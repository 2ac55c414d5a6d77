"""session branches: fork, resume, the session tree, comparing nodes."""

from rutter_lsp.feature import LanguageFeature
from rutter_lsp.features.branches.branches import register


class Branches(LanguageFeature):
    def setup(self) -> None:
        register(self.server)


__all__ = ["Branches"]
