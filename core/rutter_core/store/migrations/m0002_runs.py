"""Migration 2: missions, threads, sessions, runs, their root continuity nodes and the
append-only ledger of pinned instruction snapshots (docs/reference/runs.md). Released: never edit
it.
"""

from rutter_core.store.migrations.migration import Migration

MIGRATION = Migration(
    2,
    "runs",
    (
        # A Mission is what a person wants achieved; each Run works on one, in one
        # Session, as part of a Thread (a conversation that several runs may continue).
        # IDs are validated in code; the CHECKs are dialect-neutral backstops. Actors are
        # the operator surfaces of rutter_core.kernel.actors, repeated here as in migration 3.
        """
        CREATE TABLE missions (
            mission_id TEXT NOT NULL PRIMARY KEY
                CHECK (substr(mission_id, 1, 4) = 'msn_' AND length(mission_id) = 30),
            workspace_id TEXT NOT NULL REFERENCES workspaces (workspace_id),
            goal TEXT NOT NULL CHECK (length(goal) > 0),
            status TEXT NOT NULL CHECK (status IN ('active', 'closed')),
            created_by TEXT NOT NULL CHECK (created_by IN ('cli', 'lsp', 'http_control')),
            created_at TEXT NOT NULL CHECK (created_at LIKE '____-__-__T__:__:__Z'),
            updated_at TEXT NOT NULL CHECK (updated_at LIKE '____-__-__T__:__:__Z')
        )
        """,
        """
        CREATE TABLE threads (
            thread_id TEXT NOT NULL PRIMARY KEY
                CHECK (substr(thread_id, 1, 4) = 'thr_' AND length(thread_id) = 30),
            workspace_id TEXT NOT NULL REFERENCES workspaces (workspace_id),
            status TEXT NOT NULL CHECK (status IN ('active', 'archived')),
            created_by TEXT NOT NULL CHECK (created_by IN ('cli', 'lsp', 'http_control')),
            created_at TEXT NOT NULL CHECK (created_at LIKE '____-__-__T__:__:__Z'),
            updated_at TEXT NOT NULL CHECK (updated_at LIKE '____-__-__T__:__:__Z')
        )
        """,
        """
        CREATE TABLE sessions (
            session_id TEXT NOT NULL PRIMARY KEY
                CHECK (substr(session_id, 1, 4) = 'ses_' AND length(session_id) = 30),
            workspace_id TEXT NOT NULL REFERENCES workspaces (workspace_id),
            thread_id TEXT NOT NULL REFERENCES threads (thread_id),
            status TEXT NOT NULL CHECK (status IN ('active', 'closed')),
            created_by TEXT NOT NULL CHECK (created_by IN ('cli', 'lsp', 'http_control')),
            created_at TEXT NOT NULL CHECK (created_at LIKE '____-__-__T__:__:__Z'),
            updated_at TEXT NOT NULL CHECK (updated_at LIKE '____-__-__T__:__:__Z')
        )
        """,
        """
        CREATE TABLE runs (
            run_id TEXT NOT NULL PRIMARY KEY
                CHECK (substr(run_id, 1, 4) = 'run_' AND length(run_id) = 30),
            workspace_id TEXT NOT NULL REFERENCES workspaces (workspace_id),
            mission_id TEXT NOT NULL REFERENCES missions (mission_id),
            session_id TEXT NOT NULL REFERENCES sessions (session_id),
            thread_id TEXT NOT NULL REFERENCES threads (thread_id),
            profile TEXT CHECK (profile IS NULL OR length(profile) BETWEEN 1 AND 64),
            mode TEXT NOT NULL CHECK (mode IN ('ask', 'auto', 'full')),
            target_path TEXT NOT NULL CHECK (length(target_path) > 0),
            status TEXT NOT NULL CHECK (status IN ('created', 'running', 'paused',
                                                   'completed', 'failed', 'cancelled')),
            created_by TEXT NOT NULL CHECK (created_by IN ('cli', 'lsp', 'http_control')),
            updated_by TEXT NOT NULL CHECK (updated_by IN ('cli', 'lsp', 'http_control')),
            created_at TEXT NOT NULL CHECK (created_at LIKE '____-__-__T__:__:__Z'),
            updated_at TEXT NOT NULL CHECK (updated_at LIKE '____-__-__T__:__:__Z')
        )
        """,
        "CREATE INDEX runs_by_workspace ON runs (workspace_id, status)",
        "CREATE INDEX runs_by_thread ON runs (thread_id)",
        # Append-only: a later issue adds checkpoint nodes below each run's root node.
        """
        CREATE TABLE continuity_nodes (
            node_id TEXT NOT NULL PRIMARY KEY
                CHECK (substr(node_id, 1, 5) = 'node_' AND length(node_id) = 31),
            run_id TEXT NOT NULL REFERENCES runs (run_id),
            session_id TEXT NOT NULL REFERENCES sessions (session_id),
            thread_id TEXT NOT NULL REFERENCES threads (thread_id),
            parent_node_id TEXT REFERENCES continuity_nodes (node_id)
                CHECK (parent_node_id IS NULL OR parent_node_id <> node_id),
            kind TEXT NOT NULL CHECK (length(kind) BETWEEN 1 AND 32),
            created_by TEXT NOT NULL CHECK (created_by IN ('cli', 'lsp', 'http_control')),
            created_at TEXT NOT NULL CHECK (created_at LIKE '____-__-__T__:__:__Z')
        )
        """,
        """
        CREATE UNIQUE INDEX continuity_nodes_one_root_per_run
            ON continuity_nodes (run_id) WHERE kind = 'root'
        """,
        "CREATE INDEX continuity_nodes_by_session ON continuity_nodes (session_id)",
        # Append-only revision ledger of each run's pinned instruction snapshot
        # (docs/reference/runs.md). Revision 1 replaces nothing; every later one names the
        # fingerprint it replaced.
        """
        CREATE TABLE run_instruction_snapshots (
            run_id TEXT NOT NULL REFERENCES runs (run_id),
            revision INTEGER NOT NULL CHECK (revision > 0),
            snapshot_json TEXT NOT NULL CHECK (length(snapshot_json) > 0),
            fingerprint TEXT NOT NULL CHECK (length(fingerprint) = 64),
            confirmed_by TEXT NOT NULL
                CHECK (confirmed_by IN ('cli', 'lsp', 'http_control')),
            confirmed_at TEXT NOT NULL CHECK (confirmed_at LIKE '____-__-__T__:__:__Z'),
            replaces_fingerprint TEXT
                CHECK (replaces_fingerprint IS NULL OR length(replaces_fingerprint) = 64),
            PRIMARY KEY (run_id, revision),
            CHECK ((revision = 1) = (replaces_fingerprint IS NULL))
        )
        """,
    ),
    append_only=("continuity_nodes", "run_instruction_snapshots"),
)
