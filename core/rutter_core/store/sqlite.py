"""The one seam for everything SQLite-specific: pragmas, BEGIN handling, triggers, files.

The rest of the store speaks dialect-neutral SQL so the same schema can run on PostgreSQL.
"""

from __future__ import annotations

import os
import re
import sqlite3
from pathlib import Path
from typing import Any, Literal

from sqlalchemy import event
from sqlalchemy.engine import URL, Connection, Engine
from sqlalchemy.exc import DBAPIError

from rutter_core.kernel.errors import StoreError

# Execution option read by the `begin` hook; set per connection by `Store.read()/write()`.
BEGIN_MODE_OPTION = "rutter_sqlite_begin"
BeginMode = Literal["read", "write"]

_IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def install_hooks(engine: Engine, *, busy_timeout_ms: int) -> None:
    """Take over transaction control from the sqlite3 module and set pragmas per connection.

    Python 3.11's sqlite3 has no `autocommit` attribute and, in its legacy mode, neither
    begins a transaction for SELECT nor lets us choose BEGIN IMMEDIATE. Following the
    SQLAlchemy SQLite docs ("Enabling Non-Legacy SQLite Transactional Modes"), we set
    `isolation_level = None` on each DBAPI connection and emit BEGIN ourselves.
    """

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        mode = None
        try:
            # busy_timeout first: switching a fresh file to WAL needs a lock another
            # process may hold during a simultaneous first open.
            cursor.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            mode = cursor.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            cursor.execute("PRAGMA foreign_keys = ON")
            cursor.execute("PRAGMA secure_delete = ON")
        finally:
            cursor.close()
        # SQLite answers with the mode it kept instead of failing (e.g. an immutable or
        # read-only file); without WAL, the CLI and the language server would block each other.
        if mode not in ("wal", "memory"):
            dbapi_connection.close()
            raise StoreError(
                "store_unavailable",
                f"SQLite could not switch the store to WAL mode (it stayed in {mode!r}); "
                "use a writable store on a local filesystem",
            )

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        mode = conn.get_execution_options().get(BEGIN_MODE_OPTION, "write")
        if mode == "read":
            # query_only makes an accidental write inside `read()` fail loudly instead of
            # silently upgrading the lock (and risking SQLITE_BUSY_SNAPSHOT).
            conn.exec_driver_sql("PRAGMA query_only = ON")
            conn.exec_driver_sql("BEGIN")
        else:
            # Default to IMMEDIATE so that any transaction that may write takes the write
            # lock up front: no deadlock-prone lock upgrade halfway through.
            conn.exec_driver_sql("PRAGMA query_only = OFF")
            conn.exec_driver_sql("BEGIN IMMEDIATE")


def is_busy_error(exc: BaseException) -> bool:
    """True when SQLite gave up waiting for a lock (busy timeout elapsed)."""
    orig = exc.orig if isinstance(exc, DBAPIError) else exc
    code = getattr(orig, "sqlite_errorcode", None)
    if isinstance(code, int):
        return (code & 0xFF) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return isinstance(orig, sqlite3.OperationalError) and "locked" in str(orig)


def checkpoint_truncate(engine: Engine) -> bool:
    """Copy every WAL frame into the database file and truncate the WAL to zero bytes.

    With `secure_delete` on, deleting a row zeroes its bytes in the new page image, but the
    WAL still holds older images of the page (the row as inserted or edited) until a
    checkpoint, and the database file holds the pre-delete page until then too. TRUNCATE
    waits (busy handler) for readers still on an older snapshot; True when it completed.
    Runs on a pooled DBAPI connection outside any transaction (a checkpoint cannot run in one).
    """
    connection = engine.raw_connection()
    try:
        cursor = connection.cursor()
        try:
            row = cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        except sqlite3.OperationalError as exc:
            if is_busy_error(exc):
                return False
            raise
        finally:
            cursor.close()
    finally:
        connection.close()
    busy = int(row[0]) if row is not None else 0
    return busy == 0


def database_file(url: URL) -> Path | None:
    """The on-disk file of a SQLite URL, or None for in-memory and URI-mode databases."""
    database = url.database
    if not database or database == ":memory:" or url.query.get("uri"):
        return None
    return Path(database)


def prepare_database_file(path: Path) -> None:
    """Create a missing data directory (0700) and database file (0600).

    SQLite gives the -wal and -shm files the main file's permissions, so pre-creating the
    file keeps memories and transcripts private even under a permissive umask.
    """
    parent = path.parent
    if not parent.exists():
        parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if not path.exists():
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another process won the race; fine
            return
        os.close(fd)


def append_only_triggers(table: str, *, dialect: str = "sqlite") -> tuple[str, ...]:
    """Statements that make `table` reject UPDATE and DELETE (contract section 2)."""
    if _IDENTIFIER.fullmatch(table) is None:
        raise ValueError(f"not a plain lowercase SQL identifier: {table!r}")
    if dialect != "sqlite":
        raise StoreError(
            "unsupported_dialect",
            f"append-only triggers are implemented for SQLite only, not {dialect}; "
            "use the embedded SQLite store until PostgreSQL support lands",
        )
    return tuple(
        f"CREATE TRIGGER {table}_append_only_no_{verb.lower()} BEFORE {verb} ON {table} "
        f"BEGIN SELECT RAISE(ABORT, 'append-only table {table}: rows cannot be {done}'); END"
        for verb, done in (("UPDATE", "updated"), ("DELETE", "deleted"))
    )
