"""The SQLite store's files on disk: which file a URL names, creating it private, and flushing
it and its WAL to the disk when SQLite's own syncs do not (a purge's write, a WAL's emptying).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from sqlalchemy.engine import URL

from rutter_core.kernel.errors import StoreError


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


def sync_log(url: URL) -> None:
    """fsync the database's WAL and file, so every transaction committed to them is durable.

    For a purge that did not complete after a write committed without its sync (`begin_on`):
    its frames are in the WAL, or in the file if another checkpoint copied them (or the last
    connection to close, which deletes the WAL). No path (in memory, URI mode): those purges
    commit with FULL, nothing to do.
    """
    path = database_file(url)
    if path is None:
        return
    target = _wal_of(path)
    try:
        with contextlib.suppress(FileNotFoundError):
            _fsync(target)
        target = path
        _fsync(target)
    except OSError as exc:
        raise StoreError(
            "store_io_error",
            f"the change was committed to the store {path} but could not be flushed to disk "
            f"(fsync of {target.name}: {exc.strerror or exc}); it is readable now but may not "
            "survive a power failure; check the disk and the free space",
            path=str(path),
        ) from exc


def sync_truncated_log(url: URL) -> None:
    """fsync the WAL after a truncating checkpoint completed, so its truncation is durable.

    SQLite syncs the WAL before the checkpoint copies it and the database file after, but not
    the WAL's truncation to zero bytes: until the file system commits that on its own (ext4:
    within about 5 s), a power failure can bring the WAL back at its old length, every frame
    in it (an edited memory's old text as first written, say) readable again, and valid, so
    SQLite would replay it. An fsync of the emptied file makes its new length durable, whoever
    writes to it next; the file may be gone (the last connection closed), then nothing is left.
    """
    path = database_file(url)
    if path is None:
        return
    target = _wal_of(path)
    try:
        _fsync(target)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StoreError(
            "store_io_error",
            f"the change was committed to the store {path} and is on the disk, and the content "
            f"it removed is in none of the store's files, but emptying {target.name} could not "
            f"be flushed to disk (fsync: {exc.strerror or exc}); after a power failure that "
            "content may be readable in it again until the store is purged once more; check "
            "the disk",
            path=str(path),
        ) from exc


def _wal_of(path: Path) -> Path:
    return path.with_name(f"{path.name}-wal")


def _fsync(path: Path) -> None:
    # fsync flushes a file's data whoever wrote it, so a read-only descriptor does (as SQLite's
    # own sync: `fsync`, or `F_FULLFSYNC` on macOS only with its `fullfsync` pragma); Windows
    # flushes only through a handle open for writing.
    fd = os.open(path, os.O_RDWR if os.name == "nt" else os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
