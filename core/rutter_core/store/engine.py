"""Locating, opening and transacting on the store (contract section 2)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import platformdirs
from sqlalchemy import create_engine
from sqlalchemy.engine import URL, Connection, Engine, RootTransaction, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError, OperationalError

from rutter_core.kernel.errors import StoreError, UsageError
from rutter_core.store import sqlite
from rutter_core.store.migrations import MIGRATIONS, Migration, apply_migrations

DATABASE_FILE_NAME = "rutter.db"
DEFAULT_BUSY_TIMEOUT_MS = 10_000


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
    path = resolve_data_home(env) / DATABASE_FILE_NAME
    return URL.create("sqlite", database=str(path)).render_as_string(hide_password=False)


class Store:
    """An open store: an engine plus the transaction discipline every caller must use.

    Use `read()` and `write()` rather than the engine directly; on SQLite they are what makes
    reads snapshot-consistent and writes take the lock up front. Do not nest `write()` in
    `write()`: on SQLite the inner one waits for the outer one's lock and fails `store_busy`.
    In-memory SQLite (`sqlite://`) is one database per thread: for throwaway use only.
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.dialect_name: str = engine.dialect.name
        # Safe for messages and logs.
        self.display_url: str = engine.url.render_as_string(hide_password=True)

    @property
    def is_sqlite(self) -> bool:
        return self.dialect_name == "sqlite"

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """A deferred read transaction: one consistent snapshot, always rolled back."""
        with self._connect() as conn:
            if self.is_sqlite:
                conn.execution_options(**{sqlite.BEGIN_MODE_OPTION: "read"})
            trans = self._begin(conn)
            try:
                yield conn
            finally:
                trans.rollback()

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """A write transaction (BEGIN IMMEDIATE on SQLite): commit on success, else rollback."""
        with self._connect() as conn:
            if self.is_sqlite:
                conn.execution_options(**{sqlite.BEGIN_MODE_OPTION: "write"})
            trans = self._begin(conn)
            try:
                yield conn
            except BaseException:
                trans.rollback()
                raise
            trans.commit()

    def checkpoint(self) -> bool:
        """Flush the SQLite WAL into the database file and truncate it, so text just deleted
        or replaced survives in neither (see `sqlite.checkpoint_truncate`). Call it after the
        write transaction has committed. False when a long reader kept it from completing;
        the next checkpoint finishes the job. No-op (True) on other dialects."""
        if not self.is_sqlite:
            return True
        return sqlite.checkpoint_truncate(self.engine)

    def close(self) -> None:
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
        except OperationalError as exc:
            raise self._operational_error(exc) from exc
        with conn:
            yield conn

    def _begin(self, conn: Connection) -> RootTransaction:
        try:
            return conn.begin()
        except OperationalError as exc:
            raise self._operational_error(exc) from exc

    def _operational_error(self, exc: OperationalError) -> StoreError:
        if self.is_sqlite and sqlite.is_busy_error(exc):
            return StoreError(
                "store_busy",
                f"the store {self.display_url} stayed locked by another rutter process for "
                "longer than the busy timeout; retry when it has finished",
            )
        return StoreError(
            "store_unavailable",
            f"cannot open the store {self.display_url}: {exc.orig}; check the path or "
            "--database-url / RUTTER_DATABASE_URL",
        )


def open_store(
    url: str,
    *,
    busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
    migrations: Sequence[Migration] | None = None,
) -> Store:
    """Open (creating if needed) the store at `url` and bring its schema up to date.

    `migrations` replaces the built-in list; it exists for tests.
    """
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise UsageError(
            "invalid_database_url",
            f"not a database URL: {url!r} ({exc}); expected e.g. sqlite:////path/to/rutter.db",
        ) from exc
    is_sqlite = parsed.get_backend_name() == "sqlite"
    if is_sqlite:
        path = sqlite.database_file(parsed)
        if path is not None:
            try:
                sqlite.prepare_database_file(path)
            except OSError as exc:
                raise StoreError(
                    "store_unavailable",
                    f"cannot create the store file {path}: {exc.strerror}; check RUTTER_HOME "
                    "or --database-url / RUTTER_DATABASE_URL",
                    path=str(path),
                ) from exc
    try:
        engine = create_engine(parsed)
    except (NoSuchModuleError, ImportError) as exc:
        raise StoreError(
            "store_unavailable",
            f"no database driver for {parsed.render_as_string(hide_password=True)}: {exc}",
        ) from exc
    if is_sqlite:
        sqlite.install_hooks(engine, busy_timeout_ms=busy_timeout_ms)
    store = Store(engine)
    try:
        apply_migrations(store, MIGRATIONS if migrations is None else migrations)
    except BaseException:
        store.close()
        raise
    return store
