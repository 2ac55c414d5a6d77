"""Migration 8: the history index (issue 16, docs/reference/history.md). Released: never edit it.

- `history_entries`: one row per searchable source (a memory, note, message, tool receipt,
  summary or checkpoint snapshot): its kind, ID, owner (`local-user`, a workspace for project
  memory, a thread for the rest), workspace, version, content hash and expiry. Metadata only:
  no title or body. `entry_id` is the row's key in the full-text tables and the keyset of
  search cursors; a source keeps its entry while it is indexed (an edit re-indexes in place).
- `history_memory_text`: the full-text index of active memories (title and body), apart from
  the rest so it stays small: on every edit, disable and delete it is compacted, so a
  replaced or removed memory body leaves no token in its pages.
- `history_text`: the full-text index of thread content (notes, messages, receipts,
  summaries, checkpoint titles and summaries).
- `history_state`: one row: the last entry ID given out (IDs are never reused, so a cursor's
  horizon keeps later entries out of its source set) and the secret that signs handles and
  cursors (made on first use), and whether the sources stored before this migration still
  wait to be indexed (`backfill_pending`: the app indexes them in one write on the first
  history search or read; later writes index themselves).

Both full-text tables are the dialect's (`full_text`); their rowid is the entry's ID.
"""

from rutter_core.store.migrations.migration import Migration

MIGRATION = Migration(
    8,
    "history",
    (
        """
        CREATE TABLE history_entries (
            entry_id INTEGER NOT NULL PRIMARY KEY,
            source_kind TEXT NOT NULL
                CHECK (source_kind IN ('memory', 'note', 'message', 'receipt', 'summary',
                                       'checkpoint')),
            source_id TEXT NOT NULL CHECK (length(source_id) BETWEEN 1 AND 64),
            owner_id TEXT NOT NULL CHECK (length(owner_id) BETWEEN 1 AND 64),
            workspace_id TEXT,
            version INTEGER NOT NULL CHECK (version >= 1),
            content_sha256 TEXT NOT NULL CHECK (length(content_sha256) = 64),
            expires_at TEXT
                CHECK (expires_at IS NULL OR expires_at LIKE '____-__-__T__:__:__Z')
        )
        """,
        "CREATE UNIQUE INDEX history_entries_by_source ON history_entries (source_id)",
        "CREATE INDEX history_entries_by_owner ON history_entries (owner_id, entry_id)",
        """
        CREATE TABLE history_state (
            state_id INTEGER NOT NULL PRIMARY KEY CHECK (state_id = 1),
            last_entry_id INTEGER NOT NULL CHECK (last_entry_id >= 0),
            secret TEXT CHECK (secret IS NULL OR length(secret) = 64),
            backfill_pending INTEGER NOT NULL CHECK (backfill_pending IN (0, 1))
        )
        """,
        """
        INSERT INTO history_state (state_id, last_entry_id, secret, backfill_pending)
        VALUES (1, 0, NULL, 1)
        """,
    ),
    full_text=("history_memory_text", "history_text"),
)
