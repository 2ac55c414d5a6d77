"""session continuity: messages, notes, checkpoints."""

from rutter_lsp.feature import LanguageFeature
from rutter_lsp.features.session.session import register


class SessionContinuity(LanguageFeature):
    def setup(self) -> None:
        register(self.server)


__all__ = ["SessionContinuity"]
