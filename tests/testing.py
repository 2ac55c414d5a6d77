"""What test modules share: trees of real files, and the `rutter` CLI run in this process.

Test modules import helpers from here (or from a fixture in conftest), never from another test
module: a test file stays a list of tests.

`Cli` runs the CLI through its entry function (`rutter_cli.main.main`) in this process, with the
environment, working directory and standard streams of a real run swapped in and restored after:
starting a Python process for each command cost about a third of a second, hundreds of times.
`Cli.subprocess` starts the real process, for what only one can show (the installed entry point,
exit codes as the shell sees them, pipes, signals).
"""

from __future__ import annotations

import contextlib
import gc
import io
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from rutter_core.kernel import clock
from rutter_core.kernel.errors import RutterError
from rutter_core.store import Store
from rutter_core.store.migrations import MIGRATIONS

EXAMPLE = Path(__file__).resolve().parent.parent / "docs" / "examples" / "monorepo"
"""The example monorepo of the docs (`make demo`)."""


def write_tree(root: Path, files: Mapping[str, str | bytes]) -> None:
    """Create `files` (workspace-relative path → text or bytes) below `root`."""
    for rel, body in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(body, bytes):
            path.write_bytes(body)
        else:
            path.write_text(body, encoding="utf-8", newline="")


class SteppedClock:
    """rutter's clock (`rutter_core.kernel.clock.utc_now`, behind every stored timestamp) running
    from the real time, moved on by `advance`: a later second without sleeping for one."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self._real = clock.utc_now
        self._offset = timedelta()
        monkeypatch.setattr(clock, "utc_now", self.now)

    def now(self) -> datetime:
        return self._real() + self._offset

    def advance(self, seconds: float = 1.0) -> None:
        self._offset += timedelta(seconds=seconds)


def git(root: Path, *args: str) -> str:
    """`git ARGS` in `root` as a fixed author; its output, stripped."""
    done = subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    return done.stdout.strip()


def clone(path: Path, origin: str | None, files: Mapping[str, str | bytes]) -> Path:
    """A real git work tree at `path` with `files` committed and `origin` as its remote."""
    path.mkdir(parents=True, exist_ok=True)
    write_tree(path, files)
    git(path, "init", "-q")
    git(path, "add", "-A")
    git(path, "commit", "-q", "--allow-empty", "-m", "start")
    if origin is not None:
        git(path, "remote", "add", "origin", origin)
    return path


def refused(error: type[RutterError], code: str, call: Callable[..., Any]) -> RutterError:
    """`call()` must raise `error` with `code`: the error."""
    with pytest.raises(error) as raised:
        call()
    assert raised.value.code == code, raised.value
    return raised.value


def acting_person(store: Store | str) -> str:
    """Who the store's transactions act for (`Store.person`): the person its records name (the
    role it connects as on PostgreSQL, the operating-system user on SQLite). A URL is opened
    for the question and closed."""
    if isinstance(store, str):
        from rutter_core.store import open_store

        with open_store(store) as opened:
            return acting_person(opened)
    with store.read() as conn:
        return store.person(conn)


def sqlite_file(store: Store | str) -> Path:
    """The SQLite file behind `store` (or the store URL), for a check of the file itself.
    Fails the test at once on any other engine: a PostgreSQL URL's database is a name, not a
    path, and opening it with sqlite3 would create an empty file by that name and check
    nothing."""
    from sqlalchemy.engine import make_url

    url = make_url(store) if isinstance(store, str) else store.engine.url
    name = url.get_backend_name()
    assert name == "sqlite", f"a check of the SQLite file on a {name} store: mark it sqlite_only"
    path = Path(str(url.database))
    assert path.is_file(), f"no SQLite file at {path}"
    return path


def sqlite_connect(store: Store, **options: Any) -> sqlite3.Connection:
    """A plain sqlite3 connection to `store`'s file (`sqlite_file`), which never creates one."""
    conn: sqlite3.Connection = sqlite3.connect(
        f"{sqlite_file(store).as_uri()}?mode=rw", uri=True, **options
    )
    return conn


def raw_rows(url: str, sql: str, *params: object) -> list[tuple[Any, ...]]:
    """`sql` (`?` placeholders) run and committed behind rutter's back on the store `url`
    names, whichever its engine: a plain sqlite3 connection to the existing file, or psycopg.
    The rows it returns (none for a statement without)."""
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        file = sqlite3.connect(f"{sqlite_file(url).as_uri()}?mode=rw", uri=True)
        try:
            with file:
                return [tuple(row) for row in file.execute(sql, params)]
        finally:
            file.close()
    import psycopg

    host = parsed.query.get("host")
    with psycopg.connect(
        host=host if isinstance(host, str) else None,
        dbname=parsed.database,
        user=parsed.username,
        password=parsed.password,
    ) as conn:
        cursor = conn.execute(sql.replace("?", "%s"), params)
        return [tuple(row) for row in cursor.fetchall()] if cursor.description else []


def tamper(store: Store, *statements: str) -> None:
    """Rewrite rows as someone with the file could: triggers dropped, plain sqlite3."""
    conn = sqlite_connect(store)
    try:
        for table in ("continuity_nodes", "continuity_snapshots", "run_instruction_snapshots"):
            for verb in ("update", "delete", "existing_key"):
                conn.execute(f"DROP TRIGGER IF EXISTS {table}_append_only_no_{verb}")
        for statement in statements:
            conn.execute(statement)
        conn.commit()
    finally:
        conn.close()


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    """This process's environment without any RUTTER_ setting, with `home` as RUTTER_HOME and a
    wide page (COLUMNS), then `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUTTER_")}
    env["RUTTER_HOME"] = str(home)
    env["COLUMNS"] = "200"
    env.update(extra)
    return env


@contextlib.contextmanager
def _swapped_environment(env: Mapping[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def _working_directory(path: Path) -> Iterator[None]:
    saved = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(saved)


def _text_of(raw: bytes) -> str:
    """Decoded as `subprocess.run(..., text=True)` decodes a pipe (universal newlines)."""
    return io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8").read()


def run_cli(
    args: list[str], *, cwd: Path, env: Mapping[str, str], stdin: bytes | str = b""
) -> subprocess.CompletedProcess[str]:
    """`rutter ARGS` run in this process through the CLI's entry function, as a real run would
    see it: `env` as the whole environment, `cwd` as the working directory, `stdin` as standard
    input (empty unless given), standard output and error captured. The exit code is `main`'s.
    """
    from rutter_cli.main import main

    out, err = io.BytesIO(), io.BytesIO()
    streams = (
        io.TextIOWrapper(io.BytesIO(stdin.encode() if isinstance(stdin, str) else stdin),
                         encoding="utf-8"),
        io.TextIOWrapper(out, encoding="utf-8", write_through=True),
        io.TextIOWrapper(err, encoding="utf-8", write_through=True),
    )  # fmt: skip
    saved = sys.stdin, sys.stdout, sys.stderr
    with _swapped_environment(env), _working_directory(cwd):
        sys.stdin, sys.stdout, sys.stderr = streams
        try:
            code = main(args)
        except SystemExit as stop:  # as the interpreter turns it into an exit code
            code = stop.code if isinstance(stop.code, int) else 1
        finally:
            for stream in streams[1:]:
                stream.flush()
            sys.stdin, sys.stdout, sys.stderr = saved
            # `main` freezes what it imported out of the collector's passes, as a process that
            # ends soon may; this one goes on running tests.
            gc.unfreeze()
    return subprocess.CompletedProcess(
        ["rutter", *args], code, _text_of(out.getvalue()), _text_of(err.getvalue())
    )


class Cli:
    """The `rutter` command line with a private RUTTER_HOME (`home`), run in `cwd`, with
    `extra_env` in its environment; on the store `database_url` names (RUTTER_DATABASE_URL) when
    given, else the home's SQLite file."""

    def __init__(
        self,
        home: Path,
        cwd: Path,
        extra_env: Mapping[str, str] | None = None,
        *,
        database_url: str | None = None,
    ) -> None:
        self.home = home
        self.cwd = cwd
        self.extra_env = dict(extra_env or {})
        """Set in every command's environment (after `cli_env`'s own), e.g. a summarizer's;
        `database_url` is RUTTER_DATABASE_URL here."""
        if database_url is not None:
            self.extra_env["RUTTER_DATABASE_URL"] = database_url

    @property
    def database_url(self) -> str | None:
        """The store URL the commands are given (RUTTER_DATABASE_URL), if any."""
        return self.extra_env.get("RUTTER_DATABASE_URL")

    @property
    def store_url(self) -> str:
        """The URL of the store the commands use."""
        return self.database_url or f"sqlite:///{self.home / 'rutter.db'}"

    def env(self, **extra: str) -> dict[str, str]:
        """The environment a command runs with (see `cli_env`), with `extra_env`."""
        return cli_env(self.home, **{**self.extra_env, **extra})

    def __call__(
        self, *args: str, cwd: Path | None = None, stdin: bytes | str = b""
    ) -> subprocess.CompletedProcess[str]:
        """`rutter ARGS`, run in this process (see `run_cli`)."""
        return run_cli(list(args), cwd=cwd or self.cwd, env=self.env(), stdin=stdin)

    def subprocess(
        self, *args: str, cwd: Path | None = None, stdin: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """`python -m rutter ARGS` as a real process (for exit codes, pipes and signals)."""
        return subprocess.run(
            [sys.executable, "-m", "rutter", *args],
            cwd=cwd or self.cwd,
            env=self.env(),
            input=stdin,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def json(self, *args: str, code: int = 0, cwd: Path | None = None) -> Any:
        """`rutter ARGS --json`, which must exit with `code`: its JSON document."""
        result = self(*args, "--json", cwd=cwd)
        assert result.returncode == code, (result.stdout, result.stderr)
        return json.loads(result.stdout)


LEGACY_USER_MEMORY = (
    "INSERT INTO memories (memory_id, scope, scope_id, workspace_id, title, content, "
    "content_sha256, status, source_kind, references_json, retention_until, redacted, "
    "created_by, updated_by, version, created_at, updated_at) VALUES ('mem_' || "
    "'01M8VVYTD4XWCMA67W2577NTV2', 'user', 'local-user', NULL, 'Old', 'kept from before', "
    "'" + "0" * 64 + "', 'active', 'operator_explicit', '[]', NULL, 0, 'cli', 'cli', 1, "
    "'2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')"
)
"""A user memory as a store before migration 17 held it (no person)."""

BEFORE_PEOPLE = tuple(m for m in MIGRATIONS if m.version < 17)
"""The migrations of a store from before people (migration 17), those numbered after it
left out too."""


def _this_machine() -> str:
    """The machine ID every rutter process of the test run derives: the tests' processes are
    given no RUTTER_MACHINE_ID (`cli_env` and the clients drop every RUTTER_ variable)."""
    from rutter_core.app.facade import machine_sources
    from rutter_core.workspaces.machine import machine_id

    return machine_id(machine_sources({}))


THIS_MACHINE = _this_machine()
"""This machine's ID, as rutter run by a test finds it (registrations made through the
services directly are made on it, so the CLI, the language server and the clients find them)."""
