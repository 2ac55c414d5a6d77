"""Migration 12: the memory index of history search split into 16 shards (issue 12).
Released: never edit it.

A memory text that leaves the index (edit, disable, delete) is followed by a rewrite of the
index from its rows, so that none of its tokens remain in any page (`Dialect.full_text_rebuild`);
that rewrite costs in proportion to all the memory text indexed. The one table
`history_memory_text` becomes `history_memory_text_00` … `_15`, an entry in shard
`entry_id % 16` (an entry keeps its ID for life, so its shard too), and only the shard that held
the text is rewritten: a 16th of the cost. A search asks every shard (16 index lookups per
query term instead of one, merged by entry ID): 16 balances the two (with 1,000 memories, an
edit about 8 times cheaper, a search under twice as dear). Every row moves with its key; the
old table and its index are dropped. No table of the store's own changes.
"""

from rutter_core.store.migrations.migration import FullTextSplit, Migration

SHARDS = tuple(f"history_memory_text_{number:02d}" for number in range(16))

MIGRATION = Migration(
    12,
    "memory_index_shards",
    (),
    full_text=SHARDS,
    full_text_splits=(FullTextSplit("history_memory_text", SHARDS),),
)
