"""Migration 9: the HTTP API's bearer tokens (issue 17, docs/reference/surfaces.md). Numbered 9 so
it never collides with another branch's migration 8. Released: never edit it.

- `http_tokens`: one row per bearer: its `tok_` ID, its scope (`read` or `control`), the
  SHA-256 of its secret (the secret itself is shown once and never stored), when it was made,
  and when it was revoked (null while it is valid). Rows are kept after revocation so the list
  says what existed; a revoked token authenticates nothing.
"""

from rutter_core.store.migrations.migration import Migration

MIGRATION = Migration(
    9,
    "http_tokens",
    (
        """
        CREATE TABLE http_tokens (
            token_id TEXT NOT NULL PRIMARY KEY CHECK (substr(token_id, 1, 4) = 'tok_'),
            scope TEXT NOT NULL CHECK (scope IN ('read', 'control')),
            secret_sha256 TEXT NOT NULL UNIQUE CHECK (length(secret_sha256) = 64),
            created_by TEXT NOT NULL CHECK (created_by IN ('cli', 'lsp', 'http_control')),
            created_at TEXT NOT NULL CHECK (created_at LIKE '____-__-__T__:__:__Z'),
            revoked_at TEXT CHECK (revoked_at IS NULL OR revoked_at LIKE '____-__-__T__:__:__Z')
        )
        """,
    ),
)
