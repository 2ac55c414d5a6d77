"""Migration 6 ("pins"): a store made by main at schema 5 (a47991e, with runs, memories, a
message, a note and a checkpoint: `tests/fixtures/schema5/store.sql`) opens, upgrades in one
checksummed transaction, keeps every row, and its rebuilt `continuity_nodes` keeps every index,
reference and append-only guard while it now takes checkpoints written by `mcp`."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from rutter_core.app.continuity import CheckpointParams, ShowNodeParams
from rutter_core.app.facade import Rutter
from rutter_core.app.pins import AddPinParams, ListPinsParams
from rutter_core.app.runs import ListRunsParams
from rutter_core.kernel.errors import ConflictError, StoreError
from rutter_core.store import MIGRATIONS, Migration, migration_checksum, open_store
from rutter_core.store.migrations import TableRebuild
from tests.schema5_store import (
    NOW,
    TABLES,
    main_store,
)


def raw(db: Path, sql: str, *params: object) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(db)
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        with conn:
            return [tuple(row) for row in conn.execute(sql, params)]
    finally:
        conn.close()


def schema_objects(db: Path, table: str) -> list[tuple[object, ...]]:
    return raw(
        db,
        "SELECT type, name FROM sqlite_master WHERE tbl_name = ? AND name NOT LIKE 'sqlite_%' "
        "ORDER BY type, name",
        table,
    )


def test_the_dump_is_a_schema_5_store_with_a_checkpoint(tmp_path: Path) -> None:
    db = main_store(tmp_path)
    assert [row[0] for row in raw(db, "SELECT version FROM schema_migrations")] == [1, 2, 3, 4, 5]
    assert raw(db, "SELECT count(*) FROM continuity_snapshots") == [(1,)]
    assert raw(db, "SELECT count(*) FROM continuity_nodes") == [(3,)]


def test_it_upgrades_keeping_every_row_index_and_guard(tmp_path: Path) -> None:
    db = main_store(tmp_path)
    before = {table: raw(db, f"SELECT * FROM {table} ORDER BY 1") for table in TABLES}
    # columns later migrations add (after migration 6) are compared by what the store held
    width = {table: len(rows[0]) for table, rows in before.items() if rows}
    objects = schema_objects(db, "continuity_nodes")
    assert ("trigger", "continuity_nodes_append_only_no_update") in objects
    with open_store(f"sqlite:///{db}") as store:
        rutter = Rutter(store)
        checkpoint = raw(db, "SELECT node_id FROM continuity_snapshots")[0][0]
        assert isinstance(checkpoint, str)
        node = rutter.continuity.node(ShowNodeParams(node_id=checkpoint))  # verified snapshot
        assert node.snapshot is not None
    ledger = raw(db, "SELECT version, name, checksum FROM schema_migrations ORDER BY version")
    assert ledger[5] == (6, "pins", migration_checksum(MIGRATIONS[5], "sqlite"))
    assert [row[0] for row in ledger] == [m.version for m in MIGRATIONS]
    after = {table: raw(db, f"SELECT * FROM {table} ORDER BY 1") for table in TABLES}
    assert {t: [row[: width.get(t)] for row in rows] for t, rows in after.items()} == before
    assert schema_objects(db, "continuity_nodes") == objects  # same indexes and guards
    assert raw(db, "PRAGMA foreign_key_check") == []
    assert "'mcp'" in str(
        raw(db, "SELECT sql FROM sqlite_master WHERE name = 'continuity_nodes'")[0][0]
    )


def test_the_rebuilt_table_still_refuses_rewrites_and_dangling_references(tmp_path: Path) -> None:
    db = main_store(tmp_path)
    open_store(f"sqlite:///{db}").close()
    node_id, run_id, session_id, thread_id = raw(
        db, "SELECT node_id, run_id, session_id, thread_id FROM continuity_nodes LIMIT 1"
    )[0]
    for statement in (
        "UPDATE continuity_nodes SET kind = 'x'",
        "DELETE FROM continuity_nodes",
        f"INSERT OR REPLACE INTO continuity_nodes SELECT * FROM continuity_nodes "
        f"WHERE node_id = '{node_id}'",
    ):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            raw(db, statement)
    insert = (
        "INSERT INTO continuity_nodes (node_id, run_id, session_id, thread_id, parent_node_id, "
        "kind, created_by, created_at) VALUES (?, ?, ?, ?, ?, 'checkpoint', ?, ?)"
    )
    fresh = "node_01M8Y3HJTQYDNPR8CJ56SS1T0B"
    with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"):
        raw(db, insert, fresh, "run_01M8Y3HJTQYDNPR8CJ56SS1T0B", session_id, thread_id,
            node_id, "mcp", NOW)  # fmt: skip
    with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
        raw(db, insert, fresh, run_id, session_id, thread_id, node_id, "model", NOW)
    raw(db, insert, fresh, run_id, session_id, thread_id, node_id, "mcp", NOW)
    with pytest.raises(sqlite3.IntegrityError, match=r"UNIQUE|append-only"):
        raw(db, insert.replace("'checkpoint'", "'root'"), "node_01M8Y3HJTQYDNPR8CJ56SS1T0C",
            run_id, session_id, thread_id, None, "cli", NOW)  # fmt: skip


def test_the_upgraded_store_takes_pins_and_mcp_checkpoints(tmp_path: Path) -> None:
    db = main_store(tmp_path)
    with open_store(f"sqlite:///{db}") as store:
        rutter = Rutter(store)
        run = rutter.runs.list(ListRunsParams(all=True)).runs[0]
        node = rutter.continuity.checkpoint(
            CheckpointParams(run_id=run.run_id, title="by an agent"), actor="mcp"
        )
        assert node.parent_node_id is not None  # below the checkpoint the dump holds
        rutter.pins.add(AddPinParams(thread_id=run.thread_id, text="kept"), actor="cli")
        assert rutter.pins.list(ListPinsParams(run_id=run.run_id)).count == 1
        # The connection that rebuilt the table checks references again.
        for _ in range(3):
            with pytest.raises(ConflictError), store.write() as conn:
                conn.exec_driver_sql(
                    "INSERT INTO pins (pin_id, thread_id, text, redacted, proposal_id, version, "
                    "created_by, updated_by, created_at, updated_at) "
                    "VALUES ('pin_01M8Y3HJTQYDNPR8CJ56SS1T0B', "
                    "'thr_01M8Y3HJTQYDNPR8CJ56SS1T0B', 'x', 0, NULL, 1, 'cli', 'cli', ?, ?)",
                    (NOW, NOW),
                )


def test_a_rebuild_that_would_leave_a_dangling_reference_changes_nothing(tmp_path: Path) -> None:
    db = main_store(tmp_path)
    before = {table: raw(db, f"SELECT * FROM {table} ORDER BY 1") for table in TABLES}
    # columns later migrations add (after migration 6) are compared by what the store held
    width = {table: len(rows[0]) for table, rows in before.items() if rows}
    # A broken migration: it rebuilds `continuity_nodes` keeping only root nodes, so the
    # checkpoint's snapshot (and a child node) would refer to rows that are gone.
    broken = Migration(
        6,
        "broken",
        ("DELETE FROM continuity_nodes__kept WHERE kind <> 'root'",),
        rebuilds=(
            TableRebuild(
                "continuity_nodes__kept",
                "node_id TEXT PRIMARY KEY, kind TEXT",
                ("node_id", "kind"),
            ),
        ),
    )
    raw(db, "CREATE TABLE continuity_nodes__kept (node_id TEXT PRIMARY KEY, kind TEXT)")
    raw(db, "INSERT INTO continuity_nodes__kept SELECT node_id, kind FROM continuity_nodes")
    raw(
        db,
        "CREATE TABLE kept_refs "
        "(node_id TEXT NOT NULL REFERENCES continuity_nodes__kept (node_id))",
    )
    raw(db, "INSERT INTO kept_refs SELECT node_id FROM continuity_nodes__kept WHERE kind <> 'root'")
    with pytest.raises(StoreError) as raised:
        open_store(f"sqlite:///{db}", migrations=(*MIGRATIONS[:5], broken))
    assert raised.value.code == "migration_failed"
    assert [row[0] for row in raw(db, "SELECT version FROM schema_migrations")] == [1, 2, 3, 4, 5]
    assert raw(db, "SELECT count(*) FROM continuity_nodes__kept") == [(3,)]
    after = {table: raw(db, f"SELECT * FROM {table} ORDER BY 1") for table in TABLES}
    assert {t: [row[: width.get(t)] for row in rows] for t, rows in after.items()} == before
