"""Migration 5: what threads hold (messages and notes) and the snapshots of checkpoint nodes
(issue 13, docs/reference/continuity.md). Released: never edit it.

- `messages`: append-only. `seq` orders a thread's messages (1, 2, 3, ... per thread, taken
  under the write lock; UNIQUE, so a lost race is a conflict on every dialect). `source` is the
  provenance the surface sets (`cli`, `lsp`, `mcp`, `http`, `import:<agent>`); an external ID is
  unique per (thread, source), which makes a re-import idempotent (NULLs are distinct, so
  messages without one never collide).
- `notes`: versioned records (optimistic `version`), `active` until superseded; a superseded
  note may name the note that replaced it.
- `continuity_snapshots`: append-only, one per checkpoint node: the node's
  `continuity_snapshot.v1` as canonical JSON and its fingerprint.

Text lengths here are characters (dialect-neutral backstops); the byte bounds are enforced in
rutter_core.continuity.
"""

from rutter_core.store.dialects import UniqueKey
from rutter_core.store.migrations.migration import KeyGuard, Migration

MIGRATION = Migration(
    5,
    "continuity_content",
    (
        """
        CREATE TABLE messages (
            message_id TEXT NOT NULL PRIMARY KEY
                CHECK (substr(message_id, 1, 4) = 'msg_' AND length(message_id) = 30),
            thread_id TEXT NOT NULL REFERENCES threads (thread_id),
            seq INTEGER NOT NULL CHECK (seq > 0),
            role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool', 'system')),
            text TEXT NOT NULL CHECK (length(text) BETWEEN 1 AND 65536),
            redacted INTEGER NOT NULL CHECK (redacted IN (0, 1)),
            source TEXT NOT NULL
                CHECK (source IN ('cli', 'lsp', 'mcp', 'http')
                       OR (substr(source, 1, 7) = 'import:' AND length(source) BETWEEN 8 AND 71)),
            external_id TEXT
                CHECK (external_id IS NULL OR length(external_id) BETWEEN 1 AND 256),
            created_at TEXT NOT NULL CHECK (created_at LIKE '____-__-__T__:__:__Z')
        )
        """,
        "CREATE UNIQUE INDEX messages_by_thread ON messages (thread_id, seq)",
        """
        CREATE UNIQUE INDEX messages_by_external_id
            ON messages (thread_id, source, external_id)
        """,
        """
        CREATE TABLE notes (
            note_id TEXT NOT NULL PRIMARY KEY
                CHECK (substr(note_id, 1, 5) = 'note_' AND length(note_id) = 31),
            thread_id TEXT NOT NULL REFERENCES threads (thread_id),
            kind TEXT NOT NULL CHECK (kind IN ('decision', 'summary', 'fact')),
            text TEXT NOT NULL CHECK (length(text) BETWEEN 1 AND 16384),
            redacted INTEGER NOT NULL CHECK (redacted IN (0, 1)),
            status TEXT NOT NULL CHECK (status IN ('active', 'superseded')),
            superseded_by TEXT REFERENCES notes (note_id)
                CHECK (superseded_by IS NULL OR superseded_by <> note_id),
            version INTEGER NOT NULL CHECK (version >= 1),
            created_by TEXT NOT NULL CHECK (created_by IN ('cli', 'lsp', 'http_control')),
            updated_by TEXT NOT NULL CHECK (updated_by IN ('cli', 'lsp', 'http_control')),
            created_at TEXT NOT NULL CHECK (created_at LIKE '____-__-__T__:__:__Z'),
            updated_at TEXT NOT NULL CHECK (updated_at LIKE '____-__-__T__:__:__Z'),
            CHECK (superseded_by IS NULL OR status = 'superseded')
        )
        """,
        "CREATE INDEX notes_by_thread ON notes (thread_id, kind, status)",
        """
        CREATE TABLE continuity_snapshots (
            node_id TEXT NOT NULL PRIMARY KEY REFERENCES continuity_nodes (node_id),
            protocol_version TEXT NOT NULL
                CHECK (protocol_version = 'continuity_snapshot.v1'),
            title TEXT NOT NULL CHECK (length(title) BETWEEN 1 AND 256),
            snapshot_json TEXT NOT NULL CHECK (substr(snapshot_json, 1, 1) = '{'),
            fingerprint TEXT NOT NULL CHECK (length(fingerprint) = 64)
        )
        """,
        # A run's checkpoints are found by walking its nodes: by run, then kind.
        "CREATE INDEX continuity_nodes_by_run ON continuity_nodes (run_id, kind)",
    ),
    append_only=("messages", "continuity_snapshots"),
    key_guards=(
        KeyGuard(
            "messages",
            (
                UniqueKey(("message_id",)),
                UniqueKey(("thread_id", "seq")),
                UniqueKey(("thread_id", "source", "external_id")),
            ),
        ),
        KeyGuard("continuity_snapshots", (UniqueKey(("node_id",)),)),
    ),
)
