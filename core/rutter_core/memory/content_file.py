"""Memory content imported from a file the operator named (the CLI's `--content-file`).

Reading is fail-closed: a regular file only (not a link, FIFO, device or stdin), not a
sensitive source by the name given nor by where it really is, at most the content bound of
UTF-8 (a BOM is dropped). The path is checked and reported as the record's import source, never
stored. It lives in core, next to the policy it applies, so any local surface that lets a person
name a file reads it the same way.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Final

from rutter_core.kernel.errors import NotFoundError, RejectedError
from rutter_core.memory.policy import MAX_CONTENT_BYTES, check_source_ref


@dataclass(frozen=True, slots=True)
class ContentFile:
    """Text read by `read_content_file`, and the path it came from (checked, not stored)."""

    text: str
    source_ref: str


_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)
_BOM: Final = b"\xef\xbb\xbf"


def read_content_file(path: str, *, cwd: Path) -> ContentFile:
    """The text of `path` (relative to `cwd`): a regular file (not a link, FIFO or device, not
    stdin), not a sensitive source by its name or by where it really is, at most 16 KiB of
    UTF-8 (a BOM is dropped). Every refusal is typed."""
    if not path or "\0" in path:
        raise RejectedError(
            "invalid_path", f"invalid content file path {path!r}", details={"path": path}
        )
    check_source_ref(path, field="content file")
    candidate = PurePath(path)
    if not candidate.is_absolute():
        candidate = PurePath(cwd) / candidate
    # Where it really is: a harmless name in a linked directory can still be ~/.ssh/...
    real = PurePath(os.path.realpath(candidate.parent)) / candidate.name
    check_source_ref(str(real), field="content file")
    flags = os.O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK | _O_CLOEXEC | _O_BINARY
    try:
        fd = os.open(real, flags)
    except OSError as exc:
        raise _open_error(path, exc) from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise RejectedError(
                "not_regular_file",
                f"content file {path} is not a regular file (a directory, FIFO, socket or "
                "device); give a regular text file",
                path=path,
            )
        limit = MAX_CONTENT_BYTES + len(_BOM)
        if info.st_size > limit:
            raise _too_large(path, info.st_size)
        data = os.read(fd, limit + 1)
    finally:
        os.close(fd)
    data = data.removeprefix(_BOM)
    if len(data) > MAX_CONTENT_BYTES:  # a BOM does not count; a file that grew meanwhile does
        raise _too_large(path, len(data))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RejectedError(
            "invalid_utf8",
            f"content file {path} is not valid UTF-8 (byte offset {exc.start}); save it as UTF-8",
            path=path,
            details={"offset": exc.start},
        ) from exc
    return ContentFile(text, path)


def _too_large(path: str, size: int) -> RejectedError:
    return RejectedError(
        "too_large",
        f"content file {path} is {size} bytes; memory content is at most {MAX_CONTENT_BYTES} "
        "bytes: shorten it",
        path=path,
        details={"bytes": size, "max_bytes": MAX_CONTENT_BYTES},
    )


def _open_error(path: str, exc: OSError) -> RejectedError | NotFoundError:
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return NotFoundError("not_found", f"content file {path} does not exist", path=path)
    if exc.errno in (errno.ELOOP, errno.EMLINK):  # O_NOFOLLOW on a link (EMLINK: BSDs)
        return RejectedError(
            "symlink",
            f"content file {path} is a symbolic link; give the file it points to (after "
            "checking it is what you mean to store)",
            path=path,
        )
    return RejectedError(
        "unreadable",
        f"cannot read content file {path}: {exc.strerror or exc}; check its permissions",
        path=path,
        details={"errno": exc.errno},
    )
