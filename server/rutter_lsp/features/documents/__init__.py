"""documents: open, edited, saved and closed documents, and watched instruction files."""

from rutter_lsp.feature import LanguageFeature
from rutter_lsp.features.documents import documents, watching


class Documents(LanguageFeature):
    def setup(self) -> None:
        documents.register(self.server)
        watching.register(self.server)

    async def initialized(self) -> None:
        """Once the folders are served: watch their instruction files."""
        await watching.register_watchers(self.server)


__all__ = ["Documents"]
