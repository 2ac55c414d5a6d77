"""Locating, opening and transacting on the store (docs/reference/store.md).

The unit of work is `Store.read()` / `Store.write()`: each declares its isolation (a consistent
snapshot that refuses writes; a write that takes the lock before its first statement) and the
dialect supplies how. Failures leave them typed: a fact about the store (busy, read-only,
full, damaged) is a `StoreError`, and a write refused by a uniqueness, reference or append-only
rule is a `ConflictError`, so no caller ever sees a raw database error for either.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

import platformdirs
from sqlalchemy import create_engine
from sqlalchemy.engine import Connection, Engine, RootTransaction, make_url
from sqlalchemy.exc import ArgumentError, DatabaseError, IntegrityError, NoSuchModuleError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from rutter_core.kernel.errors import (
    ConflictError,
    Hint,
    RejectedError,
    RutterError,
    StoreError,
    UsageError,
)
from rutter_core.store.dialects import (
    EMBEDDED,
    Dialect,
    PoolKind,
    StoreFailure,
    TransactionKind,
    dialect_for,
    embedded_database_url,
)
from rutter_core.store.migrations import MIGRATIONS, Migration, apply_migrations
from rutter_core.store.schema import metadata

DATABASE_FILE_NAME = "rutter.db"
DEFAULT_BUSY_TIMEOUT_MS = 10_000

# Said of the change a refused write tried to make, by the kind of rule that refused it.
_CONFLICTS = {
    "unique": "a record with the same key already exists",
    "foreign_key": "a record it refers to is missing, or another record still refers to it",
    "append_only": "the record is append-only: it cannot be changed, removed or written twice",
}


def resolve_data_home(env: Mapping[str, str]) -> Path:
    """`RUTTER_HOME` if set and non-empty, else the platform user data dir for rutter."""
    home = env.get("RUTTER_HOME")
    if home:
        # Absolute now: the language server may change directory after start-up.
        return Path(home).expanduser().absolute()
    return Path(platformdirs.user_data_dir("rutter", appauthor=False))


def resolve_database_url(*, database_url: str | None, env: Mapping[str, str]) -> str:
    """Precedence: explicit URL > `RUTTER_DATABASE_URL` > `$RUTTER_HOME/rutter.db` > default.

    Empty strings count as unset, so `RUTTER_DATABASE_URL=` cannot select an odd default.
    """
    if database_url:
        return database_url
    from_env = env.get("RUTTER_DATABASE_URL")
    if from_env:
        return from_env
    return embedded_database_url(resolve_data_home(env) / DATABASE_FILE_NAME)


def shareable_database_url(url: str, *, cwd: str) -> str:
    """The store `url` names, as a URL another process started anywhere (an agent's MCP server)
    reaches it by: a relative file made absolute against `cwd`. Refused when it cannot be
    written into another program's configuration: a password in it (the file would keep the
    secret in plain text), or a database in memory (no other process can reach it)."""
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise UsageError(
            "invalid_database_url",
            f"not a database URL ({type(exc).__name__}); expected e.g. {EMBEDDED.example_url}",
        ) from exc
    if parsed.password is not None:
        raise RejectedError(
            "store_url_has_password",
            "the store's URL carries a password, which would be written in plain text into "
            "the agent's configuration; use a URL without one (the database's own password "
            "file or peer authentication)",
            hint=Hint("choose_store"),
        )
    absolute = dialect_for(parsed).absolute(parsed, cwd=cwd)
    if absolute is None:
        raise RejectedError(
            "store_not_shareable",
            f"the store {parsed.render_as_string(hide_password=True)} lives in this process's "
            "memory: no agent can reach it",
            hint=Hint("choose_store"),
        )
    return absolute.render_as_string(hide_password=False)


_STORE_KEY = "rutter.store"
"""Where a transaction's connection keeps the store that began it (`person_of`)."""


def person_of(conn: Connection) -> str:
    """Who the transaction on `conn` (begun by a `Store`) acts for (`Store.person`)."""
    store = conn.info.get(_STORE_KEY)
    if not isinstance(store, Store):
        raise RuntimeError("not a connection of a Store's transaction")
    return store.person(conn)


def person_apart(conn: Connection) -> str | None:
    """The person `conn`'s transaction acts for when the store keeps people apart (their user
    memories are theirs alone: the engine enforces it, and rutter asks for them alone too, so a
    role the engine does not hold, a superuser, still sees only its own); None when the store
    is one person's."""
    store = conn.info.get(_STORE_KEY)
    if not isinstance(store, Store):
        raise RuntimeError("not a connection of a Store's transaction")
    return store.person(conn) if store.dialect.separates_people else None


class PurgingWrite:
    """What a `Store.purging_write()` block gets: the write's connection, and once the block is
    over, whether the purge completed."""

    __slots__ = ("_abandoned", "_purged", "_removes", "conn")

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self._abandoned = False
        self._removes = True
        self._purged: bool | None = None

    def abandon(self) -> None:
        """The block found nothing to change after all: the transaction is rolled back instead
        of committed (anything it wrote goes with it), and nothing is purged or synced."""
        self._abandoned = True

    def removes_nothing(self) -> None:
        """The block's change removes or replaces no content after all (an edit that gives a
        text unchanged with a new retention): it is committed and made durable without a
        purge, so it neither waits for readers to leave nor rewrites the WAL (`purged` then
        stays unanswered, as for an ordinary write)."""
        self._removes = False

    @property
    def purged(self) -> bool:
        """Whether the purge completed (False: a long reader kept it from it; the next purge
        finishes the job). Only once a purging block that was not abandoned is over."""
        if self._purged is None:
            raise RuntimeError("no purge: the block is not over, was abandoned or not purging")
        return self._purged


class Store:
    """An open store: an engine, its dialect, and the unit of work every caller must use.

    Use `read()`, `write()` and `purging_write()` rather than the engine directly. Do not nest
    a write in a write: the inner one waits for the outer one's lock and fails `store_busy`. An
    in-memory URL gives one database per thread: for throwaway use only.
    """

    def __init__(self, engine: Engine, dialect: Dialect, *, acting: str | None = None) -> None:
        self.engine = engine
        self.dialect = dialect
        self.acting = acting
        """The person every transaction of this store acts for (`acting_as`); None: the one
        the connection itself is (the login role, the operating-system user)."""
        self._person: str | None = acting
        # Safe for messages and logs.
        self.display_url: str = engine.url.render_as_string(hide_password=True)
        self.missing: str | None = None
        """Set when this is an empty stand-in for a store that does not exist yet (opened
        without `create`): that store's URL, safe for messages."""

    def acting_as(self, person: str | None) -> Store:
        """This store with every transaction acting for `person` (docs/team.md): on an engine
        that separates people, the transaction takes that person's role, so the engine holds
        it to that person's rows. Shares the connections; closing it closes nothing. None:
        the store itself."""
        if person is None or person == self.acting:
            return self
        view = Store(self.engine, self.dialect, acting=person)
        view.display_url = self.display_url
        view._owns_engine = False
        return view

    def person(self, conn: Connection) -> str:
        """Who `conn`'s transaction acts for: the person user memories and bearers are written
        for, and whose name the records' `*_person` fields keep."""
        if self._person is None:
            self._person = self.dialect.person(conn)
        return self._person

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """One consistent snapshot that refuses writes; always rolled back."""
        with self._connect() as conn:
            trans = self._begin(conn, "read")
            try:
                yield conn
            except DatabaseError as exc:
                # A write attempted in a read is the caller's bug: left as it is.
                failure = self.dialect.failure(exc)
                if failure is None or failure == "read_only":
                    raise
                raise self._failure_error(failure, exc) from exc
            finally:
                trans.rollback()

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """A write transaction holding the write lock from its start: committed on success,
        rolled back on any exception."""
        with self._connect() as conn:
            trans = self._begin(conn, "write")
            try:
                yield conn
            except BaseException as exc:
                trans.rollback()
                self._raise_typed(exc)
            try:
                trans.commit()
            except DatabaseError as exc:
                # Closing the connection below rolls back what the commit left.
                self._raise_typed(exc)

    @contextmanager
    def purging_write(self, *, purge: bool = True) -> Iterator[PurgingWrite]:
        """`write()` for a change that deletes or replaces content, followed by a purge once
        committed (given the write's `Dialect.purge_mark`), before the `with` statement ends:
        the content is then in none of the store's files (`purged`), or a long reader kept the
        purge from completing (the next purge finishes the job).

        The dialect may commit it without making it durable by itself (a `purge` transaction),
        because the purge makes it durable; when the purge does not complete, the store makes
        it durable (`Dialect.make_durable`). Either way the change is durable when the `with`
        statement ends, or the statement raises. `abandon()` in the block: nothing to change;
        `removes_nothing()`: a change after all, but one that leaves nothing to purge.

        `purge=False`: an ordinary `write()` behind the same handle (durable at its commit,
        nothing purged), for a caller that knows per call whether its change removes content."""
        with self._connect() as conn:
            trans = self._begin(conn, "purge" if purge else "write")
            handle = PurgingWrite(conn)
            try:
                yield handle
            except BaseException as exc:
                trans.rollback()
                self._raise_typed(exc)
            if handle._abandoned:
                trans.rollback()
                return
            try:
                mark = self.dialect.purge_mark(conn) if purge and handle._removes else None
                trans.commit()
            except DatabaseError as exc:
                self._raise_typed(exc)
        if not purge:
            return
        if not handle._removes:
            self.dialect.make_durable(self.engine)  # committed unsynced, as a purge's write is
            return
        # After the connection went back to the pool: the checkpoint may need it.
        try:
            purged = self.dialect.purge(self.engine, since=mark)
        except StoreError:
            raise  # the dialect's own report, made once the commit is durable (`Dialect.purge`)
        except BaseException:
            # The commit must not stay undurable because the purge failed.
            self.dialect.make_durable(self.engine)
            raise
        if not purged:
            self.dialect.make_durable(self.engine)
        handle._purged = purged

    @contextmanager
    def append_only_lifted(self, conn: Connection) -> Iterator[None]:
        """Inside `write()`: the append-only tables (`store.schema`'s `append_only` marks)
        accept DELETE until the block ends, then refuse it again, in the same transaction.

        For `workspace remove --cascade` alone, which deletes a workspace's whole history. The
        guards are put back before the transaction commits, from the text the store holds; if
        the block raises, the transaction rolls back and takes the lifting with it. UPDATE and
        an INSERT over an existing key stay refused throughout.
        """
        tables = [table.name for table in metadata.sorted_tables if table.info.get("append_only")]
        restore = self.dialect.lift_delete_guards(conn, tables)
        yield
        for statement in restore:
            conn.exec_driver_sql(statement)

    def purge(self) -> bool:
        """Leave content deleted or replaced by committed writes in none of the store's files
        (memory deletion's promise). Call it after the write transaction has committed (or use
        `purging_write()`, which does). False when a long reader kept it from completing; the
        next purge finishes the job."""
        return self.dialect.purge(self.engine)

    _owns_engine = True

    @property
    def shared(self) -> bool:
        """Whether another process opening this store's URL reaches the same database (false
        for one in this process's memory)."""
        return self.dialect.absolute(self.engine.url, cwd=str(Path.cwd())) is not None

    def close(self) -> None:
        if self._owns_engine:
            self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({self.display_url!r})"

    @contextmanager
    def _connect(self) -> Iterator[Connection]:
        try:
            conn = self.engine.connect()
        except DatabaseError as exc:
            raise self._unavailable(exc) from exc
        except PoolTimeout as exc:
            # Every connection the pool may hold is in use for longer than the busy timeout.
            raise StoreError(
                "store_busy",
                f"every connection to the store {self.display_url} stayed in use for longer "
                "than the busy timeout; retry when the load has eased",
            ) from exc
        with conn:
            yield conn

    def _begin(self, conn: Connection, kind: TransactionKind) -> RootTransaction:
        try:
            trans = self.dialect.begin(conn, kind)
        except DatabaseError as exc:
            raise self._unavailable(exc) from exc
        conn.info[_STORE_KEY] = self
        if self.acting is not None:
            try:
                self.dialect.act_as(conn, self.acting)
            except BaseException:
                trans.rollback()
                raise
        return trans

    def _unavailable(self, exc: DatabaseError) -> StoreError:
        """Opening a connection or a transaction failed: the store cannot be used."""
        failure = self.dialect.failure(exc)
        if failure is not None:
            return self._failure_error(failure, exc)
        return StoreError(
            "store_unavailable",
            f"cannot open the store {self.display_url}: {exc.orig}",
            hint=Hint("choose_store"),
        )

    def _raise_typed(self, exc: BaseException) -> NoReturn:
        """Raise what a write's failure becomes: typed when it says something about the store
        or about concurrent writers, itself otherwise (a bug in a statement stays visible)."""
        if isinstance(exc, IntegrityError):
            raise self._refused(exc) from exc
        if isinstance(exc, DatabaseError):
            failure = self.dialect.failure(exc)
            if failure is not None:
                raise self._failure_error(failure, exc) from exc
        raise exc

    def _refused(self, exc: IntegrityError) -> RutterError:
        kind = self.dialect.constraint(exc)
        reason = _CONFLICTS.get(kind)
        if reason is not None:
            # What a concurrent writer can make a correct write break: re-reading shows why.
            return ConflictError(
                "conflict",
                f"the store refused the change: {reason}; read it again and retry",
                details={"constraint": kind},
            )
        return StoreError(
            "store_constraint",
            "the store refused a value that rutter should have refused before writing it "
            f"(a {kind.replace('_', '-')} rule); this is a bug in rutter",
            details={"constraint": kind},
        )

    def _failure_error(self, failure: StoreFailure, exc: DatabaseError) -> StoreError:
        url = self.display_url
        if failure == "busy":
            return StoreError(
                "store_busy",
                f"the store {url} stayed locked by another rutter process for longer than the "
                "busy timeout; retry when it has finished",
            )
        if failure == "read_only":
            return StoreError(
                "store_read_only",
                f"the store {url} is read-only here ({exc.orig}), so nothing was written; "
                f"{self.dialect.read_only_remedy}",
                hint=Hint("writable_store"),
            )
        if failure == "full":
            return StoreError(
                "store_full",
                f"the store {url} cannot grow: {exc.orig}; free some space and retry",
            )
        if failure == "io":
            return StoreError(
                "store_io_error",
                f"the store {url} could not be read or written ({exc.orig}), so nothing was "
                "written; check the free space, the file-size limit and the disk, then retry",
            )
        if failure == "denied":
            return StoreError(
                "store_permission_denied",
                f"the store {url} refused this database role the change or the read (a "
                "privilege it lacks, or a row-level security policy: another person's row), "
                "so nothing was written; its administrator grants what members need with "
                "`rutter store init`",
                hint=Hint("choose_store"),
            )
        return StoreError(
            "store_corrupt",
            f"the store {url} is damaged or not a rutter store: {exc.orig}; restore it from a "
            "backup",
            hint=Hint("choose_store"),
        )


def open_store(
    url: str,
    *,
    busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
    migrations: Sequence[Migration] | None = None,
    create: bool = True,
    migrate: bool = True,
    pool: PoolKind = "call",
) -> Store:
    """Open (creating if needed) the store at `url` and bring its schema up to date.

    Without `create`, a store that does not exist yet is not created: an empty throwaway one
    of the same engine stands in for it (`Store.missing` says so), for a command that only
    reads. Without `migrate`, the schema is left as it is (`rutter store check`). `pool`: how
    long this process keeps the store (`PoolKind`): one command, or a long-lived server.
    `migrations` replaces the built-in list; it exists for tests.
    """
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise UsageError(
            "invalid_database_url",
            f"not a database URL: {url!r} ({exc}); expected e.g. {EMBEDDED.example_url}",
        ) from exc
    dialect = dialect_for(parsed)
    stand_in = None if create else dialect.missing(parsed)
    if stand_in is not None:
        store = open_store(
            stand_in.render_as_string(hide_password=False),
            busy_timeout_ms=busy_timeout_ms,
            migrations=migrations,
            migrate=migrate,
            pool=pool,
        )
        store.missing = parsed.render_as_string(hide_password=True)
        return store
    dialect.prepare(parsed)
    try:
        engine = create_engine(
            parsed, **dialect.pool_options(parsed, pool, busy_timeout_ms=busy_timeout_ms)
        )
    except (NoSuchModuleError, ImportError) as exc:
        raise StoreError(
            "store_unavailable",
            f"no database driver for {parsed.render_as_string(hide_password=True)}: {exc}",
        ) from exc
    dialect.configure(engine, busy_timeout_ms=busy_timeout_ms)
    store = Store(engine, dialect)
    if not migrate:
        return store
    try:
        apply_migrations(
            store,
            MIGRATIONS if migrations is None else migrations,
            current_schema=migrations is None,
        )
    except BaseException:
        store.close()
        raise
    return store
