"""SQLAlchemy Core handles for querying the tables the migrations create.

DDL lives only in `migrations.py`; these objects are never used to create tables. A test
checks that they agree with the migrated schema.
"""

from __future__ import annotations

from sqlalchemy import Column, Integer, MetaData, String, Table

metadata = MetaData()

schema_migrations = Table(
    "schema_migrations",
    metadata,
    Column("version", Integer, primary_key=True),
    Column("name", String, nullable=False),
    Column("checksum", String, nullable=False),
    Column("applied_at", String, nullable=False),
)

workspaces = Table(
    "workspaces",
    metadata,
    Column("workspace_id", String, primary_key=True),
    Column("root", String, nullable=False, unique=True),
    Column("created_at", String, nullable=False),
)

memories = Table(
    "memories",
    metadata,
    Column("memory_id", String, primary_key=True),
    Column("scope", String, nullable=False),
    Column("scope_id", String, nullable=False),
    Column("workspace_id", String, nullable=True),
    Column("title", String, nullable=False),
    Column("content", String, nullable=False),
    Column("content_sha256", String, nullable=False),
    Column("status", String, nullable=False),
    Column("source_kind", String, nullable=False),
    Column("references_json", String, nullable=False),
    Column("retention_until", String, nullable=True),
    Column("redacted", Integer, nullable=False),
    Column("created_by", String, nullable=False),
    Column("updated_by", String, nullable=False),
    Column("version", Integer, nullable=False),
    Column("created_at", String, nullable=False),
    Column("updated_at", String, nullable=False),
)

missions = Table(
    "missions",
    metadata,
    Column("mission_id", String, primary_key=True),
    Column("workspace_id", String, nullable=False),
    Column("goal", String, nullable=False),
    Column("status", String, nullable=False),
    Column("created_by", String, nullable=False),
    Column("created_at", String, nullable=False),
    Column("updated_at", String, nullable=False),
)

threads = Table(
    "threads",
    metadata,
    Column("thread_id", String, primary_key=True),
    Column("workspace_id", String, nullable=False),
    Column("status", String, nullable=False),
    Column("created_by", String, nullable=False),
    Column("created_at", String, nullable=False),
    Column("updated_at", String, nullable=False),
)

sessions = Table(
    "sessions",
    metadata,
    Column("session_id", String, primary_key=True),
    Column("workspace_id", String, nullable=False),
    Column("thread_id", String, nullable=False),
    Column("status", String, nullable=False),
    Column("created_by", String, nullable=False),
    Column("created_at", String, nullable=False),
    Column("updated_at", String, nullable=False),
)

runs = Table(
    "runs",
    metadata,
    Column("run_id", String, primary_key=True),
    Column("workspace_id", String, nullable=False),
    Column("mission_id", String, nullable=False),
    Column("session_id", String, nullable=False),
    Column("thread_id", String, nullable=False),
    Column("profile", String, nullable=True),
    Column("mode", String, nullable=False),
    Column("target_path", String, nullable=False),
    Column("status", String, nullable=False),
    Column("created_by", String, nullable=False),
    Column("updated_by", String, nullable=False),
    Column("created_at", String, nullable=False),
    Column("updated_at", String, nullable=False),
)

continuity_nodes = Table(
    "continuity_nodes",
    metadata,
    Column("node_id", String, primary_key=True),
    Column("run_id", String, nullable=False),
    Column("session_id", String, nullable=False),
    Column("thread_id", String, nullable=False),
    Column("parent_node_id", String, nullable=True),
    Column("kind", String, nullable=False),
    Column("created_by", String, nullable=False),
    Column("created_at", String, nullable=False),
)

run_instruction_snapshots = Table(
    "run_instruction_snapshots",
    metadata,
    Column("run_id", String, primary_key=True),
    Column("revision", Integer, primary_key=True),
    Column("snapshot_json", String, nullable=False),
    Column("fingerprint", String, nullable=False),
    Column("confirmed_by", String, nullable=False),
    Column("confirmed_at", String, nullable=False),
    Column("replaces_fingerprint", String, nullable=True),
)
