"""Migration 3: explicit user/project memory (issue 5, docs/reference/memory.md). Released: never
edit it.

Only operator surfaces write it: the actor CHECKs refuse a model, tool or system writer even
through raw SQL. Lengths are in characters here (dialect-neutral); the byte bounds are enforced
in rutter_core.memory. No history table and no full-text index: a deleted or replaced body
lives nowhere else.
"""

from rutter_core.store.migrations.migration import Migration

MIGRATION = Migration(
    3,
    "memory",
    (
        """
        CREATE TABLE memories (
            memory_id TEXT NOT NULL PRIMARY KEY
                CHECK (length(memory_id) = 30 AND substr(memory_id, 1, 4) = 'mem_'),
            scope TEXT NOT NULL CHECK (scope IN ('user', 'project')),
            scope_id TEXT NOT NULL CHECK (length(scope_id) BETWEEN 1 AND 64),
            workspace_id TEXT REFERENCES workspaces (workspace_id),
            title TEXT NOT NULL CHECK (length(title) BETWEEN 1 AND 256),
            content TEXT NOT NULL CHECK (length(content) BETWEEN 1 AND 16384),
            content_sha256 TEXT NOT NULL CHECK (length(content_sha256) = 64),
            status TEXT NOT NULL CHECK (status IN ('active', 'disabled')),
            source_kind TEXT NOT NULL
                CHECK (source_kind IN ('operator_explicit', 'operator_import_explicit')),
            references_json TEXT NOT NULL CHECK (substr(references_json, 1, 1) = '['),
            retention_until TEXT
                CHECK (retention_until IS NULL
                       OR retention_until LIKE '____-__-__T__:__:__Z'),
            redacted INTEGER NOT NULL CHECK (redacted IN (0, 1)),
            created_by TEXT NOT NULL CHECK (created_by IN ('cli', 'lsp', 'http_control')),
            updated_by TEXT NOT NULL CHECK (updated_by IN ('cli', 'lsp', 'http_control')),
            version INTEGER NOT NULL CHECK (version >= 1),
            created_at TEXT NOT NULL CHECK (created_at LIKE '____-__-__T__:__:__Z'),
            updated_at TEXT NOT NULL CHECK (updated_at LIKE '____-__-__T__:__:__Z'),
            CHECK ((scope = 'user' AND scope_id = 'local-user' AND workspace_id IS NULL)
                   OR (scope = 'project' AND workspace_id IS NOT NULL
                       AND workspace_id = scope_id))
        )
        """,
        # Lists are per scope, newest change first (`updated_at` desc, then `id` desc).
        """
        CREATE INDEX memories_by_scope
            ON memories (scope, scope_id, updated_at DESC, memory_id DESC)
        """,
        # Project memories by workspace: the foreign key check on workspace removal.
        "CREATE INDEX memories_by_workspace ON memories (workspace_id)",
    ),
)
