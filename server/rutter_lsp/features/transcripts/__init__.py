"""transcript import: an agent's own session transcript into a thread."""

from rutter_lsp.feature import LanguageFeature
from rutter_lsp.features.transcripts.transcripts import register


class Transcripts(LanguageFeature):
    def setup(self) -> None:
        register(self.server)


__all__ = ["Transcripts"]
