"""A store on a read-only file system, end to end through the CLI: `store_read_only` (exit 1)
with a hint that says the store is read-only, for commands that only read and for writes, and
never `store_unavailable` ("check the path").

The file system is made read-only for real: as root, a read-only bind mount in a private mount
namespace of the CLI's own process (`unshare -m`, so no other process sees it); as any other
user, a directory and file without write permission (root ignores permissions, so that
would prove nothing there)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

TITLE = "ro-title-marker-3307"

_BIND_READ_ONLY = 'mount --bind "$1" "$2" && mount -o remount,ro,bind "$2" && shift 2 && exec "$@"'


def _environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUTTER_")}
    env["RUTTER_HOME"] = str(home)
    return env


def rutter(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rutter", *args, "--json"],
        env=_environment(home),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _can_bind_mount(scratch: Path) -> bool:
    source, target = scratch / "probe-source", scratch / "probe-target"
    source.mkdir()
    target.mkdir()
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", _BIND_READ_ONLY, "sh", str(source), str(target), "true"],
        capture_output=True,
        check=False,
    )
    return probe.returncode == 0


@contextmanager
def read_only(directory: Path, scratch: Path) -> Iterator[Any]:
    """A runner of the CLI that sees `directory` (a store's home) on a read-only file system."""
    if os.geteuid() != 0:
        files = [path for path in directory.iterdir() if path.is_file()]
        for path in files:
            path.chmod(0o444)
        directory.chmod(0o555)
        try:
            yield lambda *args: rutter(directory, *args)
        finally:
            directory.chmod(0o700)
            for path in files:
                path.chmod(0o600)
        return
    if shutil.which("unshare") is None or not _can_bind_mount(scratch):
        pytest.skip("root here cannot make a private read-only bind mount (unshare -m)")
    mount_point = scratch / "read-only-home"
    mount_point.mkdir()

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "rutter", *args, "--json"]
        return subprocess.run(
            ["unshare", "-m", "sh", "-c", _BIND_READ_ONLY, "sh", str(directory), str(mount_point),
             *command],
            env=_environment(mount_point),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )  # fmt: skip

    yield run


def assert_read_only(result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert result.returncode == 1, (result.stdout, result.stderr)
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "store_read_only", error
    assert "read-only" in error["message"]
    assert error["hint"] == {"fix": "writable_store"}
    assert "Traceback" not in result.stderr
    assert "check the path" not in result.stderr
    assert "read-only" in result.stderr  # the hint's wording, for people
    assert TITLE not in result.stdout + result.stderr
    return dict(error)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A store with one memory, closed (no WAL or shared-memory file left beside it)."""
    home = tmp_path / "home"
    created = rutter(
        home, "context", "memory", "create", "--scope", "user", "--title", TITLE,
        "--content", "remember this",
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    assert sorted(path.name for path in home.iterdir()) == ["rutter.db"]
    return home


READS = [("workspace", "list"), ("context", "memory", "list"), ("run", "list")]


@pytest.mark.parametrize("command", READS, ids=" ".join)
def test_a_read_on_a_read_only_mount_is_store_read_only(
    home: Path, tmp_path: Path, command: tuple[str, ...]
) -> None:
    with read_only(home, tmp_path) as run:
        assert_read_only(run(*command))


def test_a_write_on_a_read_only_mount_is_store_read_only(home: Path, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with read_only(home, tmp_path) as run:
        assert_read_only(run("workspace", "register", "ws", str(workspace)))
        assert_read_only(
            run("context", "memory", "create", "--scope", "user", "--title", "t", "--content", "c")
        )
    listed = json.loads(rutter(home, "workspace", "list").stdout)
    assert listed["workspaces"] == []  # nothing was written


def test_a_store_not_created_yet_on_a_read_only_mount_is_store_read_only(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with read_only(empty, tmp_path) as run:
        error = assert_read_only(run("workspace", "register", "ws", str(workspace)))
        # A command that only reads creates no store, so it answers as from an empty one.
        listed = run("workspace", "list")
    assert error["path"].endswith("rutter.db")
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout)["workspaces"] == []
    assert list(empty.iterdir()) == []


def test_a_store_open_elsewhere_is_read_but_not_written_on_a_read_only_mount(
    home: Path, tmp_path: Path
) -> None:
    """Another process holding the store open keeps its WAL and shared-memory index beside it:
    SQLite can then read it on the read-only mount, and a write is `store_read_only`."""
    holder = sqlite3.connect(home / "rutter.db")
    try:
        holder.execute("SELECT count(*) FROM sqlite_master").fetchall()
        assert (home / "rutter.db-shm").exists()
        workspace = tmp_path / "ws"
        workspace.mkdir()
        with read_only(home, tmp_path) as run:
            listed = run("context", "memory", "list", "--scope", "user")
            assert listed.returncode == 0, listed.stdout
            assert TITLE in listed.stdout
            assert_read_only(run("workspace", "register", "ws", str(workspace)))
    finally:
        holder.close()


def test_a_store_never_switched_to_wal_on_a_read_only_mount_is_store_read_only(
    tmp_path: Path,
) -> None:
    """A database file in SQLite's default rollback journal (copied from elsewhere, say): the
    switch to WAL fails on the read-only mount, which is the store's fact, not a bad path."""
    home = tmp_path / "rollback"
    home.mkdir()
    conn = sqlite3.connect(home / "rutter.db")
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    with read_only(home, tmp_path) as run:
        assert_read_only(run("workspace", "list"))
