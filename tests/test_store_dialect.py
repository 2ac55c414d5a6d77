"""The dialect seam: engines without a dialect, typed store failures, the purge of deleted
content, and change feeds."""

from __future__ import annotations

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

T0 = "2026-01-01T00:00:00Z"
RUN = "run_" + "0" * 26
ROOT = "node_" + "0" * 26
FP1, FP2 = "1" * 64, "2" * 64


@pytest.fixture
def db_path(store: Store) -> Path:
    """The file of the shared `store` fixture."""
    return Path(str(store.engine.url.database))


def raw(db_path: Path) -> sqlite3.Connection:
    """Another client with no rutter code at all."""
    return sqlite3.connect(db_path, timeout=5, isolation_level=None)


# --- engines without a dialect ------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "engine"),
    [
        ("postgresql://rutter:s3cret-pw@db.example:5432/rutter", "postgresql"),
        ("postgresql+psycopg://rutter:s3cret-pw@db.example/rutter", "postgresql"),
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
            conn.exec_driver_sql(f"INSERT INTO workspaces VALUES ('a', '/a', '{T0}')")
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


# --- purge --------------------------------------------------------------------------------


def _files_hold(db_path: Path, marker: bytes) -> bool:
    files = [db_path, db_path.with_name(db_path.name + "-wal")]
    return any(marker in path.read_bytes() for path in files if path.exists())


def test_purge_leaves_deleted_content_in_no_file(tmp_path: Path) -> None:
    db_path = tmp_path / "purge.db"
    marker = b"purge-me-7f3a9c"
    with open_store(f"sqlite:///{db_path}", busy_timeout_ms=200) as store:
        with store.write() as conn:
            conn.exec_driver_sql(
                f"INSERT INTO workspaces VALUES ('a', '/{marker.decode()}', '{T0}')"
            )
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
        assert store.checkpoint() is True  # the old name, until memory has switched
        assert not _files_hold(db_path, marker)


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
        f"INSERT INTO workspaces VALUES ('a', '/a', '{T0}'), ('a', '/b', '{T0}')",
        f"INSERT INTO workspaces VALUES ('a', NULL, '{T0}')",
        f"INSERT INTO workspaces VALUES ('A', '/a', '{T0}')",
        "INSERT INTO memories (memory_id) VALUES ('x')",
    ):
        with pytest.raises((ConflictError, StoreError)) as info, store.write() as conn:
            conn.exec_driver_sql(statement)
        assert isinstance(info.value.__cause__, IntegrityError)
