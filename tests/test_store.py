"""The store: URL resolution, SQLite pragmas and locking, transactions, migrations, triggers."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import platformdirs
import pytest
from sqlalchemy import create_engine
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError, OperationalError

from rutter_core.kernel.errors import ConflictError, RutterError, StoreError, UsageError
from rutter_core.store import (
    MIGRATIONS,
    Migration,
    PurgingWrite,
    Store,
    append_only_triggers,
    migration_checksum,
    open_store,
    resolve_database_url,
)
from rutter_core.store.dialects import EMBEDDED
from rutter_core.store.migrations import canonical_statement
from tests.store_shapes import OPENER
from tests.testing import Cli

RFC3339 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
EVENTS = Migration(
    100,
    "events",
    ("CREATE TABLE events (id INTEGER NOT NULL PRIMARY KEY, body TEXT NOT NULL)",),
    append_only=("events",),
)


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{path}"


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "rutter.db"


@pytest.fixture
def store_url(store_dialect: str, db_path: Path, request: pytest.FixtureRequest) -> str:
    if store_dialect == "postgresql":
        return str(request.getfixturevalue("postgres_url"))
    return sqlite_url(db_path)


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    with open_store(store_url) as opened:
        yield opened


def raw(db_path: Path, *, timeout: float = 5.0) -> sqlite3.Connection:
    """A plain sqlite3 connection in autocommit mode, standing in for another process."""
    return sqlite3.connect(db_path, timeout=timeout, isolation_level=None)


def _words(text: str) -> str:
    return text.lower().replace("-", " ")


@contextmanager
def refused(error: type[RutterError], code: str, constraint: str, cause: str) -> Iterator[None]:
    """The write inside is refused by the database, and the store says so as a typed error
    (never the raw IntegrityError) that keeps the database's own words as its cause."""
    with pytest.raises(error) as info:
        yield
    assert info.value.code == code
    assert info.value.details == {"constraint": constraint}
    assert "INSERT" not in info.value.message  # no SQL, no values
    assert isinstance(info.value.__cause__, IntegrityError)
    # In the engine's words ("NOT NULL" on SQLite, "not-null" on PostgreSQL).
    assert _words(cause) in _words(str(info.value.__cause__))


def ledger(db_path: Path) -> list[tuple[int, str, str, str]]:
    conn = raw(db_path)
    try:
        rows = conn.execute(
            "SELECT version, name, checksum, applied_at FROM schema_migrations ORDER BY version"
        ).fetchall()
    finally:
        conn.close()
    return [(int(v), str(n), str(c), str(a)) for v, n, c, a in rows]


# --- resolve_database_url ---------------------------------------------------------------


def test_explicit_url_wins_over_everything() -> None:
    env = {"RUTTER_DATABASE_URL": "sqlite:////env.db", "RUTTER_HOME": "/home-dir"}
    assert resolve_database_url(database_url="sqlite:////cli.db", env=env) == "sqlite:////cli.db"


def test_env_database_url_wins_over_home() -> None:
    env = {"RUTTER_DATABASE_URL": "postgresql://u@h/db", "RUTTER_HOME": "/home-dir"}
    assert resolve_database_url(database_url=None, env=env) == "postgresql://u@h/db"


def test_rutter_home_gives_embedded_sqlite(tmp_path: Path) -> None:
    url = resolve_database_url(database_url=None, env={"RUTTER_HOME": str(tmp_path)})
    assert url == f"sqlite:///{tmp_path / 'rutter.db'}"


def test_relative_rutter_home_is_made_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    url = resolve_database_url(database_url=None, env={"RUTTER_HOME": ".demo-home"})
    assert url == f"sqlite:///{tmp_path / '.demo-home' / 'rutter.db'}"


def test_platform_default_when_nothing_set() -> None:
    expected = Path(platformdirs.user_data_dir("rutter", appauthor=False)) / "rutter.db"
    assert resolve_database_url(database_url=None, env={}) == f"sqlite:///{expected}"


def test_empty_values_count_as_unset(tmp_path: Path) -> None:
    env = {"RUTTER_DATABASE_URL": "", "RUTTER_HOME": str(tmp_path)}
    url = resolve_database_url(database_url="", env=env)
    assert url == f"sqlite:///{tmp_path / 'rutter.db'}"


def test_url_with_special_characters_round_trips(tmp_path: Path) -> None:
    home = tmp_path / "we?ird #home"
    url = resolve_database_url(database_url=None, env={"RUTTER_HOME": str(home)})
    with open_store(url):
        pass
    assert (home / "rutter.db").is_file()


# --- opening ------------------------------------------------------------------------------


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_open_creates_private_home_and_file(tmp_path: Path) -> None:
    home = tmp_path / "data" / "rutter"
    url = resolve_database_url(database_url=None, env={"RUTTER_HOME": str(home)})
    with open_store(url):
        pass
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert stat.S_IMODE((home / "rutter.db").stat().st_mode) == 0o600


def test_invalid_url_is_a_usage_error() -> None:
    with pytest.raises(UsageError) as info:
        open_store("not a url")
    assert info.value.code == "invalid_database_url"


def test_unopenable_file_is_a_store_error(tmp_path: Path) -> None:
    (tmp_path / "dir.db").mkdir()
    with pytest.raises(StoreError) as info:
        open_store(sqlite_url(tmp_path / "dir.db"))
    assert info.value.code == "store_unavailable"


def test_store_that_cannot_use_wal_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "frozen.db"
    sqlite3.connect(path).close()
    with pytest.raises(StoreError, match="WAL") as info:
        open_store(f"sqlite:///file:{path}?immutable=1&uri=true")
    assert info.value.code == "store_unavailable"


# --- pragmas and transactions -------------------------------------------------------------


def test_pragmas_in_effect_on_every_connection(store: Store) -> None:
    # Two connections at once: both come from the pool's connect hook.
    with store.read() as first, store.write() as second:
        for conn in (first, second):
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            assert conn.exec_driver_sql("PRAGMA secure_delete").scalar() == 1
            assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 10_000


def test_busy_timeout_is_configurable(db_path: Path) -> None:
    with open_store(sqlite_url(db_path), busy_timeout_ms=1234) as opened, opened.read() as conn:
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 1234


def test_write_takes_the_write_lock_before_any_statement(store: Store, db_path: Path) -> None:
    other = raw(db_path, timeout=0.1)
    try:
        with store.write():
            # Nothing written yet, yet another writer cannot start: BEGIN IMMEDIATE was taken.
            with pytest.raises(sqlite3.OperationalError, match="locked"):
                other.execute("BEGIN IMMEDIATE")
            # Readers are not blocked (WAL).
            assert other.execute("SELECT count(*) FROM workspaces").fetchone() == (0,)
        other.execute("BEGIN IMMEDIATE")
        other.execute("ROLLBACK")
    finally:
        other.close()


def test_second_store_write_times_out_while_read_still_works(store: Store, db_path: Path) -> None:
    with open_store(sqlite_url(db_path), busy_timeout_ms=100) as second, store.write():
        started = time.monotonic()
        with pytest.raises(StoreError) as info, second.write():
            pass  # pragma: no cover
        assert info.value.code == "store_busy"
        assert time.monotonic() - started >= 0.09
        with second.read() as conn:
            assert conn.exec_driver_sql("SELECT count(*) FROM workspaces").scalar() == 0


def test_second_writer_waits_for_the_first(store: Store, db_path: Path) -> None:
    release = threading.Event()
    holding = threading.Event()

    def hold_lock() -> None:
        with store.write() as conn:
            conn.exec_driver_sql(
                "INSERT INTO workspaces (workspace_id, root, created_at) "
                "VALUES ('a', '/a', '2026-01-01T00:00:00Z')"
            )
            holding.set()
            release.wait(5)

    thread = threading.Thread(target=hold_lock)
    thread.start()
    try:
        assert holding.wait(5)
        threading.Timer(0.3, release.set).start()
        started = time.monotonic()
        with open_store(sqlite_url(db_path)) as second, second.write() as conn:
            waited = time.monotonic() - started
            # The first writer's row is visible: we began after it committed.
            assert conn.exec_driver_sql("SELECT count(*) FROM workspaces").scalar() == 1
        assert waited >= 0.2
    finally:
        release.set()
        thread.join()


def test_read_is_a_consistent_snapshot(store: Store, db_path: Path) -> None:
    other = raw(db_path)
    try:
        with store.read() as conn:
            assert conn.exec_driver_sql("SELECT count(*) FROM workspaces").scalar() == 0
            other.execute(
                "INSERT INTO workspaces (workspace_id, root, created_at) "
                "VALUES ('a', '/a', '2026-01-01T00:00:00Z')"
            )
            assert conn.exec_driver_sql("SELECT count(*) FROM workspaces").scalar() == 0
        with store.read() as conn:
            assert conn.exec_driver_sql("SELECT count(*) FROM workspaces").scalar() == 1
    finally:
        other.close()


def test_read_rejects_writes(store: Store) -> None:
    with pytest.raises(OperationalError, match="readonly"), store.read() as conn:
        conn.exec_driver_sql(
            "INSERT INTO workspaces (workspace_id, root, created_at) "
            "VALUES ('a', '/a', '2026-01-01T00:00:00Z')"
        )
    with store.write() as conn:  # the pooled connection is writable again
        conn.exec_driver_sql(
            "INSERT INTO workspaces (workspace_id, root, created_at) "
            "VALUES ('a', '/a', '2026-01-01T00:00:00Z')"
        )
    # The pragma is set only when the mode changes: read, read, write, write, read alternate
    # on the same pooled connection, and each read still refuses, each write still writes.
    for number, kind in enumerate(("read", "read", "write", "write", "read")):
        opened = store.read() if kind == "read" else store.write()
        row = f"('w{number}', '/w{number}', '2026-01-01T00:00:00Z')"
        insert = f"INSERT INTO workspaces (workspace_id, root, created_at) VALUES {row}"
        if kind == "read":
            with pytest.raises(OperationalError, match="readonly"), opened as conn:
                conn.exec_driver_sql(insert)
        else:
            with opened as conn:
                conn.exec_driver_sql(insert)
    with store.read() as conn:
        found = conn.exec_driver_sql("SELECT workspace_id FROM workspaces ORDER BY 1").fetchall()
    assert [row[0] for row in found] == ["a", "w2", "w3"]


def test_write_commits_on_success(store: Store, db_path: Path) -> None:
    with store.write() as conn:
        conn.exec_driver_sql(
            "INSERT INTO workspaces (workspace_id, root, created_at) "
            "VALUES ('a', '/a', '2026-01-01T00:00:00Z')"
        )
    other = raw(db_path)
    try:
        assert other.execute("SELECT workspace_id FROM workspaces").fetchall() == [("a",)]
    finally:
        other.close()


@pytest.mark.both_dialects
def test_write_rolls_back_on_exception(store: Store) -> None:
    class Boom(Exception):
        pass

    def fail_midway() -> None:
        with store.write() as conn:
            conn.exec_driver_sql(
                "INSERT INTO workspaces (workspace_id, root, created_at) "
                "VALUES ('a', '/a', '2026-01-01T00:00:00Z')"
            )
            raise Boom

    with pytest.raises(Boom):
        fail_midway()
    with store.read() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM workspaces").scalar() == 0


# --- purging writes: synchronous per transaction -----------------------------------------

FULL, NORMAL = 2, 1  # PRAGMA synchronous levels


def _synchronous(conn: Connection) -> int:
    return int(conn.exec_driver_sql("PRAGMA synchronous").scalar_one())


@pytest.fixture
def store_of_one(db_path: Path) -> Iterator[Store]:
    """A migrated store whose pool holds one connection: every transaction and the purge's
    checkpoint run on it, so a level one transaction left set is what the next one gets."""
    open_store(sqlite_url(db_path)).close()
    engine = create_engine(sqlite_url(db_path), pool_size=1, max_overflow=0, pool_timeout=1)
    EMBEDDED.configure(engine, busy_timeout_ms=1_000)
    with Store(engine, EMBEDDED) as opened:
        yield opened


def test_only_a_purging_write_commits_with_synchronous_normal(store_of_one: Store) -> None:
    store = store_of_one
    insert = (
        "INSERT INTO workspaces (workspace_id, root, created_at) "
        "VALUES ('{0}', '/{0}', '2026-01-01T00:00:00Z')"
    )
    connections = set()
    with store.write() as conn:
        assert _synchronous(conn) == FULL  # set explicitly, whatever SQLite's build default
        conn.exec_driver_sql(insert.format("a"))
        connections.add(id(conn.connection.dbapi_connection))
    with store.purging_write() as purge:
        assert _synchronous(purge.conn) == NORMAL
        purge.conn.exec_driver_sql("DELETE FROM workspaces")
        connections.add(id(purge.conn.connection.dbapi_connection))
    assert purge.purged is True
    with store.write() as conn:
        assert _synchronous(conn) == FULL
        conn.exec_driver_sql(insert.format("b"))
        connections.add(id(conn.connection.dbapi_connection))
    with store.purging_write(purge=False) as plain:  # an ordinary write behind the same handle
        assert _synchronous(plain.conn) == FULL
    with pytest.raises(RuntimeError, match="no purge"):
        plain.purged  # noqa: B018

    class Boom(Exception):
        pass

    failed: list[PurgingWrite] = []

    def fail_midway() -> None:
        with store.purging_write() as purge:
            failed.append(purge)
            assert _synchronous(purge.conn) == NORMAL
            purge.conn.exec_driver_sql("DELETE FROM workspaces")
            raise Boom

    with pytest.raises(Boom):
        fail_midway()
    with pytest.raises(RuntimeError, match="no purge"):
        failed[0].purged  # noqa: B018 - the property refuses: nothing was committed or purged
    with store.write() as conn:
        assert _synchronous(conn) == FULL  # not left NORMAL by the purge that failed
        found = conn.exec_driver_sql("SELECT workspace_id FROM workspaces").fetchall()
        connections.add(id(conn.connection.dbapi_connection))
    assert [row[0] for row in found] == ["b"]  # the failed purge's delete was rolled back
    with store.read() as conn:
        connections.add(id(conn.connection.dbapi_connection))
    assert len(connections) == 1  # one pooled connection throughout


def test_a_purging_write_on_a_uri_mode_store_commits_with_full(db_path: Path) -> None:
    # The store cannot locate a URI-mode file to flush it when the purge does not complete.
    with open_store(f"sqlite:///file:{db_path}?uri=true") as store:
        with store.purging_write() as purge:
            assert _synchronous(purge.conn) == FULL
        assert purge.purged is True


def test_an_abandoned_purging_write_commits_purges_and_syncs_nothing(
    store: Store, db_path: Path
) -> None:
    wal = db_path.with_name(f"{db_path.name}-wal")
    with store.write() as conn:
        conn.exec_driver_sql(
            "INSERT INTO workspaces (workspace_id, root, created_at) "
            "VALUES ('a', '/a', '2026-01-01T00:00:00Z')"
        )
    size = wal.stat().st_size
    assert size > 0  # the insert's frames: a purge would truncate them away
    with store.purging_write() as purge:
        purge.conn.exec_driver_sql("DELETE FROM workspaces")
        purge.abandon()
    assert wal.stat().st_size == size  # no checkpoint ran
    with pytest.raises(RuntimeError, match="no purge"):
        purge.purged  # noqa: B018
    with store.read() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM workspaces").scalar() == 1


@pytest.mark.both_dialects
def test_foreign_keys_are_enforced(store: Store) -> None:
    with store.write() as conn:
        conn.exec_driver_sql(
            "CREATE TABLE child (ws TEXT NOT NULL REFERENCES workspaces (workspace_id))"
        )
    with refused(ConflictError, "conflict", "foreign_key", "FOREIGN KEY"), store.write() as conn:
        conn.exec_driver_sql("INSERT INTO child VALUES ('missing')")
    with store.read() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM child").scalar() == 0


@pytest.mark.both_dialects
def test_schema_checks_reject_bad_rows(store: Store) -> None:
    for values in (
        "('Upper', '/a', '2026-01-01T00:00:00Z')",
        "('-a', '/a', '2026-01-01T00:00:00Z')",
        "('a', '', '2026-01-01T00:00:00Z')",
        "('a', '/a', 'yesterday')",
    ):
        with refused(StoreError, "store_constraint", "check", "CHECK"), store.write() as conn:
            conn.exec_driver_sql(
                f"INSERT INTO workspaces (workspace_id, root, created_at) VALUES {values}"
            )
    with store.read() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM workspaces").scalar() == 0


@pytest.mark.both_dialects
def test_a_missing_value_is_a_store_constraint_error(store: Store) -> None:
    with refused(StoreError, "store_constraint", "not_null", "NOT NULL"), store.write() as conn:
        conn.exec_driver_sql(
            "INSERT INTO workspaces (workspace_id, root, created_at) VALUES ('a', '/a', NULL)"
        )


@pytest.mark.both_dialects
def test_a_taken_key_is_a_conflict(store: Store) -> None:
    machine = "'" + "ab" * 16 + "'"  # a root is one machine's once (migration 20)
    with store.write() as conn:
        conn.exec_driver_sql(
            "INSERT INTO workspaces (workspace_id, root, created_at, machine_id) "
            f"VALUES ('a', '/a', '2026-01-01T00:00:00Z', {machine})"
        )
    for values in (
        f"('a', '/b', '2026-01-01T00:00:00Z', {machine})",
        f"('b', '/a', '2026-01-01T00:00:00Z', {machine})",
    ):
        with refused(ConflictError, "conflict", "unique", "UNIQUE"), store.write() as conn:
            conn.exec_driver_sql(
                "INSERT INTO workspaces (workspace_id, root, created_at, machine_id) "
                f"VALUES {values}"
            )
    with store.read() as conn:
        rows = conn.exec_driver_sql("SELECT workspace_id, root FROM workspaces").all()
    assert [tuple(row) for row in rows] == [("a", "/a")]


def test_an_integrity_error_caught_inside_the_write_is_the_callers(store: Store) -> None:
    """Callers that turn a refused statement into their own error catch it inside the `with`;
    the write then commits what else it did."""
    with store.write() as conn:
        conn.exec_driver_sql(
            "INSERT INTO workspaces (workspace_id, root, created_at) "
            "VALUES ('a', '/a', '2026-01-01T00:00:00Z')"
        )
        with pytest.raises(IntegrityError):
            conn.exec_driver_sql(
                "INSERT INTO workspaces (workspace_id, root, created_at) "
                "VALUES ('a', '/b', '2026-01-02T00:00:00Z')"
            )
        conn.exec_driver_sql(
            "INSERT INTO workspaces (workspace_id, root, created_at) "
            "VALUES ('b', '/b', '2026-01-01T00:00:00Z')"
        )
    with store.read() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM workspaces").scalar() == 2


# --- migrations -----------------------------------------------------------------------------


def test_migrations_applied_once_with_ledger(db_path: Path) -> None:
    with open_store(sqlite_url(db_path)):
        pass
    first = ledger(db_path)
    assert [(v, n) for v, n, _, _ in first] == [(m.version, m.name) for m in MIGRATIONS]
    for (_, _, checksum, applied_at), migration in zip(first, MIGRATIONS, strict=True):
        assert checksum == migration_checksum(migration, "sqlite")
        assert re.fullmatch(r"[0-9a-f]{64}", checksum)
        assert RFC3339.fullmatch(applied_at)
    with open_store(sqlite_url(db_path)):
        pass
    assert ledger(db_path) == first


def test_each_migration_is_its_own_transaction(db_path: Path) -> None:
    good = Migration(1, "good", ("CREATE TABLE a (x INTEGER)",))
    bad = Migration(2, "bad", ("CREATE TABLE b (x INTEGER)", "THIS IS NOT SQL"))
    with pytest.raises(OperationalError):
        open_store(sqlite_url(db_path), migrations=[good, bad])
    assert [v for v, _, _, _ in ledger(db_path)] == [1]
    conn = raw(db_path)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    finally:
        conn.close()
    assert "a" in tables
    assert "b" not in tables


def test_new_migrations_are_applied_on_next_open(db_path: Path) -> None:
    with open_store(sqlite_url(db_path)):
        pass
    with open_store(sqlite_url(db_path), migrations=[*MIGRATIONS, EVENTS]):
        pass
    assert [v for v, _, _, _ in ledger(db_path)] == [*(m.version for m in MIGRATIONS), 100]


def test_checksum_mismatch_stops_open(db_path: Path) -> None:
    with open_store(sqlite_url(db_path)):
        pass
    conn = raw(db_path)
    try:
        conn.execute("UPDATE schema_migrations SET checksum = ? WHERE version = 1", ("0" * 64,))
    finally:
        conn.close()
    with pytest.raises(StoreError) as info:
        open_store(sqlite_url(db_path))
    assert info.value.code == "migration_checksum_mismatch"
    assert "migration 1 " in info.value.message
    assert "new migration" in info.value.message


def test_edited_migration_in_code_stops_open(db_path: Path) -> None:
    original = Migration(1, "t", ("CREATE TABLE t (x INTEGER)",))
    edited = Migration(1, "t", ("CREATE TABLE t (x INTEGER, y INTEGER)",))
    with open_store(sqlite_url(db_path), migrations=[original]):
        pass
    with pytest.raises(StoreError) as info:
        open_store(sqlite_url(db_path), migrations=[edited])
    assert info.value.code == "migration_checksum_mismatch"


def test_reindenting_a_migration_keeps_its_checksum() -> None:
    original = Migration(1, "t", ("\n    CREATE TABLE t (\n        x INTEGER\n    )\n",))
    reindented = Migration(1, "t", ("CREATE TABLE t (\r\n  x INTEGER\r\n)",))
    changed = Migration(1, "t", ("CREATE TABLE t ( x TEXT )",))
    assert canonical_statement(original.statements[0]) == "CREATE TABLE t ( x INTEGER )"
    assert migration_checksum(original, "sqlite") == migration_checksum(reindented, "sqlite")
    assert migration_checksum(original, "sqlite") != migration_checksum(changed, "sqlite")


def test_unknown_migration_version_stops_open(db_path: Path) -> None:
    with open_store(sqlite_url(db_path)):
        pass
    conn = raw(db_path)
    try:
        conn.execute(
            "INSERT INTO schema_migrations VALUES (999, 'from_the_future', ?, ?)",
            ("a" * 64, "2030-01-01T00:00:00Z"),
        )
    finally:
        conn.close()
    with pytest.raises(StoreError) as info:
        open_store(sqlite_url(db_path))
    assert info.value.code == "unknown_migration"
    assert "999" in info.value.message
    assert "Upgrade rutter" in info.value.message


def test_migration_inserted_before_applied_ones_is_refused(db_path: Path) -> None:
    one = Migration(1, "one", ("CREATE TABLE one (x INTEGER)",))
    three = Migration(3, "three", ("CREATE TABLE three (x INTEGER)",))
    two = Migration(2, "two", ("CREATE TABLE two (x INTEGER)",))
    with open_store(sqlite_url(db_path), migrations=[one, three]):
        pass
    with pytest.raises(StoreError) as info:
        open_store(sqlite_url(db_path), migrations=[one, two, three])
    assert info.value.code == "migration_out_of_order"


def test_migration_list_must_be_ordered(db_path: Path) -> None:
    two = Migration(2, "two", ("CREATE TABLE two (x INTEGER)",))
    one = Migration(1, "one", ("CREATE TABLE one (x INTEGER)",))
    with pytest.raises(ValueError, match="strictly increasing"):
        open_store(sqlite_url(db_path), migrations=[two, one])


def test_concurrent_first_opens_apply_each_migration_once(tmp_path: Path) -> None:
    db_path = tmp_path / "fresh" / "rutter.db"
    go = tmp_path / "go"
    ready = [tmp_path / f"ready-{i}" for i in range(8)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", OPENER, sqlite_url(db_path), str(go), str(flag)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for flag in ready
    ]
    deadline = time.monotonic() + 60
    while not all(flag.exists() for flag in ready) and time.monotonic() < deadline:
        time.sleep(0.01)
    go.touch()
    # Every process is waited for before anything is asserted: no pipe is left open.
    errors = [proc.communicate(timeout=60)[1] for proc in procs]
    for proc, err in zip(procs, errors, strict=True):
        assert proc.returncode == 0, err.decode()
    rows = ledger(db_path)
    assert [v for v, _, _, _ in rows] == [m.version for m in MIGRATIONS]


def test_a_first_open_waits_for_another_process_holding_the_fresh_file_s_write_lock(
    tmp_path: Path,
) -> None:
    # A fresh file is in rollback mode: while another process holds its write lock (a first
    # open of its own), SQLite fails the switch to WAL at once instead of calling the busy
    # handler (it could deadlock). The open retries it within the busy timeout.
    db_path = tmp_path / "fresh.db"
    holder = sqlite3.connect(db_path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    release = threading.Timer(0.3, holder.execute, ("COMMIT",))
    release.start()
    try:
        with (
            open_store(sqlite_url(db_path), busy_timeout_ms=10_000) as store,
            store.read() as conn,
        ):
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    finally:
        release.join()
        holder.close()
    assert [v for v, _, _, _ in ledger(db_path)] == [m.version for m in MIGRATIONS]


def test_a_first_open_still_gives_up_after_the_busy_timeout(tmp_path: Path) -> None:
    db_path = tmp_path / "held.db"
    holder = sqlite3.connect(db_path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StoreError) as info:
            open_store(sqlite_url(db_path), busy_timeout_ms=100)
    finally:
        holder.execute("COMMIT")
        holder.close()
    assert info.value.code == "store_busy"


# --- append-only triggers -------------------------------------------------------------------


def test_append_only_table_rejects_update_and_delete(db_path: Path) -> None:
    with open_store(sqlite_url(db_path), migrations=[*MIGRATIONS, EVENTS]) as opened:
        with opened.write() as conn:
            conn.exec_driver_sql("INSERT INTO events VALUES (1, 'first'), (2, 'second')")
        statements = (
            "UPDATE events SET body = 'changed' WHERE id = 1",
            "DELETE FROM events WHERE id = 1",
            "DELETE FROM events",  # no WHERE: must not slip through the truncate optimization
        )
        for statement in statements:
            with (
                refused(ConflictError, "conflict", "append_only", "append-only table events"),
                opened.write() as conn,
            ):
                conn.exec_driver_sql(statement)
        with opened.read() as conn:
            rows = conn.exec_driver_sql("SELECT id, body FROM events ORDER BY id").all()
        assert [tuple(r) for r in rows] == [(1, "first"), (2, "second")]


@pytest.mark.both_dialects
def test_append_only_helper_on_a_table_created_in_a_test(store: Store) -> None:
    with store.write() as conn:
        conn.exec_driver_sql("CREATE TABLE scratch_notes (id INTEGER PRIMARY KEY, body TEXT)")
        for statement in append_only_triggers("scratch_notes", dialect=store.dialect.name):
            conn.exec_driver_sql(statement)
        conn.exec_driver_sql("INSERT INTO scratch_notes VALUES (1, 'kept')")
    for statement in ("UPDATE scratch_notes SET body = 'lost'", "DELETE FROM scratch_notes"):
        with (
            refused(ConflictError, "conflict", "append_only", "append-only table scratch_notes"),
            store.write() as conn,
        ):
            conn.exec_driver_sql(statement)
    with store.read() as conn:
        assert conn.exec_driver_sql("SELECT body FROM scratch_notes").all() == [("kept",)]


def test_append_only_helper_refuses_odd_names_and_dialects() -> None:
    with pytest.raises(ValueError, match="identifier"):
        append_only_triggers("x; DROP TABLE workspaces")
    with pytest.raises(StoreError) as info:
        append_only_triggers("notes", dialect="mysql")
    assert info.value.code == "unsupported_database"


# --- on the command line ------------------------------------------------------------------


def rutter(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return Cli(home, home.parent)(*args)


def test_cli_words_the_store_hint_with_its_flags(tmp_path: Path) -> None:
    (tmp_path / "dir.db").mkdir()
    url = sqlite_url(tmp_path / "dir.db")
    result = rutter("--database-url", url, "workspace", "list", "--json", home=tmp_path)
    assert result.returncode == 1, result.stderr
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "store_unavailable"
    assert error["hint"] == {"fix": "choose_store"}
    assert "--database-url" in error["message"]
    assert "RUTTER_DATABASE_URL" in result.stderr


def test_cli_refuses_an_engine_without_a_dialect_and_hides_the_password(tmp_path: Path) -> None:
    url = "mysql://rutter:s3cret-pw@db.example/rutter"
    result = rutter("--database-url", url, "workspace", "list", "--json", home=tmp_path)
    assert result.returncode == 1, result.stderr
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "unsupported_database"
    assert "mysql" in error["message"]
    assert "s3cret" not in result.stdout + result.stderr
