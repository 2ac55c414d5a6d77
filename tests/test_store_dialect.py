"""The dialect seam: engines without a dialect, typed store failures, the append-only guard
against re-inserted keys, the purge of deleted content, and change feeds."""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DatabaseError, IntegrityError, OperationalError

from rutter_core.kernel.errors import ConflictError, StoreError
from rutter_core.store import Store, open_store
from rutter_core.store.changes import StoreChanges
from rutter_core.store.dialects import ChangeFeed
from rutter_core.store.dialects.sqlite import SqliteDialect
from tests.conftest import NAMES_DESCRIPTORS, synced_files
from tests.testing import sqlite_file

T0 = "2026-01-01T00:00:00Z"
RUN = "run_" + "0" * 26
ROOT = "node_" + "0" * 26
FP1, FP2 = "1" * 64, "2" * 64


@pytest.fixture
def db_path(store: Store) -> Path:
    """The file of the shared `store` fixture."""
    return sqlite_file(store)


def raw(db_path: Path) -> sqlite3.Connection:
    """Another client with no rutter code at all."""
    return sqlite3.connect(db_path, timeout=5, isolation_level=None)


# --- engines without a dialect ------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "engine"),
    [
        ("oracle://rutter:s3cret-pw@db.example:1521/rutter", "oracle"),
        ("mssql+pyodbc://rutter:s3cret-pw@db.example/rutter", "mssql"),
        ("mysql://rutter:s3cret-pw@db.example/rutter", "mysql"),
    ],
)
def test_engine_without_a_dialect_is_refused_at_open(url: str, engine: str) -> None:
    with pytest.raises(StoreError) as info:
        open_store(url)
    error = info.value
    assert error.code == "unsupported_database"
    assert engine in error.message
    assert error.details["engine"] == engine
    assert "s3cret" not in str(error.to_json())


# --- typed failures -----------------------------------------------------------------------


def test_a_file_that_is_not_a_database_is_store_corrupt(tmp_path: Path) -> None:
    db_path = tmp_path / "garbage.db"
    db_path.write_bytes(b"these are not the pages you are looking for\n" * 200)
    with pytest.raises(StoreError) as info:
        open_store(f"sqlite:///{db_path}")
    assert info.value.code == "store_corrupt"
    assert isinstance(info.value.__cause__, DatabaseError)


def test_a_store_opened_read_only_refuses_writes_as_store_read_only(
    store: Store, db_path: Path
) -> None:
    with open_store(f"sqlite:///file:{db_path}?mode=ro&uri=true") as read_only:
        with read_only.read() as conn:
            assert conn.exec_driver_sql("SELECT count(*) FROM workspaces").scalar() == 0
        with pytest.raises(StoreError) as info, read_only.write() as conn:
            conn.exec_driver_sql(
                "INSERT INTO workspaces (workspace_id, root, created_at) "
                f"VALUES ('a', '/a', '{T0}')"
            )
    assert info.value.code == "store_read_only"


def _grow_past_the_page_limit(conn: Connection) -> None:
    pages = conn.exec_driver_sql("PRAGMA page_count").scalar()
    conn.exec_driver_sql(f"PRAGMA max_page_count = {pages}")
    conn.exec_driver_sql("INSERT INTO ballast VALUES (randomblob(1000000))")


def test_a_store_that_cannot_grow_is_store_full(store: Store) -> None:
    with store.write() as conn:
        conn.exec_driver_sql("CREATE TABLE ballast (body BLOB NOT NULL)")
    with pytest.raises(StoreError) as info, store.write() as conn:
        _grow_past_the_page_limit(conn)
    assert info.value.code == "store_full"
    store.close()  # the pooled connection keeps its page limit: start afresh


def test_a_bug_in_a_statement_stays_a_raw_error(store: Store) -> None:
    with pytest.raises(OperationalError, match="no such table"), store.write() as conn:
        conn.exec_driver_sql("INSERT INTO nowhere VALUES (1)")


# --- append-only tables refuse a key that exists ------------------------------------------


def _ledger_rows(store: Store) -> None:
    """One run with its root node and revision 1, written as plain rows."""
    ids = {prefix: f"{prefix}_" + "0" * 26 for prefix in ("msn", "thr", "ses")}
    with store.write() as conn:
        for statement in (
            f"INSERT INTO workspaces (workspace_id, root, created_at) VALUES ('a', '/a', '{T0}')",
            f"INSERT INTO missions VALUES ('{ids['msn']}', 'a', 'goal', 'active', 'cli', "
            f"'{T0}', '{T0}', NULL)",
            f"INSERT INTO threads VALUES ('{ids['thr']}', 'a', 'active', 'cli', "
            f"'{T0}', '{T0}', NULL)",
            f"INSERT INTO sessions VALUES ('{ids['ses']}', 'a', '{ids['thr']}', 'active', "
            f"'cli', '{T0}', '{T0}', NULL)",
            f"INSERT INTO runs VALUES ('{RUN}', 'a', '{ids['msn']}', '{ids['ses']}', "
            f"'{ids['thr']}', NULL, 'ask', 'x.go', 'created', 'cli', 'cli', '{T0}', '{T0}', "
            "NULL, NULL)",
            f"INSERT INTO continuity_nodes VALUES ('{ROOT}', '{RUN}', '{ids['ses']}', "
            f"'{ids['thr']}', NULL, 'root', 'cli', '{T0}', NULL)",
            f"INSERT INTO run_instruction_snapshots VALUES ('{RUN}', 1, '{{}}', '{FP1}', 'cli', "
            f"'{T0}', NULL, NULL)",
        ):
            conn.exec_driver_sql(statement)


def _node(node_id: str, *, kind: str, parent: str | None) -> str:
    parent_sql = "NULL" if parent is None else f"'{parent}'"
    return (
        f"'{node_id}', run_id, session_id, thread_id, {parent_sql}, '{kind}', 'lsp', "
        f"'2026-02-02T00:00:00Z', NULL FROM continuity_nodes WHERE node_id = '{ROOT}'"
    )


_SECOND = "node_" + "1" * 26
_REFUSED = [
    # Re-inserting an existing key, with every conflict clause.
    f"INSERT INTO continuity_nodes SELECT {_node(ROOT, kind='root', parent=None)}",
    f"INSERT OR REPLACE INTO continuity_nodes SELECT {_node(ROOT, kind='root', parent=None)}",
    f"REPLACE INTO continuity_nodes SELECT {_node(ROOT, kind='note', parent=None)}",
    f"INSERT OR IGNORE INTO continuity_nodes SELECT {_node(ROOT, kind='root', parent=None)}",
    # A second root for the run would replace the first through the partial unique index.
    f"INSERT OR REPLACE INTO continuity_nodes SELECT {_node(_SECOND, kind='root', parent=None)}",
    # So would an explicit rowid.
    "INSERT OR REPLACE INTO continuity_nodes (rowid, node_id, run_id, session_id, thread_id, "
    "parent_node_id, kind, created_by, created_at, created_by_person) "
    f"SELECT rowid, {_node(_SECOND, kind='x', parent=ROOT)}",
    f"INSERT INTO run_instruction_snapshots VALUES ('{RUN}', 1, '{{}}', '{FP2}', 'lsp', "
    f"'{T0}', NULL, NULL)",
    f"INSERT OR REPLACE INTO run_instruction_snapshots VALUES ('{RUN}', 1, '{{\"x\": 1}}', "
    f"'{FP2}', 'lsp', '{T0}', NULL, NULL)",
    "INSERT OR REPLACE INTO run_instruction_snapshots (rowid, run_id, revision, snapshot_json, "
    "fingerprint, confirmed_by, confirmed_at, replaces_fingerprint) SELECT rowid, run_id, 2, "
    f"snapshot_json, '{FP2}', 'lsp', confirmed_at, '{FP1}' FROM run_instruction_snapshots",
]


def _ledgers(db_path: Path) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    conn = raw(db_path)
    try:
        nodes = conn.execute("SELECT rowid, * FROM continuity_nodes ORDER BY rowid").fetchall()
        revisions = conn.execute(
            "SELECT rowid, * FROM run_instruction_snapshots ORDER BY rowid"
        ).fetchall()
    finally:
        conn.close()
    return nodes, revisions


@pytest.mark.parametrize("statement", _REFUSED)
def test_append_only_tables_refuse_an_insert_whose_key_exists(
    store: Store, db_path: Path, statement: str
) -> None:
    _ledger_rows(store)
    before = _ledgers(db_path)
    with pytest.raises(ConflictError) as info, store.write() as conn:
        conn.exec_driver_sql(statement)
    assert info.value.details == {"constraint": "append_only"}
    assert "a row with this key already exists" in str(info.value.__cause__)
    other = raw(db_path)
    try:
        with pytest.raises(sqlite3.IntegrityError, match="a row with this key already exists"):
            other.execute(statement)
    finally:
        other.close()
    assert _ledgers(db_path) == before


def test_append_only_tables_still_take_new_keys(store: Store, db_path: Path) -> None:
    _ledger_rows(store)
    with store.write() as conn:
        conn.exec_driver_sql(
            f"INSERT INTO continuity_nodes SELECT {_node(_SECOND, kind='checkpoint', parent=ROOT)}"
        )
        conn.exec_driver_sql(
            f"INSERT INTO run_instruction_snapshots VALUES ('{RUN}', 2, '{{}}', '{FP2}', "
            f"'lsp', '{T0}', '{FP1}', NULL)"
        )
    nodes, revisions = _ledgers(db_path)
    assert [(n[1], n[6]) for n in nodes] == [(ROOT, "root"), (_SECOND, "checkpoint")]
    assert [(r[2], r[4]) for r in revisions] == [(1, FP1), (2, FP2)]


# --- purge --------------------------------------------------------------------------------


def _files_hold(db_path: Path, marker: bytes) -> bool:
    files = [db_path.with_name(db_path.name + suffix) for suffix in ("", "-wal", "-shm")]
    return any(marker in path.read_bytes() for path in files if path.exists())


def test_purge_leaves_deleted_content_in_no_file(tmp_path: Path) -> None:
    db_path = tmp_path / "purge.db"
    marker = b"purge-me-7f3a9c"
    insert = (
        "INSERT INTO workspaces (workspace_id, root, created_at) "
        f"VALUES ('a', '/{marker.decode()}', '{T0}')"
    )
    with open_store(f"sqlite:///{db_path}", busy_timeout_ms=200) as store:
        with store.write() as conn:
            conn.exec_driver_sql(insert)
        with store.write() as conn:
            conn.exec_driver_sql("DELETE FROM workspaces")
        assert _files_hold(db_path, marker)  # the WAL still has the inserted page
        reader = raw(db_path)
        try:
            reader.execute("BEGIN")
            reader.execute("SELECT count(*) FROM workspaces").fetchone()  # an older snapshot
            assert store.purge() is False
        finally:
            reader.close()
        assert store.purge() is True
        assert not _files_hold(db_path, marker)

        # The same through a purging write, whose commit only the purge (or, when a reader
        # keeps that from completing, an fsync of the WAL) makes durable.
        with store.write() as conn:
            conn.exec_driver_sql(insert)
        reader = raw(db_path)
        try:
            reader.execute("BEGIN")
            reader.execute("SELECT count(*) FROM workspaces").fetchone()
            with store.purging_write() as purge:
                purge.conn.exec_driver_sql("DELETE FROM workspaces")
            assert purge.purged is False
            assert _files_hold(db_path, marker)  # what `purged: false` warns of
            other = raw(db_path)
            try:  # committed all the same: another client sees the delete
                assert other.execute("SELECT count(*) FROM workspaces").fetchone() == (0,)
            finally:
                other.close()
        finally:
            reader.close()
        assert store.purge() is True
        assert not _files_hold(db_path, marker)


def test_a_write_left_unsynced_by_an_incomplete_purge_that_cannot_be_synced_fails_typed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An fsync that fails (EIO) cannot be caused on demand on a healthy disk: it is replaced.
    def failing_fsync(fd: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    db_path = tmp_path / "unsynced.db"
    with open_store(f"sqlite:///{db_path}", busy_timeout_ms=200) as store:
        reader = raw(db_path)
        try:
            reader.execute("BEGIN")
            reader.execute("SELECT count(*) FROM workspaces").fetchone()  # the purge can't finish
            monkeypatch.setattr(os, "fsync", failing_fsync)
            with pytest.raises(StoreError) as info, store.purging_write() as purge:
                purge.conn.exec_driver_sql(
                    "INSERT INTO workspaces (workspace_id, root, created_at) "
                    f"VALUES ('a', '/a', '{T0}')"
                )
            monkeypatch.undo()
        finally:
            reader.close()
        assert info.value.code == "store_io_error"
        assert "committed" in info.value.message
        assert "power failure" in info.value.message
        assert isinstance(info.value.__cause__, OSError)
        with store.read() as conn:  # committed, only perhaps not on the disk yet
            assert conn.exec_driver_sql("SELECT count(*) FROM workspaces").scalar() == 1


@pytest.mark.skipif(not NAMES_DESCRIPTORS, reason="names descriptors via /proc")
def test_a_completed_purge_makes_the_wal_s_truncation_durable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # SQLite syncs the WAL before a checkpoint and the database after, not the WAL's emptying:
    # until that is on the disk, a power failure could bring back every frame it held.
    db_path = tmp_path / "durable.db"
    with open_store(f"sqlite:///{db_path}") as store:
        with store.write() as conn:
            conn.exec_driver_sql(
                "INSERT INTO workspaces (workspace_id, root, created_at) "
                f"VALUES ('a', '/a', '{T0}')"
            )
        synced = synced_files(monkeypatch)
        with store.purging_write() as purge:
            purge.conn.exec_driver_sql("DELETE FROM workspaces")
        assert purge.purged is True
        assert synced == [("durable.db-wal", 0)]  # after the truncation, once


@pytest.mark.skipif(not NAMES_DESCRIPTORS, reason="names descriptors via /proc")
def test_a_purge_whose_truncation_cannot_be_synced_fails_typed_and_says_what_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db_path = tmp_path / "emptied.db"
    marker = b"emptied-marker-51c2"
    insert = (
        "INSERT INTO workspaces (workspace_id, root, created_at) "
        f"VALUES ('a', '/{marker.decode()}', '{T0}')"
    )
    with open_store(f"sqlite:///{db_path}") as store:
        with store.write() as conn:
            conn.exec_driver_sql(insert)
        synced = synced_files(monkeypatch, fail=True)
        with pytest.raises(StoreError) as info, store.purging_write() as purge:
            purge.conn.exec_driver_sql("DELETE FROM workspaces")
        monkeypatch.undo()
        # Reported once, as the truncation's: the commit itself was synced by the checkpoint,
        # so the store does not try (and fail) to flush it again.
        assert synced == [("emptied.db-wal", 0)]
        assert info.value.code == "store_io_error"
        assert "is on the disk" in info.value.message
        assert "power failure" in info.value.message
        assert "emptied.db-wal" in info.value.message
        assert isinstance(info.value.__cause__, OSError)
        assert not _files_hold(db_path, marker)  # removed from every file all the same
        with store.read() as conn:
            assert conn.exec_driver_sql("SELECT count(*) FROM workspaces").scalar() == 0


def test_make_durable_syncs_the_database_file_once_the_wal_is_gone(tmp_path: Path) -> None:
    db_path = tmp_path / "gone.db"
    store = open_store(f"sqlite:///{db_path}")
    engine = store.engine
    store.close()  # the last connection checkpoints the WAL into the file and deletes it
    assert not db_path.with_name("gone.db-wal").exists()
    store.dialect.make_durable(engine)  # fsyncs rutter.db: no error
    db_path.unlink()
    with pytest.raises(StoreError) as info:
        store.dialect.make_durable(engine)
    assert info.value.code == "store_io_error"


# --- change feed --------------------------------------------------------------------------


class _NoFeed(SqliteDialect):
    def change_feed(self, engine: Engine) -> ChangeFeed | None:
        return None


def test_without_a_change_feed_every_poll_reports_a_change(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store, "dialect", _NoFeed())
    changes = StoreChanges(store)
    try:
        assert [changes.poll() for _ in range(3)] == [True, True, True]
    finally:
        changes.close()


def test_raw_integrity_errors_never_leave_a_write(store: Store) -> None:
    """Whatever rule refuses it, a write fails with a typed error."""
    for statement in (
        "INSERT INTO workspaces (workspace_id, root, created_at) "
        f"VALUES ('a', '/a', '{T0}'), ('a', '/b', '{T0}')",
        "INSERT INTO workspaces (workspace_id, root, created_at) VALUES ('a', '/a', NULL)",
        f"INSERT INTO workspaces (workspace_id, root, created_at) VALUES ('A', '/a', '{T0}')",
        "INSERT INTO memories (memory_id) VALUES ('x')",
    ):
        with pytest.raises((ConflictError, StoreError)) as info, store.write() as conn:
            conn.exec_driver_sql(statement)
        assert isinstance(info.value.__cause__, IntegrityError)
