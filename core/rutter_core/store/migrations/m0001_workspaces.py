"""Migration 1: registered workspaces (docs/reference/workspaces.md). Released: never edit it."""

from rutter_core.store.migrations.migration import Migration

MIGRATION = Migration(
    1,
    "workspaces",
    (
        # IDs are fully validated in code; the CHECKs are a cheap dialect-neutral backstop.
        """
        CREATE TABLE workspaces (
            workspace_id TEXT NOT NULL PRIMARY KEY
                CHECK (length(workspace_id) BETWEEN 1 AND 64
                       AND workspace_id = lower(workspace_id)
                       AND substr(workspace_id, 1, 1) NOT IN ('.', '_', '-')),
            root TEXT NOT NULL UNIQUE CHECK (length(root) > 0),
            created_at TEXT NOT NULL CHECK (created_at LIKE '____-__-__T__:__:__Z')
        )
        """,
    ),
)
