"""Migration 15: compactions of a thread (issue 29, docs/reference/continuity.md). Numbered 15 so
that it cannot collide with the migrations of work done beside it (13 and 14 are other issues').
Released: never edit it.

- `compactions`: one row per compaction operation, keyed by its `cmp_` ID and by the operation
  key the caller gave (or rutter made), unique. A row is written `running` before the
  summarizer is called and moves once: to `completed` (the summary and the range of messages it
  covers, `through_seq`, written together in one UPDATE: the compaction marker), `failed`
  (nothing of the summary stored), or, when its process died during the call,
  `pending_verification`, which only an operator resolves (`abandoned`, or `running` again for
  a retry). Messages are never touched: a compaction covers a range of `seq`, it removes
  nothing. What was sent to the summarizer is `input_json`: IDs, counts and SHA-256 digests,
  never a text. The summary itself is redacted text, at most 16 KiB.
- A partial unique index allows one `running` or `pending_verification` compaction per thread.
- `branch_operations`: the operation key of a `session resume` or `session fork` and the run it
  made, so that the same key answers the same run and never makes a second one. Append-only.
"""

from rutter_core.store.dialects import UniqueKey
from rutter_core.store.migrations.migration import KeyGuard, Migration

MIGRATION = Migration(
    15,
    "compactions",
    (
        """
        CREATE TABLE compactions (
            compaction_id TEXT NOT NULL PRIMARY KEY
                CHECK (substr(compaction_id, 1, 4) = 'cmp_' AND length(compaction_id) = 30),
            operation_key TEXT NOT NULL UNIQUE
                CHECK (length(operation_key) BETWEEN 1 AND 128),
            thread_id TEXT NOT NULL REFERENCES threads (thread_id),
            request_sha256 TEXT NOT NULL CHECK (length(request_sha256) = 64),
            summarizer TEXT NOT NULL CHECK (summarizer IN ('extractive', 'command')),
            status TEXT NOT NULL CHECK (status IN
                ('running', 'completed', 'failed', 'pending_verification', 'abandoned')),
            owner TEXT NOT NULL CHECK (length(owner) BETWEEN 1 AND 300),
            after_seq INTEGER NOT NULL CHECK (after_seq >= 0),
            through_seq INTEGER NOT NULL CHECK (through_seq > after_seq),
            observed_seq INTEGER NOT NULL CHECK (observed_seq >= through_seq),
            kept_json TEXT NOT NULL CHECK (length(kept_json) > 1),
            compacted_count INTEGER NOT NULL CHECK (compacted_count >= 1),
            unread_count INTEGER NOT NULL CHECK (unread_count >= 0),
            input_json TEXT NOT NULL CHECK (length(input_json) > 1),
            summary_text TEXT CHECK (summary_text IS NULL OR length(summary_text) >= 1),
            summary_tokens INTEGER CHECK (summary_tokens IS NULL OR summary_tokens >= 1),
            summary_redacted INTEGER NOT NULL CHECK (summary_redacted IN (0, 1)),
            error_code TEXT CHECK (error_code IS NULL OR length(error_code) BETWEEN 1 AND 64),
            created_by TEXT NOT NULL CHECK (created_by IN ('cli', 'lsp', 'http_control', 'mcp')),
            created_at TEXT NOT NULL CHECK (created_at LIKE '____-__-__T__:__:__Z'),
            updated_at TEXT NOT NULL CHECK (updated_at LIKE '____-__-__T__:__:__Z'),
            CHECK ((status = 'completed') = (summary_text IS NOT NULL)),
            CHECK ((status = 'completed') = (summary_tokens IS NOT NULL)),
            CHECK (status <> 'failed' OR error_code IS NOT NULL)
        )
        """,
        "CREATE INDEX compactions_by_thread ON compactions (thread_id, status, through_seq)",
        """
        CREATE UNIQUE INDEX compactions_one_open_per_thread ON compactions (thread_id)
            WHERE status IN ('running', 'pending_verification')
        """,
        """
        CREATE TABLE branch_operations (
            operation_key TEXT NOT NULL PRIMARY KEY
                CHECK (length(operation_key) BETWEEN 1 AND 128),
            kind TEXT NOT NULL CHECK (kind IN ('fork', 'resume')),
            node_id TEXT NOT NULL REFERENCES continuity_nodes (node_id),
            request_sha256 TEXT NOT NULL CHECK (length(request_sha256) = 64),
            run_id TEXT NOT NULL REFERENCES runs (run_id),
            marker_node_id TEXT NOT NULL REFERENCES continuity_nodes (node_id),
            created_by TEXT NOT NULL CHECK (created_by IN ('cli', 'lsp', 'http_control', 'mcp')),
            created_at TEXT NOT NULL CHECK (created_at LIKE '____-__-__T__:__:__Z')
        )
        """,
    ),
    append_only=("branch_operations",),
    key_guards=(KeyGuard("branch_operations", (UniqueKey(("operation_key",)),)),),
)
