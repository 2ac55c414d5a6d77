"""Ordered schema migrations, applied on open and recorded with a checksum (contract section 2).

Migrations are immutable once released: to change the schema, append a new one. Each is
applied in its own transaction together with its ledger row, so a failure leaves the store
at the previous version.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import insert, inspect, select
from sqlalchemy.engine import Connection

from rutter_core.kernel.clock import now_rfc3339
from rutter_core.kernel.errors import StoreError
from rutter_core.store import sqlite
from rutter_core.store.schema import schema_migrations

if TYPE_CHECKING:
    from rutter_core.store.engine import Store


@dataclass(frozen=True)
class Migration:
    """One schema step.

    `statements` must be dialect-neutral SQL. Tables listed in `append_only` get
    UPDATE/DELETE-rejecting triggers rendered by the dialect seam after the statements.
    """

    version: int
    name: str
    statements: tuple[str, ...]
    append_only: tuple[str, ...] = ()

    def rendered(self, dialect: str) -> tuple[str, ...]:
        """The statements exactly as applied on `dialect`."""
        triggers = tuple(
            stmt
            for table in self.append_only
            for stmt in sqlite.append_only_triggers(table, dialect=dialect)
        )
        return self.statements + triggers


def canonical_statement(statement: str) -> str:
    """Whitespace-insensitive form, so re-indenting a migration does not change its checksum."""
    return " ".join(statement.split())


def migration_checksum(migration: Migration, dialect: str) -> str:
    """sha256 of the canonical statements as applied (so trigger text changes are caught)."""
    canonical = [canonical_statement(s) for s in migration.rendered(dialect)]
    payload = json.dumps(canonical, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


_LEDGER_DDL = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER NOT NULL PRIMARY KEY CHECK (version > 0),
    name TEXT NOT NULL CHECK (length(name) > 0),
    checksum TEXT NOT NULL CHECK (length(checksum) = 64),
    applied_at TEXT NOT NULL
)
"""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(
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
    ),
    Migration(
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
            # (contract section 6). Revision 1 replaces nothing; every later one names the
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
    ),
    # Explicit user/project memory (issue 5). Only operator surfaces write it: the actor
    # CHECKs refuse a model, tool or system writer even through raw SQL. Lengths are in
    # characters here (dialect-neutral); the byte bounds are enforced in rutter_core.memory.
    # No history table and no full-text index: a deleted or replaced body lives nowhere else.
    Migration(
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
    ),
)


@dataclass(frozen=True)
class _Applied:
    version: int
    name: str
    checksum: str


def check_migration_list(migrations: Sequence[Migration]) -> None:
    """Programming errors in the code's list, caught before touching any database."""
    previous = 0
    for migration in migrations:
        if migration.version <= previous:
            raise ValueError(
                f"migration versions must be positive and strictly increasing: "
                f"{migration.version} follows {previous}"
            )
        if not migration.name or not migration.statements:
            raise ValueError(f"migration {migration.version} needs a name and statements")
        previous = migration.version


def _read_ledger(conn: Connection) -> dict[int, _Applied]:
    query = select(
        schema_migrations.c.version, schema_migrations.c.name, schema_migrations.c.checksum
    ).order_by(schema_migrations.c.version)
    return {
        int(row.version): _Applied(int(row.version), str(row.name), str(row.checksum))
        for row in conn.execute(query)
    }


def _pending(
    store: Store, applied: Mapping[int, _Applied], migrations: Sequence[Migration]
) -> list[Migration]:
    """Verify the ledger against the code and return what is still to apply, in order."""
    known = {m.version: m for m in migrations}
    for version, row in sorted(applied.items()):
        migration = known.get(version)
        if migration is None:
            raise StoreError(
                "unknown_migration",
                f"the store {store.display_url} records schema migration {version} "
                f"({row.name!r}), which this rutter does not know: it was written by a newer "
                "rutter. Upgrade rutter, or point --database-url / RUTTER_DATABASE_URL at "
                "another store.",
                details={"version": version, "name": row.name},
            )
        expected = migration_checksum(migration, store.dialect_name)
        if row.checksum != expected:
            raise StoreError(
                "migration_checksum_mismatch",
                f"schema migration {version} ({row.name!r}) in the store {store.display_url} "
                f"was applied with checksum {row.checksum[:12]}…, but this rutter's migration "
                f"{version} has {expected[:12]}…: the migration was edited after release. "
                "Restore its original statements (add a new migration for schema changes), "
                "or use a fresh store.",
                details={"version": version, "recorded": row.checksum, "expected": expected},
            )
    pending = [m for m in migrations if m.version not in applied]
    if pending and applied and pending[0].version < max(applied):
        raise StoreError(
            "migration_out_of_order",
            f"schema migration {pending[0].version} ({pending[0].name!r}) is missing from the "
            f"store {store.display_url}, which already has migration {max(applied)}; "
            "migrations must be appended after the newest released one.",
            details={"version": pending[0].version},
        )
    return pending


def apply_migrations(store: Store, migrations: Sequence[Migration]) -> None:
    """Bring the store up to date; safe when several processes open a fresh store at once."""
    check_migration_list(migrations)
    # Fast path without the write lock: the usual open finds everything applied.
    with store.read() as conn:
        has_ledger = inspect(conn).has_table(schema_migrations.name)
        applied = _read_ledger(conn) if has_ledger else {}
    if not _pending(store, applied, migrations):
        return
    while True:
        # Re-check under the write lock: another process may have migrated meanwhile.
        with store.write() as conn:
            conn.exec_driver_sql(_LEDGER_DDL)
            pending = _pending(store, _read_ledger(conn), migrations)
            if not pending:
                return
            migration = pending[0]
            for statement in migration.rendered(store.dialect_name):
                conn.exec_driver_sql(statement)
            conn.execute(
                insert(schema_migrations).values(
                    version=migration.version,
                    name=migration.name,
                    checksum=migration_checksum(migration, store.dialect_name),
                    applied_at=now_rfc3339(),
                )
            )
