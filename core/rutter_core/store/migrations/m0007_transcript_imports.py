"""Migration 7: which thread holds which imported agent transcript (issue 15 item 4,
docs/reference/transcripts.md). Released: never edit it.

- `transcript_imports`: append-only, one row per (source, external session ID): the agent's own
  session ID (Claude Code's `sessionId`, Codex's `session_meta.payload.id`) under the source
  `import:<agent>`. A re-import finds its thread here and appends only the messages whose
  external IDs the thread does not hold yet. A thread may hold several transcripts (an import
  into a chosen thread); a transcript is in one thread only.
"""

from rutter_core.store.dialects import UniqueKey
from rutter_core.store.migrations.migration import KeyGuard, Migration

MIGRATION = Migration(
    7,
    "transcript_imports",
    (
        """
        CREATE TABLE transcript_imports (
            source TEXT NOT NULL
                CHECK (substr(source, 1, 7) = 'import:' AND length(source) BETWEEN 8 AND 71),
            external_session_id TEXT NOT NULL
                CHECK (length(external_session_id) BETWEEN 1 AND 256),
            thread_id TEXT NOT NULL REFERENCES threads (thread_id),
            created_by TEXT NOT NULL CHECK (created_by IN ('cli', 'lsp', 'http_control')),
            created_at TEXT NOT NULL CHECK (created_at LIKE '____-__-__T__:__:__Z'),
            PRIMARY KEY (source, external_session_id)
        )
        """,
        "CREATE INDEX transcript_imports_by_thread ON transcript_imports (thread_id)",
    ),
    append_only=("transcript_imports",),
    key_guards=(KeyGuard("transcript_imports", (UniqueKey(("source", "external_session_id")),)),),
)
