"""Migration 11: the memory index of history search rewritten from its rows (issue 12).
Released: never edit it.

Until this release every text leaving the memory index was followed by FTS5 `optimize`; on
SQLite 3.40 the index reports itself damaged after about 1,000 of those, and every memory
write fails from then on with `store_corrupt`. Compaction is FTS5 `rebuild` now (see
`SqliteDialect.full_text_rebuild`), and this step rebuilds the index once from its rows
(`full_text_repair`: a damaged index cannot even be opened, so its structure record is reset
first), so a store the old compaction damaged is whole again. It changes no table's shape and
no row of the store's own.
"""

from rutter_core.store.migrations.migration import Migration

MIGRATION = Migration(11, "memory_index_repair", (), full_text_rebuilds=("history_memory_text",))
