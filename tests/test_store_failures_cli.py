"""A failing store, end to end through the CLI: each damage is a typed error with a message
that says what to do, exit code 1, no traceback, and never the user's content.

Real store files damaged with real bytes (truncated, header overwritten, a text file, a table
or the migration ledger dropped), a read-only store, and a store that cannot grow (a
file-size limit set with `resource.setrlimit` in the CLI process)."""

from __future__ import annotations

import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

TITLE = "title-marker-5521"
CONTENT = "content-marker-8834 " * 40


def run(
    home: Path,
    *args: str,
    url: str | None = None,
    file_size_limit: int | None = None,
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUTTER_")}
    env["RUTTER_HOME"] = str(home)
    if url is not None:
        env["RUTTER_DATABASE_URL"] = url

    def limit() -> None:
        if file_size_limit is not None:
            # A write past the limit fails with EFBIG instead of killing the process.
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))

    return subprocess.run(
        [sys.executable, "-m", "rutter", *args, "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        preexec_fn=limit,
    )


def create_memory(home: Path, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return run(
        home, "context", "memory", "create", "--scope", "user", "--title", TITLE,
        "--content", CONTENT, **kwargs,
    )  # fmt: skip


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    assert create_memory(home).returncode == 0
    return home


def assert_typed_failure(result: subprocess.CompletedProcess[str], code: str) -> dict[str, Any]:
    assert result.returncode == 1, (result.stdout, result.stderr)
    error = json.loads(result.stdout)["error"]
    assert error["code"] == code, error
    assert "Traceback" not in result.stderr
    for marker in ("title-marker", "content-marker"):
        assert marker not in result.stdout + result.stderr
    assert "INSERT" not in result.stdout + result.stderr
    return dict(error)


def _truncate(db: Path) -> None:
    with db.open("r+b") as handle:
        handle.truncate(db.stat().st_size // 2)


def _overwrite_header(db: Path) -> None:
    with db.open("r+b") as handle:
        handle.write(b"not a database!!")


def _text_file(db: Path) -> None:
    db.write_text("these are my notes\n" * 100)


def _overwrite_pages(db: Path) -> None:
    data = bytearray(db.read_bytes())
    for offset in range(4096, len(data), 4096):  # every page header after the first
        data[offset : offset + 16] = b"\xff" * 16
    db.write_bytes(bytes(data))


def _sql(statement: str) -> Callable[[Path], None]:
    def damage(db: Path) -> None:
        conn = sqlite3.connect(db, isolation_level=None)
        try:
            conn.execute(statement)
        finally:
            conn.close()

    return damage


DAMAGES: dict[str, tuple[Callable[[Path], None], str]] = {
    "truncated": (_truncate, "store_corrupt"),
    "header overwritten": (_overwrite_header, "store_corrupt"),
    "a text file": (_text_file, "store_corrupt"),
    "pages overwritten": (_overwrite_pages, "store_corrupt"),
    "a table dropped": (_sql("DROP TABLE memories"), "store_schema_damaged"),
    "the ledger dropped": (_sql("DROP TABLE schema_migrations"), "migration_ledger_damaged"),
    "the ledger emptied": (_sql("DELETE FROM schema_migrations"), "migration_ledger_damaged"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_a_damaged_store_is_a_typed_error(home: Path, damage: str) -> None:
    db = home / "rutter.db"
    # Fold the WAL into the file first, so the damage is to what SQLite reads.
    _sql("PRAGMA wal_checkpoint(TRUNCATE)")(db)
    do, code = DAMAGES[damage]
    do(db)
    for args in (("context", "memory", "list"), ("workspace", "list")):
        error = assert_typed_failure(run(home, *args), code)
        assert "backup" in error["message"] or "fresh store" in error["message"]
    assert_typed_failure(create_memory(home), code)


def test_a_read_only_store_refuses_writes_without_echoing_them(home: Path) -> None:
    url = f"sqlite:///file:{home / 'rutter.db'}?mode=ro&uri=true"
    listed = run(home, "context", "memory", "list", url=url)
    assert listed.returncode == 0, listed.stderr
    error = assert_typed_failure(create_memory(home, url=url), "store_read_only")
    assert "read-only" in error["message"] or "read only" in error["message"]


def test_a_write_past_the_file_size_limit_is_store_io_error(home: Path, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "AGENTS.md").write_text("- rule-marker keep this\n" * 2500)  # 60 KB
    assert run(home, "workspace", "register", "ws", str(workspace)).returncode == 0
    _sql("PRAGMA wal_checkpoint(TRUNCATE)")(home / "rutter.db")
    # Room for the shared-memory index (32 KiB) and a few WAL frames: pinning a 60 KB
    # snapshot needs more, and the write that would pass the limit fails with EFBIG.
    result = run(
        home, "run", "create", "--workspace", "ws", "--goal", "g", file_size_limit=48 * 1024
    )
    error = assert_typed_failure(result, "store_io_error")
    assert "rule-marker" not in result.stdout + result.stderr
    assert "file-size limit" in error["message"]
    listed = json.loads(run(home, "run", "list", "--workspace", "ws").stdout)
    assert listed["runs"] == []  # nothing half-written
