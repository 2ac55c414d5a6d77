"""A private PostgreSQL server for the tests: `initdb` and `postgres` into a temporary directory,
listening on a Unix socket only, stopped at the end (also after a failure; and when the test run
itself is killed, the server gets a signal as its parent dies).

Each test gets a database of its own (`PostgresServer.create_database`), UTF-8 with the C.UTF-8
locale so that CJK characters are letters to the engine. The server's superuser is the user the
tests run as, or `postgres` when they run as root (PostgreSQL refuses to run as root).
"""

from __future__ import annotations

import itertools
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

START_TIMEOUT_SECONDS = 60
"""How long the server may take to accept connections (a shared, busy test machine)."""


def _bin_dir() -> Path | None:
    """Where PostgreSQL's server programs are: on PATH, or where Debian's packages put them
    (the newest version's), or None."""
    on_path = shutil.which("initdb")
    if on_path is not None:
        return Path(on_path).resolve().parent
    installed = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda path: int(path.parent.parent.name) if path.parent.parent.name.isdigit() else 0,
    )
    return installed[-1].parent if installed else None


def available() -> bool:
    """Whether this machine has PostgreSQL's server programs."""
    found = _bin_dir()
    return found is not None and (found / "postgres").exists()


def _program(name: str) -> str:
    found = _bin_dir()
    if found is None:
        raise RuntimeError("PostgreSQL's server programs are not installed")
    return str(found / name)


@dataclass
class PostgresServer:
    """A running server: its socket directory, superuser, and the databases made on it."""

    root: Path
    socket_dir: Path
    superuser: str
    process: subprocess.Popen[bytes]
    _as_user: list[str] = field(default_factory=list)
    _counter: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def url(self, database: str, *, user: str | None = None, password: str | None = None) -> str:
        """The SQLAlchemy URL of `database` on this server, through its socket."""
        credentials = user or self.superuser
        if password is not None:
            credentials += f":{password}"
        return f"postgresql+psycopg://{credentials}@/{database}?host={self.socket_dir}"

    def connect(self, database: str = "postgres") -> psycopg.Connection[tuple[object, ...]]:
        """A superuser connection in autocommit (for CREATE DATABASE, roles and checks)."""
        return psycopg.connect(
            host=str(self.socket_dir), dbname=database, user=self.superuser, autocommit=True
        )

    def connect_as(
        self, database: str, user: str, password: str
    ) -> psycopg.Connection[tuple[Any, ...]]:
        """A plain psycopg connection as `user` (no rutter in between), in autocommit."""
        return psycopg.connect(
            host=str(self.socket_dir), dbname=database, user=user, password=password,
            autocommit=True,
        )  # fmt: skip

    def create_role(
        self, database: str, name: str, password: str, *, group: str | None = None
    ) -> str:
        """A login role `name` with `password`, in `group` when given."""
        with self.connect(database) as conn:
            conn.execute(f"CREATE ROLE {name} LOGIN PASSWORD '{password}'")
            if group is not None:
                conn.execute(f"GRANT {group} TO {name}")
        return name

    def create_database(self, prefix: str = "rutter_test") -> str:
        """A new empty database, UTF-8 with the C.UTF-8 locale; its name."""
        name = f"{prefix}_{os.getpid()}_{next(self._counter)}"
        with self.connect() as conn:
            conn.execute(
                f"CREATE DATABASE {name} TEMPLATE template0 ENCODING 'UTF8' "
                "LC_COLLATE 'C.UTF-8' LC_CTYPE 'C.UTF-8'"
            )
        return name

    @property
    def data(self) -> Path:
        """The server's data directory (its table files are below `base/`)."""
        return self.root / "data"

    def files_holding(self, needle: bytes) -> list[Path]:
        """The files of the server's databases (below `base/`: tables, their TOAST data and
        indexes) that hold `needle`. The server keeps writing while the files are read (its
        checkpointer, another test's database): a file unlinked after it was listed holds
        nothing any more and is skipped, whatever the machine's speed."""
        holding = []
        for directory, _, names in os.walk(self.data / "base"):
            for name in names:
                path = Path(directory) / name
                try:
                    content = path.read_bytes()
                except FileNotFoundError:
                    continue
                if needle in content:
                    holding.append(path)
        return holding

    def drop_database(self, name: str) -> None:
        """Drop `name`, ending any session still on it."""
        with self.connect() as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def stop(self) -> None:
        """Stop the server (fast: open sessions are ended) and remove its files."""
        if self.process.poll() is None:
            subprocess.run(
                [*self._as_user, _program("pg_ctl"), "stop", "-m", "fast", "-D", str(self.data)],
                check=False,
                capture_output=True,
            )
            try:
                self.process.wait(timeout=START_TIMEOUT_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.send_signal(signal.SIGQUIT)  # immediate shutdown
                self.process.wait(timeout=START_TIMEOUT_SECONDS)
        shutil.rmtree(self.root, ignore_errors=True)


def _server_user() -> tuple[str, list[str]]:
    """(superuser name, command prefix that runs a program as that user): the `postgres`
    account when the tests run as root, which PostgreSQL refuses to run as."""
    if os.geteuid() != 0:
        return pwd.getpwuid(os.geteuid()).pw_name, []
    account = pwd.getpwnam("postgres")
    return account.pw_name, [
        "setpriv",
        f"--reuid={account.pw_uid}",
        f"--regid={account.pw_gid}",
        "--clear-groups",
    ]


def _dying_with_us(prefix: list[str]) -> list[str]:
    """`prefix` that also makes the program get SIGQUIT (PostgreSQL's immediate shutdown) when
    the test process dies, killed or not (set after the change of user, which clears it)."""
    if shutil.which("setpriv") is None:
        return prefix
    return [*(prefix or ["setpriv"]), "--pdeathsig=QUIT"]


def start(*, fsync: bool = False) -> PostgresServer:
    """initdb into a new temporary directory and start a server on a socket in it; without
    `fsync` (the tests) it never waits for the disk, with it (the benchmarks) it does, as a
    real server does."""
    superuser, run_as = _server_user()
    root = Path(tempfile.mkdtemp(prefix="rutter-pg-"))
    data, sockets = root / "data", root / "socket"
    sockets.mkdir()
    if os.geteuid() == 0:
        account = pwd.getpwnam(superuser)
        for path in (root, sockets):
            os.chown(path, account.pw_uid, account.pw_gid)
    try:
        subprocess.run(
            [
                *run_as,
                _program("initdb"),
                "-D",
                str(data),
                "-U",
                superuser,
                "-E",
                "UTF8",
                "--locale",
                "C.UTF-8",
                "-A",
                "trust",
                "--no-sync",
            ],
            check=True,
            capture_output=True,
        )
        # Password authentication for everyone but the superuser, so the tests can check how
        # bad credentials are reported; the superuser keeps trust (peer needs matching names).
        (data / "pg_hba.conf").write_text(
            f"local all {superuser} trust\nlocal all all scram-sha-256\n", encoding="utf-8"
        )
        log = (root / "server.log").open("wb")
        process = subprocess.Popen(
            [
                *_dying_with_us(run_as),
                _program("postgres"),
                "-D",
                str(data),
                "-c",
                "listen_addresses=",
                "-k",
                str(sockets),
                "-c",
                f"fsync={'on' if fsync else 'off'}",
                "-c",
                "max_connections=100",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    server = PostgresServer(root, sockets, superuser, process, run_as)
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while True:
        try:
            with server.connect():
                return server
        except psycopg.OperationalError:
            if process.poll() is not None or time.monotonic() > deadline:
                output = (root / "server.log").read_text(errors="replace")
                server.stop()
                raise RuntimeError(f"PostgreSQL did not start:\n{output}") from None
            time.sleep(0.1)
