"""Migration 14: experience candidates (issue 30, docs/reference/memory.md). Released: never
edit it.

- `notes.references_json`: what a note points at (paths, URLs, other identifiers), a JSON array
  of strings; existing notes get none. A decision or summary with a reference can become a
  memory candidate.
- `checkpoint_deliveries`: append-only, one row per checkpoint taken as a delivery (a completion
  record of its run). The checkpoint node itself is unchanged.
- `memory_candidates`: append-only, one row per resolved candidate (pending candidates are
  derived when listed and stored nowhere). A row is a tombstone by construction: identity,
  source note and version, completion record, fingerprint and the review (confirmed with the
  memory it created, or ignored); it has no column for a title, a text or references.
"""

from rutter_core.store.dialects import UniqueKey
from rutter_core.store.migrations.migration import KeyGuard, Migration

MIGRATION = Migration(
    14,
    "memory_candidates",
    (
        """
        ALTER TABLE notes ADD COLUMN references_json TEXT NOT NULL DEFAULT '[]'
            CHECK (substr(references_json, 1, 1) = '[')
        """,
        """
        CREATE TABLE checkpoint_deliveries (
            node_id TEXT NOT NULL PRIMARY KEY REFERENCES continuity_nodes (node_id),
            run_id TEXT NOT NULL REFERENCES runs (run_id),
            created_by TEXT NOT NULL CHECK (length(created_by) BETWEEN 1 AND 64),
            created_at TEXT NOT NULL CHECK (created_at LIKE '____-__-__T__:__:__Z')
        )
        """,
        "CREATE INDEX checkpoint_deliveries_by_run ON checkpoint_deliveries (run_id)",
        """
        CREATE TABLE memory_candidates (
            candidate_id TEXT NOT NULL PRIMARY KEY
                CHECK (substr(candidate_id, 1, 5) = 'cand_'),
            workspace_id TEXT NOT NULL REFERENCES workspaces (workspace_id),
            note_id TEXT NOT NULL CHECK (substr(note_id, 1, 5) = 'note_'),
            note_version INTEGER NOT NULL CHECK (note_version >= 1),
            thread_id TEXT NOT NULL,
            run_id TEXT,
            fingerprint TEXT NOT NULL CHECK (length(fingerprint) = 64),
            completion_kind TEXT NOT NULL
                CHECK (completion_kind IN ('run_completed', 'reply_completed',
                                           'delivery_checkpoint', 'delivery_report')),
            completion_at TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('confirmed', 'ignored')),
            version INTEGER NOT NULL CHECK (version >= 2),
            memory_id TEXT CHECK (memory_id IS NULL OR substr(memory_id, 1, 4) = 'mem_'),
            reviewed_by TEXT NOT NULL CHECK (reviewed_by IN ('cli', 'lsp', 'http_control')),
            reviewed_at TEXT NOT NULL CHECK (reviewed_at LIKE '____-__-__T__:__:__Z'),
            CHECK ((status = 'confirmed') = (memory_id IS NOT NULL))
        )
        """,
        "CREATE INDEX memory_candidates_by_note ON memory_candidates (note_id, note_version)",
        "CREATE INDEX memory_candidates_by_workspace ON memory_candidates (workspace_id)",
    ),
    append_only=("checkpoint_deliveries", "memory_candidates"),
    key_guards=(
        KeyGuard("checkpoint_deliveries", (UniqueKey(("node_id",)),)),
        KeyGuard("memory_candidates", (UniqueKey(("candidate_id",)),)),
    ),
)
