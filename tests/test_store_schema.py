"""The schema's single source: migrations are the DDL (released ones pinned by checksum), and
`store/schema.py`, the current shape queries use, equals what they build."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import inspect

from rutter_core.store import MIGRATIONS, Store, migration_checksum
from rutter_core.store.schema import full_text_tables, metadata
from tests.store_shapes import declared
from tests.testing import sqlite_file

# Stores record these when they apply a migration and refuse to open when the code's checksum
# differs: a released migration can never change. 1-3 recorded before the store became a
# package; 4 as main (949c448) applied it (the ledger of tests/fixtures/schema4/store.sql); 5
# with issue 13 (session continuity); 6 with issue 15 (pins, proposals, mcp checkpoints);
# 7 with issue 15 (transcript import); 8 with issue 16 (history search); 9 with issue 17 (HTTP
# bearer tokens); 10 with issue 16 (the audit of context assemblies).
RELEASED_CHECKSUMS = {
    1: "84050c41c8de4ac7de61c7ff6126f0faa02481e049dd04abdc1ac2b64c7991af",
    2: "b20a78d216606dd03257f1ef8ed2d5cc42396f9cbe29e45d29f5bed697997a1f",
    3: "511463a2e2b1281b3ce857ebaddf49a344460dcc76d8e23218528ec916982f07",
    4: "299439096381d591c060625656e82b3bb2c609158757bf765867636ea33bfcf4",
    5: "9fea747206c0b841be5de338847915595b8b13f940e9a5bd57bd1ab940cfd381",
    6: "a75276a6916e709719f7564618e7e2e32b9ba7a2b83f9c945bc38c9d60ada821",
    7: "44d55d3dfa5b9784e0b2934d6b17d3254e39bf34e8501215cecf22c8ba6d2b6c",
    8: "ae074ab5df466db23f149e0e7b204b7ae6ac346203384f13a9647a463cc3aa26",
    9: "6954cf202bb0ea5c6d4672a2e034138758ad091caf55c9e56bbf99bd12d9edbf",
    10: "622f754df0a26e30232dbda339e58bd416f021fcab85f1e114b7e50df950b76e",
}


@pytest.fixture
def db_path(store: Store) -> Path:
    """The file of the shared `store` fixture."""
    return sqlite_file(store)


def test_released_migrations_keep_their_checksums() -> None:
    released = {m.version: (m.name, migration_checksum(m, "sqlite")) for m in MIGRATIONS[:6]}
    assert released == {
        1: ("workspaces", RELEASED_CHECKSUMS[1]),
        2: ("runs", RELEASED_CHECKSUMS[2]),
        3: ("memory", RELEASED_CHECKSUMS[3]),
        4: ("append_only_keys", RELEASED_CHECKSUMS[4]),
        5: ("continuity_content", RELEASED_CHECKSUMS[5]),
        6: ("pins", RELEASED_CHECKSUMS[6]),
    }


def test_the_transcript_imports_migration_keeps_its_checksum() -> None:
    (migration,) = [m for m in MIGRATIONS if m.name == "transcript_imports"]
    assert (migration.version, migration_checksum(migration, "sqlite")) == (
        7,
        RELEASED_CHECKSUMS[7],
    )


def test_the_history_migration_keeps_its_checksum() -> None:
    (migration,) = [m for m in MIGRATIONS if m.name == "history"]
    assert (migration.version, migration_checksum(migration, "sqlite")) == (
        8,
        RELEASED_CHECKSUMS[8],
    )


_FULL_TEXT = set(full_text_tables)
# What FTS5 makes for each full-text table (its index, content, sizes and configuration).
_FULL_TEXT_COMPANIONS = {
    f"{name}_{part}"
    for name in _FULL_TEXT
    for part in ("data", "idx", "content", "docsize", "config")
}


def _full_text_built(raw: sqlite3.Connection, name: str) -> tuple[str, list[str]]:
    (sql,) = raw.execute("SELECT sql FROM sqlite_master WHERE name = ?", (name,)).fetchone()
    columns = [str(row[1]) for row in raw.execute(f"PRAGMA table_info({name})")]
    return " ".join(str(sql).split()[:6]), columns


def test_the_assembly_audit_migration_keeps_its_checksum() -> None:
    (migration,) = [m for m in MIGRATIONS if m.name == "assembly_audit"]
    assert (migration.version, migration_checksum(migration, "sqlite")) == (
        10,
        RELEASED_CHECKSUMS[10],
    )


def test_the_http_tokens_migration_keeps_its_checksum() -> None:
    (migration,) = [m for m in MIGRATIONS if m.name == "http_tokens"]
    assert (migration.version, migration_checksum(migration, "sqlite")) == (
        9,
        RELEASED_CHECKSUMS[9],
    )


def _reflected_type(column: dict[str, Any]) -> str:
    return str(column["type"])


def _built(conn: Any, raw: sqlite3.Connection, name: str) -> dict[str, Any]:
    inspector = inspect(conn)
    indexes = []
    for index in inspector.get_indexes(name):
        xinfo = raw.execute(f"PRAGMA index_xinfo({index['name']})").fetchall()
        # (seqno, cid, name, desc, coll, key): the key columns, in order, with their direction.
        ordered = [(str(row[2]), bool(row[3])) for row in xinfo if row[5]]
        assert [c for c, _ in ordered] == index["column_names"]
        where = index.get("dialect_options", {}).get("sqlite_where")
        indexes.append(
            (index["name"], ordered, bool(index["unique"]), None if where is None else str(where))
        )
    triggers = {
        str(row[0])
        for row in raw.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?", (name,)
        )
    }
    guards = {f"{name}_append_only_no_{verb}" for verb in ("update", "delete", "existing_key")}
    assert triggers in (set(), guards), f"{name} has some append-only guards only: {triggers}"
    return {
        "columns": [
            (c["name"], _reflected_type(c), c["nullable"]) for c in inspector.get_columns(name)
        ],
        "primary_key": inspector.get_pk_constraint(name)["constrained_columns"],
        "foreign_keys": sorted(
            (column, fk["referred_table"], referred)
            for fk in inspector.get_foreign_keys(name)
            for column, referred in zip(
                fk["constrained_columns"], fk["referred_columns"], strict=True
            )
        ),
        "unique": sorted(u["column_names"] for u in inspector.get_unique_constraints(name)),
        "indexes": sorted(indexes),
        "append_only": triggers == guards,
    }


def test_schema_module_is_the_shape_the_migrations_build(store: Store, db_path: Path) -> None:
    raw = sqlite3.connect(db_path)
    try:
        with store.read() as conn:
            built_tables = set(inspect(conn).get_table_names()) - _FULL_TEXT_COMPANIONS
            assert built_tables == set(metadata.tables) | _FULL_TEXT
            for name in sorted(_FULL_TEXT):
                assert _full_text_built(raw, name) == (
                    f"CREATE VIRTUAL TABLE {name} USING fts5(body,",
                    ["body"],
                )
            for table in metadata.sorted_tables:
                assert _built(conn, raw, table.name) == declared(table), table.name
    finally:
        raw.close()


def test_the_comparison_sees_a_difference(store: Store, db_path: Path) -> None:
    """The check above is not vacuous: an index the schema module does not know fails it."""
    with store.write() as conn:
        conn.exec_driver_sql("CREATE INDEX runs_by_mode ON runs (mode)")
    raw = sqlite3.connect(db_path)
    try:
        with store.read() as conn:
            runs = metadata.tables["runs"]
            assert _built(conn, raw, "runs") != declared(runs)
    finally:
        raw.close()


NOT_ACTORS = {"superseded_by"}
"""Columns named `*_by` that name no surface (a note's replacement)."""


def test_every_actor_column_has_its_person_beside_it() -> None:
    """docs/team.md, "People": a surface is never recorded without its person. A new table with
    an actor column (`created_by`, `answered_by`, ...) needs its `*_person` column too
    (nullable: rows from before name none)."""
    actors = [
        (table.name, column.name)
        for table in metadata.sorted_tables
        for column in table.columns
        if column.name.endswith("_by") and column.name not in NOT_ACTORS
    ]
    assert len(actors) >= 24
    for table, column in actors:
        person = metadata.tables[table].c.get(f"{column}_person")
        assert person is not None, (table, column)
        assert person.nullable, (table, column)
    # A message names the surface that received it (`source`) and its person likewise.
    assert metadata.tables["messages"].c["source_person"].nullable
