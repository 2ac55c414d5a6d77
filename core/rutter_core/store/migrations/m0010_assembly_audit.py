"""Migration 10: the audit of context assemblies (issue 16 items 2-3, docs/reference/assembly.md).
Numbered 10 so that it cannot collide with the migrations of work done beside it (8 and 9 are
other issues'). Released: never edit it.

- `context_assemblies`: append-only, one row per assembly of a run: who asked and when, the
  budget, the fingerprint, and the audit document (`context_assembly.v1` without any text:
  per source its ID, version, SHA-256, estimated tokens, decision and reason, and the
  configured state counted per source kind). No title, body or pin text is stored, so deleting
  a memory leaves its ID, version and digest in the audits that delivered it and nothing else.
- `context_assembly_reports`: append-only, at most one row per assembly: the third fact, what an
  agent (or a person) reported it followed and did not follow of what that assembly delivered,
  as lists of the sources' IDs, with who reported and when. Never a text.
"""

from rutter_core.store.dialects import UniqueKey
from rutter_core.store.migrations.migration import KeyGuard, Migration

MIGRATION = Migration(
    10,
    "assembly_audit",
    (
        """
        CREATE TABLE context_assemblies (
            assembly_id TEXT NOT NULL PRIMARY KEY
                CHECK (substr(assembly_id, 1, 4) = 'asm_' AND length(assembly_id) = 30),
            run_id TEXT NOT NULL REFERENCES runs (run_id),
            thread_id TEXT NOT NULL REFERENCES threads (thread_id),
            workspace_id TEXT NOT NULL REFERENCES workspaces (workspace_id),
            revision INTEGER NOT NULL CHECK (revision >= 1),
            budget INTEGER NOT NULL CHECK (budget BETWEEN 1 AND 1000000),
            fingerprint TEXT NOT NULL CHECK (length(fingerprint) = 64),
            document_json TEXT NOT NULL CHECK (length(document_json) > 1),
            created_by TEXT NOT NULL CHECK (created_by IN ('cli', 'lsp', 'http_control', 'mcp')),
            created_at TEXT NOT NULL CHECK (created_at LIKE '____-__-__T__:__:__Z')
        )
        """,
        "CREATE INDEX context_assemblies_by_run ON context_assemblies (run_id, assembly_id)",
        """
        CREATE TABLE context_assembly_reports (
            assembly_id TEXT NOT NULL PRIMARY KEY
                REFERENCES context_assemblies (assembly_id),
            workspace_id TEXT NOT NULL REFERENCES workspaces (workspace_id),
            followed_json TEXT NOT NULL CHECK (length(followed_json) > 1),
            ignored_json TEXT NOT NULL CHECK (length(ignored_json) > 1),
            reported_by TEXT NOT NULL
                CHECK (reported_by IN ('cli', 'lsp', 'http_control', 'mcp')),
            reported_at TEXT NOT NULL CHECK (reported_at LIKE '____-__-__T__:__:__Z')
        )
        """,
    ),
    append_only=("context_assemblies", "context_assembly_reports"),
    key_guards=(
        KeyGuard("context_assemblies", (UniqueKey(("assembly_id",)),)),
        KeyGuard("context_assembly_reports", (UniqueKey(("assembly_id",)),)),
    ),
)
