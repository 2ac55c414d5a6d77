"""Migration 6: thread pins and pin proposals (issue 15, docs/reference/pins.md and
docs/reference/surfaces.md), and the MCP server as a writer of checkpoints. Released: never edit it.

- `pin_proposals`: what an agent proposed to pin (the exact text, redacted per section 8) and
  how the operator answered (`pin`, `discuss` or `custom`), once: an answered proposal stays
  answered. Proposed by any surface, `mcp` included; answered by an operator surface only.
- `pins`: a thread's pins, versioned (optimistic `version`) like notes and memories. Written
  by operator surfaces only: `created_by`/`updated_by` refuse `mcp` (and any other actor) even
  through raw SQL, as `memories` does since migration 3. The 32-pin and 32768-character bounds
  of a thread are the service's, under the write lock; the 8192-character bound of one pin is
  also a CHECK here.
- `continuity_nodes` is rebuilt with `mcp` among the writers of `created_by` (an agent takes
  checkpoints through the MCP server); its indexes and guards are created again as migrations
  2, 4 and 5 made them.
"""

from rutter_core.store.dialects import UniqueKey
from rutter_core.store.migrations.migration import KeyGuard, Migration, TableRebuild

_CONTINUITY_NODES = """
    node_id TEXT NOT NULL PRIMARY KEY
        CHECK (substr(node_id, 1, 5) = 'node_' AND length(node_id) = 31),
    run_id TEXT NOT NULL REFERENCES runs (run_id),
    session_id TEXT NOT NULL REFERENCES sessions (session_id),
    thread_id TEXT NOT NULL REFERENCES threads (thread_id),
    parent_node_id TEXT REFERENCES continuity_nodes (node_id)
        CHECK (parent_node_id IS NULL OR parent_node_id <> node_id),
    kind TEXT NOT NULL CHECK (length(kind) BETWEEN 1 AND 32),
    created_by TEXT NOT NULL CHECK (created_by IN ('cli', 'lsp', 'http_control', 'mcp')),
    created_at TEXT NOT NULL CHECK (created_at LIKE '____-__-__T__:__:__Z')
"""

_NODE_COLUMNS = (
    "node_id",
    "run_id",
    "session_id",
    "thread_id",
    "parent_node_id",
    "kind",
    "created_by",
    "created_at",
)

MIGRATION = Migration(
    6,
    "pins",
    (
        """
        CREATE UNIQUE INDEX continuity_nodes_one_root_per_run
            ON continuity_nodes (run_id) WHERE kind = 'root'
        """,
        "CREATE INDEX continuity_nodes_by_session ON continuity_nodes (session_id)",
        "CREATE INDEX continuity_nodes_by_run ON continuity_nodes (run_id, kind)",
        """
        CREATE TABLE pin_proposals (
            proposal_id TEXT NOT NULL PRIMARY KEY
                CHECK (substr(proposal_id, 1, 5) = 'prop_' AND length(proposal_id) = 31),
            thread_id TEXT NOT NULL REFERENCES threads (thread_id),
            workspace_id TEXT NOT NULL REFERENCES workspaces (workspace_id),
            run_id TEXT REFERENCES runs (run_id),
            text TEXT NOT NULL CHECK (length(text) BETWEEN 1 AND 8192),
            redacted INTEGER NOT NULL CHECK (redacted IN (0, 1)),
            proposed_by TEXT NOT NULL
                CHECK (proposed_by IN ('cli', 'lsp', 'http_control', 'mcp')),
            status TEXT NOT NULL CHECK (status IN ('pending', 'answered')),
            choice TEXT CHECK (choice IS NULL OR choice IN ('pin', 'discuss', 'custom')),
            reply TEXT CHECK (reply IS NULL OR length(reply) BETWEEN 1 AND 8192),
            reply_redacted INTEGER NOT NULL CHECK (reply_redacted IN (0, 1)),
            pin_id TEXT CHECK (pin_id IS NULL OR length(pin_id) = 30),
            answered_by TEXT
                CHECK (answered_by IS NULL OR answered_by IN ('cli', 'lsp', 'http_control')),
            created_at TEXT NOT NULL CHECK (created_at LIKE '____-__-__T__:__:__Z'),
            answered_at TEXT
                CHECK (answered_at IS NULL OR answered_at LIKE '____-__-__T__:__:__Z'),
            CHECK ((status = 'pending') = (choice IS NULL)),
            CHECK ((status = 'pending') = (answered_by IS NULL)),
            CHECK ((status = 'pending') = (answered_at IS NULL)),
            CHECK (pin_id IS NULL OR choice IN ('pin', 'custom')),
            CHECK (reply IS NULL OR choice IN ('discuss', 'custom'))
        )
        """,
        "CREATE INDEX pin_proposals_by_status ON pin_proposals (status, workspace_id)",
        "CREATE INDEX pin_proposals_by_thread ON pin_proposals (thread_id)",
        """
        CREATE TABLE pins (
            pin_id TEXT NOT NULL PRIMARY KEY
                CHECK (substr(pin_id, 1, 4) = 'pin_' AND length(pin_id) = 30),
            thread_id TEXT NOT NULL REFERENCES threads (thread_id),
            text TEXT NOT NULL CHECK (length(text) BETWEEN 1 AND 8192),
            redacted INTEGER NOT NULL CHECK (redacted IN (0, 1)),
            proposal_id TEXT REFERENCES pin_proposals (proposal_id),
            version INTEGER NOT NULL CHECK (version >= 1),
            created_by TEXT NOT NULL CHECK (created_by IN ('cli', 'lsp', 'http_control')),
            updated_by TEXT NOT NULL CHECK (updated_by IN ('cli', 'lsp', 'http_control')),
            created_at TEXT NOT NULL CHECK (created_at LIKE '____-__-__T__:__:__Z'),
            updated_at TEXT NOT NULL CHECK (updated_at LIKE '____-__-__T__:__:__Z')
        )
        """,
        "CREATE INDEX pins_by_thread ON pins (thread_id)",
    ),
    append_only=("continuity_nodes",),
    key_guards=(
        KeyGuard(
            "continuity_nodes",
            (UniqueKey(("node_id",)), UniqueKey(("run_id",), partial=("kind", "root"))),
        ),
    ),
    rebuilds=(
        TableRebuild(
            "continuity_nodes",
            _CONTINUITY_NODES,
            _NODE_COLUMNS,
        ),
    ),
)
