"""The transcript file: opened once, safely, and read as it grows (the import's only file I/O).

Fail closed, with typed errors that name the path given and never its content: the last path
component must not be a symbolic link (opened with O_NOFOLLOW: the file read is the file named,
wherever a link would lead); it must be a regular file (a directory, FIFO, socket or device is
refused, and O_NONBLOCK keeps a FIFO from blocking the open); an unreadable file is refused.
A file replaced or shortened while it is followed (`--watch`) stops the import: the lines read
so far no longer describe the file.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Final

from rutter_core.kernel.errors import NotFoundError, RejectedError

_FLAGS: Final = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)
CHUNK_BYTES: Final = 1024 * 1024


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    if stat.S_ISLNK(mode):
        return "symlink"
    return "other"


class TranscriptFile:
    """An open transcript and how far it was read."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._fd = _open(path)
        st = os.fstat(self._fd)
        self._identity = (st.st_dev, st.st_ino)
        self.offset = 0

    def read_available(self, limit: int = CHUNK_BYTES) -> bytes:
        """The next bytes written since the last read (up to `limit`); b"" when none."""
        try:
            data = os.pread(self._fd, limit, self.offset)
        except OSError as exc:
            raise _unreadable(self.path) from exc
        self.offset += len(data)
        return data

    def require_unchanged(self) -> None:
        """Refuse (`transcript_replaced`) when the path now names another file or the file got
        shorter than what was read."""
        try:
            now = Path(self.path).lstat()
            size = os.fstat(self._fd).st_size
        except OSError:
            now, size = None, self.offset
        if now is None or (now.st_dev, now.st_ino) != self._identity or size < self.offset:
            raise RejectedError(
                "transcript_replaced",
                "the transcript was replaced, removed or shortened while it was followed; what "
                "was read before is kept",
                path=self.path,
            )

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> TranscriptFile:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def _open(path: str) -> int:
    try:
        fd = os.open(path, _FLAGS)
    except FileNotFoundError as exc:
        raise NotFoundError(
            "transcript_not_found", "no transcript file at this path", path=path
        ) from exc
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise RejectedError(
                "transcript_symlink",
                "the transcript path is a symbolic link; name the file it points to",
                path=path,
            ) from exc
        if exc.errno == errno.ENXIO:  # a socket
            raise _not_regular(path, "socket") from exc
        raise _unreadable(path) from exc
    try:
        mode = os.fstat(fd).st_mode
    except OSError as exc:
        os.close(fd)
        raise _unreadable(path) from exc
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise _not_regular(path, _kind(mode))
    return fd


def _not_regular(path: str, kind: str) -> RejectedError:
    return RejectedError(
        "transcript_not_regular_file",
        f"the transcript path names a {kind}, not a regular file",
        path=path,
        details={"kind": kind},
    )


def _unreadable(path: str) -> RejectedError:
    return RejectedError("transcript_unreadable", "the transcript cannot be read", path=path)


__all__ = ["CHUNK_BYTES", "TranscriptFile"]
