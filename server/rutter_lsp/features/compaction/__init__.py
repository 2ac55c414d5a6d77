"""Compaction and receipts: `rutter/session/compact`, `rutter/session/compactionResolve` and
`rutter/session/receiptRead`."""

from rutter_lsp.features.compaction.compaction import register

__all__ = ["register"]
