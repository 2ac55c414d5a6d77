"""Shared fixtures: real directories, real files, a real store under a temporary RUTTER_HOME."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from rutter_core.discovery.fsread import FileReader
from rutter_core.store import Store, open_store
from tests.postgres import PostgresServer
from tests.postgres import available as postgres_available
from tests.postgres import start as start_postgres
from tests.testing import SteppedClock, write_tree

__all__ = ["write_tree"]  # also importable from here, as it was


@pytest.fixture
def workspace_root(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root.resolve()


@pytest.fixture
def reader() -> FileReader:
    return FileReader()


@pytest.fixture
def rutter_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("RUTTER_HOME", str(home))
    monkeypatch.delenv("RUTTER_DATABASE_URL", raising=False)
    return home


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test marked `both_dialects` (itself or its module) whose store comes from `store_url`
    runs once per engine; one also marked `sqlite_only` runs on SQLite alone."""
    if "store_dialect" not in metafunc.fixturenames:
        return
    definition = metafunc.definition
    if definition.get_closest_marker("both_dialects") is None:
        return
    if definition.get_closest_marker("sqlite_only") is not None:
        return
    metafunc.parametrize(
        "store_dialect",
        [
            pytest.param("sqlite", id="sqlite"),
            pytest.param("postgresql", id="postgresql", marks=pytest.mark.postgres),
        ],
        # Module scope: a module-scoped fixture (a served store, `module_store_url`) may depend
        # on the engine too; the module's tests then run grouped by engine.
        scope="module",
    )


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A private PostgreSQL server for the whole run (tests/postgres.py), stopped at its end."""
    if not postgres_available():
        pytest.fail(
            "PostgreSQL's server programs (initdb, postgres) are not on PATH: install "
            "PostgreSQL 15 or later with its contrib modules (`make test` does on Debian)"
        )
    server = start_postgres()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def stepped_clock(monkeypatch: pytest.MonkeyPatch) -> SteppedClock:
    """rutter's clock, moved on by the test (see `tests.testing.SteppedClock`)."""
    return SteppedClock(monkeypatch)


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> Iterator[str]:
    """The URL of a new, empty database of its own on the private server; dropped after."""
    database = postgres_server.create_database()
    yield postgres_server.url(database)
    postgres_server.drop_database(database)
    stray = Path(database)
    if stray.exists():
        # sqlite3.connect(store.engine.url.database) on this store creates an empty file by
        # that name here, and a check on it passes without looking at the store at all.
        stray.unlink()
        pytest.fail(
            f"the test opened the PostgreSQL database's name {database!r} as a SQLite file in "
            "the working directory: read the store through `tests.testing.raw_rows`/"
            "`sqlite_file`, or mark the test sqlite_only"
        )


@pytest.fixture(scope="module")
def store_dialect() -> str:
    """The engine of the test's store: SQLite, unless the test is marked `both_dialects`."""
    return "sqlite"


@pytest.fixture
def store_url(store_dialect: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """The URL of a new, empty store of `store_dialect`."""
    if store_dialect == "postgresql":
        return str(request.getfixturevalue("postgres_url"))
    return f"sqlite:///{tmp_path / 'store.db'}"


@pytest.fixture(scope="module")
def module_store_url(
    store_dialect: str, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[str]:
    """`store_url` for a module's tests together (a store a served module shares)."""
    if store_dialect != "postgresql":
        yield f"sqlite:///{tmp_path_factory.mktemp('store') / 'store.db'}"
        return
    server: PostgresServer = request.getfixturevalue("postgres_server")
    database = server.create_database()
    yield server.url(database)
    server.drop_database(database)


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    opened = open_store(store_url)
    try:
        yield opened
    finally:
        opened.close()


NAMES_DESCRIPTORS = Path("/proc/self/fd").is_dir()
"""Whether `synced_files` can name the file behind a descriptor (Linux)."""


def synced_files(monkeypatch: pytest.MonkeyPatch, fail: bool = False) -> list[tuple[str, int]]:
    """Every `os.fsync` from here on, as (file name, its size then); each is made (a spy, the
    real call) unless `fail`: an EIO, which a healthy disk cannot be made to give on demand."""
    synced: list[tuple[str, int]] = []
    real_fsync = os.fsync

    def spy(fd: int) -> None:
        synced.append((Path(f"/proc/self/fd/{fd}").readlink().name, os.fstat(fd).st_size))
        if fail:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", spy)
    return synced


# What the redaction corpus test measured (tests/test_redaction_corpus.py), printed at the end
# of the run so recall and false positives show in the normal output, not only under `-s`. It
# travels on the test's report (a user property), which reaches this process from any worker.
REDACTION_FIGURES = "redaction_corpus"


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    del config
    for outcome in ("passed", "failed"):
        for report in terminalreporter.stats.get(outcome, []):
            for name, value in getattr(report, "user_properties", ()):
                if name == REDACTION_FIGURES and isinstance(value, list):
                    terminalreporter.write_sep("-", "redaction corpus")
                    for line in value:
                        terminalreporter.write_line(str(line))


SLOW_SUITES = {"test_neovim": pytest.mark.neovim, "postgres": pytest.mark.postgres}
"""Module name part → the marker its tests get, so `-m "not neovim"` leaves out the real-editor
suite (and `not postgres` the PostgreSQL one) without each module having to say so."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        module = item.path.stem
        for part, marker in SLOW_SUITES.items():
            if part in module:
                item.add_marker(marker)
