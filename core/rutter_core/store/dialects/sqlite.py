"""SQLite, the embedded default store: every SQLite fact rutter relies on lives here (what
concerns its files on disk, in `sqlite_files`).

WAL journal (the CLI and the language server read while the other writes), a busy timeout,
`BEGIN IMMEDIATE` for writes, foreign keys and `secure_delete` on, triggers as the append-only
guard, `PRAGMA data_version` as the change feed, a truncating WAL checkpoint as the purge (a
purging write commits with `synchronous = NORMAL`, the checkpoint making it durable), and FTS5
with the trigram tokenizer as full-text search (its `rebuild` as the compaction).
"""

from __future__ import annotations

import errno
import os
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from sqlalchemy import event
from sqlalchemy.engine import URL, Connection, Engine, RootTransaction, make_url
from sqlalchemy.exc import DatabaseError, DBAPIError, IntegrityError

from rutter_core.kernel.errors import Hint, StoreError
from rutter_core.store.dialects.base import (
    ChangeFeed,
    ConstraintKind,
    Dialect,
    Grants,
    StoreFacts,
    StoreFailure,
    TransactionKind,
    UniqueKey,
    check_identifier,
)
from rutter_core.store.dialects.sqlite_files import (
    database_file,
    prepare_database_file,
    sync_log,
    sync_truncated_log,
)

_FAILURES: dict[int, StoreFailure] = {
    sqlite3.SQLITE_BUSY: "busy",
    sqlite3.SQLITE_LOCKED: "busy",
    sqlite3.SQLITE_READONLY: "read_only",
    sqlite3.SQLITE_FULL: "full",
    sqlite3.SQLITE_CORRUPT: "corrupt",
    sqlite3.SQLITE_NOTADB: "corrupt",
    # A write the operating system refused: EIO, or EFBIG past a file-size limit (ENOSPC is
    # SQLITE_FULL above).
    sqlite3.SQLITE_IOERR: "io",
}

_CONSTRAINTS: dict[int, ConstraintKind] = {
    sqlite3.SQLITE_CONSTRAINT_UNIQUE: "unique",
    sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY: "unique",
    sqlite3.SQLITE_CONSTRAINT_ROWID: "unique",
    sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY: "foreign_key",
    # RAISE(ABORT) in a trigger; rutter's only triggers are the append-only guards.
    sqlite3.SQLITE_CONSTRAINT_TRIGGER: "append_only",
    sqlite3.SQLITE_CONSTRAINT_CHECK: "check",
    sqlite3.SQLITE_CONSTRAINT_NOTNULL: "not_null",
}


def _error_code(exc: BaseException) -> int | None:
    orig = exc.orig if isinstance(exc, DBAPIError) else exc
    code = getattr(orig, "sqlite_errorcode", None)
    return code if isinstance(code, int) else None


def is_busy_error(exc: BaseException) -> bool:
    """True when SQLite gave up waiting for a lock (busy timeout elapsed)."""
    code = _error_code(exc)
    if code is not None:
        return (code & 0xFF) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    orig = exc.orig if isinstance(exc, DBAPIError) else exc
    return isinstance(orig, sqlite3.OperationalError) and "locked" in str(orig)


_QUERY_ONLY = "rutter_query_only"
"""Key in a pooled connection's `info`: whether its `query_only` pragma is on."""

_SYNCHRONOUS = "rutter_synchronous"
"""Key in a pooled connection's `info`: the `synchronous` level its last write set."""


def install_hooks(engine: Engine, *, busy_timeout_ms: int) -> None:
    """Take over transaction control from the sqlite3 module and set pragmas per connection.

    Python 3.11's sqlite3 has no `autocommit` attribute and, in its legacy mode, neither
    begins a transaction for SELECT nor lets us choose BEGIN IMMEDIATE. Following the
    SQLAlchemy SQLite docs ("Enabling Non-Legacy SQLite Transactional Modes"), we set
    `isolation_level = None` on each DBAPI connection and emit BEGIN ourselves
    (`begin_on`).
    """

    path = database_file(engine.url)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        try:
            mode = _set_up(dbapi_connection, busy_timeout_ms)
        except sqlite3.OperationalError as exc:
            # On a read-only file system SQLite fails to open a WAL store whose shared-memory
            # index it cannot create (unless another process holds it open: SQLITE_CANTOPEN,
            # which does not say why), or to switch a store to WAL (SQLITE_READONLY). A
            # read-only location is the store's fact, not a wrong path.
            if path is not None and _is_read_only(path):
                dbapi_connection.close()
                raise _read_only_error(path) from exc
            raise
        # SQLite answers with the mode it kept instead of failing (e.g. an immutable or
        # read-only file); without WAL, the CLI and the language server would block each other.
        if mode not in ("wal", "memory"):
            dbapi_connection.close()
            raise StoreError(
                "store_unavailable",
                f"SQLite could not switch the store to WAL mode (it stayed in {mode!r}); "
                "use a writable store on a local filesystem",
                hint=Hint("choose_store"),
            )


def _set_up(dbapi_connection: Any, busy_timeout_ms: int) -> str:
    """A new connection's pragmas; the journal mode SQLite kept."""
    cursor = dbapi_connection.cursor()
    try:
        # busy_timeout first: switching a fresh file to WAL needs a lock another process may
        # hold during a simultaneous first open.
        cursor.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        mode = _switch_to_wal(cursor, busy_timeout_ms)
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.execute("PRAGMA secure_delete = ON")
    finally:
        cursor.close()
    return mode


def _is_read_only(path: Path) -> bool:
    """Whether this process may not write the store file or its directory: a read-only file
    system (`access` reports EROFS even to root) or missing write permission."""
    if not os.access(path.parent, os.W_OK):
        return True
    return path.exists() and not os.access(path, os.W_OK)


def _read_only_error(path: Path) -> StoreError:
    return StoreError(
        "store_read_only",
        f"the store file {path} is read-only here (a read-only file system, or the file or its "
        "directory not writable), and SQLite cannot open the store there: it writes beside the "
        "file (its shared-memory index) even to read it; nothing was read or written",
        path=str(path),
        hint=Hint("writable_store"),
    )


def begin_on(conn: Connection, kind: TransactionKind) -> RootTransaction:
    """Begin a transaction of `kind` on `conn`: the BEGIN issued on the DBAPI connection, then
    SQLAlchemy's transaction object for it (whose own begin does nothing with this driver).

    Not in a `begin` event: an engine with connection events runs every statement through
    their dispatch, a few µs each."""
    # query_only makes an accidental write inside `read()` fail loudly instead of silently
    # upgrading the lock (and risking SQLITE_BUSY_SNAPSHOT). It is a setting of the
    # connection: set only when the mode changes from the last transaction's on it.
    read_only = kind == "read"
    pooled = conn.connection
    dbapi = pooled.dbapi_connection
    info = pooled.info
    if info.get(_QUERY_ONLY) is not read_only:
        _execute_directly(dbapi, f"PRAGMA query_only = {'ON' if read_only else 'OFF'}")
        info[_QUERY_ONLY] = read_only
    if not read_only:
        # FULL (the WAL-mode default, set explicitly) syncs the WAL at every commit: a write is
        # durable when it returns. A purge's write need not sync: in WAL mode NORMAL skips the
        # commit's sync (the header of a new WAL is still synced, which keeps the file
        # consistent), and the truncating checkpoint that follows syncs the WAL before copying
        # it and the database after; `sync_log` when it does not complete, which needs the
        # file's path (none for a URI-mode database: FULL then). Decided before every write's
        # BEGIN (SQLite refuses the pragma inside a transaction), so a purge that failed
        # halfway cannot leave NORMAL to the next ordinary write on this connection.
        unsynced = kind == "purge" and database_file(conn.engine.url) is not None
        level = "NORMAL" if unsynced else "FULL"
        if info.get(_SYNCHRONOUS) != level:
            _execute_directly(dbapi, f"PRAGMA synchronous = {level}")
            info[_SYNCHRONOUS] = level
    # A write takes the write lock up front (IMMEDIATE): no deadlock-prone lock upgrade
    # halfway through.
    _execute_directly(dbapi, "BEGIN" if read_only else "BEGIN IMMEDIATE")
    return conn.begin()


_WAL_RETRY_SECONDS = 0.005
"""Pause between attempts to switch a fresh file to WAL (`_switch_to_wal`)."""


def _switch_to_wal(cursor: Any, busy_timeout_ms: int) -> str:
    """`PRAGMA journal_mode = WAL`, retried while another connection holds a lock for up to
    the busy timeout. SQLite skips its busy handler where waiting could deadlock: a fresh
    file is still in rollback mode, and when another process holds its write lock (another
    first open switching it, or creating the schema), this connection's read lock cannot be
    promoted and the pragma fails at once. Each retry starts from no lock, so the other
    process can finish; the file is then in WAL mode and the pragma needs no write lock."""
    deadline = time.monotonic() + busy_timeout_ms / 1000
    while True:
        try:
            return str(cursor.execute("PRAGMA journal_mode = WAL").fetchone()[0])
        except sqlite3.OperationalError as exc:
            if not is_busy_error(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(_WAL_RETRY_SECONDS)


def _execute_directly(dbapi_connection: Any, statement: str) -> None:
    """Run a statement without parameters or rows on the DBAPI connection itself (about 50 µs
    less than SQLAlchemy's execution path, per transaction), failing as SQLAlchemy would: a
    sqlite3 error comes out wrapped in its SQLAlchemy class (`DBAPIError.instance`), so the
    store maps it as any other (a busy `BEGIN IMMEDIATE` is `store_busy`)."""
    try:
        dbapi_connection.execute(statement)
    except sqlite3.Error as exc:
        raise DBAPIError.instance(statement, (), exc, sqlite3.Error, dialect=None) from exc


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


class DataVersionFeed:
    """`PRAGMA data_version` changes whenever any *other* connection commits to the file. One
    connection is held for the probe alone, so every commit counts, including the ones made
    through the store's own pooled connections."""

    def __init__(self, engine: Engine) -> None:
        self._connection = engine.raw_connection()

    def version(self) -> int:
        cursor = self._connection.cursor()
        try:
            return int(cursor.execute("PRAGMA data_version").fetchone()[0])
        finally:
            cursor.close()

    def close(self) -> None:
        self._connection.close()


def _pragma(conn: Connection, statement: str) -> None:
    cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
    try:
        cursor.execute(statement)
    finally:
        cursor.close()


class SqliteDialect(Dialect):
    name: ClassVar[str] = "sqlite"
    example_url: ClassVar[str] = "sqlite:////path/to/rutter.db"
    read_only_remedy: ClassVar[str] = "make the file and its directory writable"

    @staticmethod
    def file_url(path: Path) -> str:
        """The URL of the database file at `path`."""
        return URL.create("sqlite", database=str(path)).render_as_string(hide_password=False)

    def prepare(self, url: URL) -> None:
        path = database_file(url)
        if path is None:
            return
        try:
            prepare_database_file(path)
        except OSError as exc:
            if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
                raise StoreError(
                    "store_read_only",
                    f"cannot create the store file {path}: its directory is read-only here "
                    f"({exc.strerror}); nothing was written",
                    path=str(path),
                    hint=Hint("writable_store"),
                ) from exc
            raise StoreError(
                "store_unavailable",
                f"cannot create the store file {path}: {exc.strerror}",
                path=str(path),
                hint=Hint("choose_store"),
            ) from exc

    def missing(self, url: URL) -> URL | None:
        path = database_file(url)
        if path is None or os.path.lexists(path):
            return None
        return make_url("sqlite://")  # in memory: gone when the command ends

    def absolute(self, url: URL, *, cwd: str) -> URL | None:
        path = database_file(url)
        if path is None:
            return None
        return url.set(database=str(Path(cwd) / path))  # unchanged when already absolute

    def facts(
        self, conn: Connection, *, group: str, secured: Sequence[str], grants: Grants
    ) -> StoreFacts:
        found = [str(row[0]) for row in conn.exec_driver_sql("PRAGMA quick_check").fetchall()]
        return StoreFacts(
            encoding=str(conn.exec_driver_sql("PRAGMA encoding").scalar_one()),
            suits_cjk=True,  # FTS5's trigram tokenizer counts every character
            role=self.person(conn),
            integrity=tuple(line for line in found if line != "ok"),
        )

    def configure(self, engine: Engine, *, busy_timeout_ms: int) -> None:
        install_hooks(engine, busy_timeout_ms=busy_timeout_ms)

    def begin(self, conn: Connection, kind: TransactionKind) -> RootTransaction:
        return begin_on(conn, kind)

    def failure(self, exc: DatabaseError) -> StoreFailure | None:
        if is_busy_error(exc):
            return "busy"
        code = _error_code(exc)
        return None if code is None else _FAILURES.get(code & 0xFF)

    def constraint(self, exc: IntegrityError) -> ConstraintKind:
        code = _error_code(exc)
        return "other" if code is None else _CONSTRAINTS.get(code, "other")

    def append_only_guard(self, table: str) -> tuple[str, ...]:
        check_identifier(table)
        return tuple(
            f"CREATE TRIGGER {table}_append_only_no_{verb.lower()} BEFORE {verb} ON {table} "
            f"BEGIN SELECT RAISE(ABORT, 'append-only table {table}: rows cannot be {done}'); END"
            for verb, done in (("UPDATE", "updated"), ("DELETE", "deleted"))
        )

    def existing_key_guard(self, table: str, keys: Sequence[UniqueKey]) -> tuple[str, ...]:
        # REPLACE deletes the old row without firing DELETE triggers (unless recursive
        # triggers are on, which another client need not set), so refuse the insert itself
        # whenever any key it could replace on is taken, the implicit rowid included.
        check_identifier(table)
        taken = [f"EXISTS (SELECT 1 FROM {table} WHERE rowid = NEW.rowid)"]
        for key in keys:
            match = " AND ".join(f"{column} = NEW.{column}" for column in key.columns)
            if key.partial is None:
                taken.append(f"EXISTS (SELECT 1 FROM {table} WHERE {match})")
            else:
                column, value = key.partial
                taken.append(
                    f"(NEW.{column} = '{value}' AND EXISTS (SELECT 1 FROM {table} "
                    f"WHERE {match} AND {column} = '{value}'))"
                )
        return (
            f"CREATE TRIGGER {table}_append_only_no_existing_key BEFORE INSERT ON {table} "
            f"WHEN {' OR '.join(taken)} "
            f"BEGIN SELECT RAISE(ABORT, 'append-only table {table}: "
            "a row with this key already exists'); END",
        )

    def rebuild_table(self, table: str, definition: str, columns: Sequence[str]) -> tuple[str, ...]:
        # SQLite cannot change a constraint in place: "Making Other Kinds Of Table Schema
        # Changes" in its ALTER TABLE documentation (create, copy, drop, rename), done with
        # foreign keys off (`suspend_references`) so that dropping the old table leaves the
        # rows that refer to it alone; the runner checks them all before committing.
        check_identifier(table)
        names = ", ".join(check_identifier(column) for column in columns)
        rebuilt = check_identifier(f"{table}__rebuilt")
        return (
            f"CREATE TABLE {rebuilt} ({definition})",
            f"INSERT INTO {rebuilt} ({names}) SELECT {names} FROM {table}",
            f"DROP TABLE {table}",
            f"ALTER TABLE {rebuilt} RENAME TO {table}",
        )

    def suspend_references(self, conn: Connection) -> None:
        # Outside any transaction (SQLite ignores this pragma inside one): on the DBAPI
        # connection, before SQLAlchemy begins.
        _pragma(conn, "PRAGMA foreign_keys = OFF")

    def restore_references(self, conn: Connection) -> None:
        _pragma(conn, "PRAGMA foreign_keys = ON")

    def dangling_references(self, conn: Connection) -> int:
        return len(conn.exec_driver_sql("PRAGMA foreign_key_check").fetchall())

    def lift_delete_guards(self, conn: Connection, tables: Sequence[str]) -> tuple[str, ...]:
        # DDL is transactional in SQLite: dropped inside the caller's BEGIN IMMEDIATE, the
        # triggers are back in the same transaction (or never gone, when it rolls back), and no
        # other connection ever sees the store without them. They are put back from the text
        # the store holds, so what a migration created is exactly what remains.
        restore: list[str] = []
        for table in tables:
            name = f"{check_identifier(table)}_append_only_no_delete"
            text = conn.exec_driver_sql(
                "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?", (name,)
            ).scalar_one_or_none()
            if text is None:
                continue  # not there to lift (and not rutter's to re-create here)
            conn.exec_driver_sql(f"DROP TRIGGER {name}")
            restore.append(str(text))
        return tuple(restore)

    def purge(self, engine: Engine, *, since: int | None = None) -> bool:
        if not checkpoint_truncate(engine):
            return False
        sync_truncated_log(engine.url)
        return True

    def make_durable(self, engine: Engine) -> None:
        sync_log(engine.url)

    def full_text_table(self, table: str) -> tuple[str, ...]:
        # trigram (SQLite 3.34+): every 3-character window is a token, so a phrase of them is a
        # substring match, CJK and code identifiers included; case folded (case_sensitive 0).
        # detail=full keeps positions: a phrase needs them.
        check_identifier(table)
        return (f"CREATE VIRTUAL TABLE {table} USING fts5(body, tokenize = 'trigram')",)

    def full_text_key(self) -> str:
        return "rowid"

    def full_text_min_query(self) -> int:
        return 3

    def full_text_match(self, table: str, query: str) -> tuple[str, str]:
        # One FTS5 string (a phrase): its inner quotes doubled, so no query is FTS5 syntax.
        check_identifier(table)
        return f"{table} MATCH :fts_query", '"' + query.replace('"', '""') + '"'

    def full_text_join(self) -> str:
        # SQLite's planner never reorders the tables of a CROSS JOIN ("Manual Control Of
        # Query Plans Using CROSS JOIN"), so the index drives the loop.
        return "CROSS JOIN"

    def full_text_rebuild(self, table: str) -> tuple[str, ...]:
        # FTS5 keeps a deleted row's tokens in its index segments (a delete only adds a
        # tombstone) until they are merged, and 3.40 has no `secure-delete` option for FTS5
        # (3.42+). `rebuild` drops the whole index and builds it again from the table's own
        # content, so no segment holds a removed text; the old pages are freed (zeroed:
        # secure_delete is on for every connection). Not `optimize` or `merge`: on SQLite
        # 3.40 the index reports itself corrupt after about 1,000 of those (reproduced with
        # plain sqlite3, whatever the table's size), and every later write to it fails;
        # `rebuild` also makes such an index whole again (migration 11).
        check_identifier(table)
        return (f"INSERT INTO {table} ({table}) VALUES ('rebuild')",)

    def full_text_repair(self, table: str) -> tuple[str, ...]:
        # An index damaged by the merges above cannot even be opened ("vtable constructor
        # failed"): its structure record (row 10 of the `_data` shadow table) lists one more
        # level per merge, about 2,000 of them. It is replaced by the record of an empty index
        # (a 4-byte cookie and zero levels, segments and writes), and `rebuild` then deletes
        # every row of the shadow tables and indexes the table's content again.
        check_identifier(table)
        return (
            f"UPDATE {table}_data SET block = X'00000000000000' WHERE id = 10",
            *self.full_text_rebuild(table),
        )

    def full_text_split(self, table: str, shards: Sequence[str]) -> tuple[str, ...]:
        # DROP TABLE of an FTS5 table drops its shadow tables too; their pages are freed
        # (zeroed: secure_delete). The copies index the rows again in each shard.
        check_identifier(table)
        count = len(shards)
        return (
            *(
                f"INSERT INTO {check_identifier(shard)} (rowid, body) "
                f"SELECT rowid, body FROM {table} WHERE rowid % {count} = {number}"
                for number, shard in enumerate(shards)
            ),
            f"DROP TABLE {table}",
        )

    def change_feed(self, engine: Engine) -> ChangeFeed | None:
        return DataVersionFeed(engine)
