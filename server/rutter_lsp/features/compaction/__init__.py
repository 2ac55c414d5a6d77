"""Compaction and receipts: `rutter/session/compact`, `rutter/session/compactionResolve` and
`rutter/session/receiptRead`."""

from rutter_lsp.feature import LanguageFeature
from rutter_lsp.features.compaction.compaction import register


class Compaction(LanguageFeature):
    def setup(self) -> None:
        register(self.server)


__all__ = ["Compaction"]
