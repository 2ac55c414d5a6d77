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
