"""The filesystem edge of discovery: safe lstat/probe/list/read with an identity cache.

Nothing here follows a symlink. Reads are verified twice (metadata before and after,
and two reads of the bytes) so a file rewritten while it is read is refused, never mixed.

Caches are keyed on file identity (device, inode, size, mtime, ctime, mode) and are only
trusted for entries whose timestamps are older than the racy window at the moment they were
cached: a file modified within the filesystem's timestamp granularity of being cached could
change again without its identity changing (git's "racy" problem), so it is re-read.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Generic, NamedTuple, TypeVar, cast

from rutter_core.kernel.errors import discovery_error

# FAT has 2 s mtime granularity; everything else is finer. Anything modified this close to
# the moment it was cached is treated as possibly still changing.
DEFAULT_RACY_WINDOW_NS = 2_000_000_000

# A file modified less than this long ago may still be being written (see _read_verified): it
# is read again once it is this old, and any change in between is refused. A writer that pauses
# mid-write for longer than this (with discovery inside the pause, after the interval) is the
# limit no interval removes (the threat model states it with this figure, `settled_ms`).
# 100 ms catches the 50 ms pauses of issue 18 with margin and costs a read of a file saved
# moments ago at most 100 ms; files older than it (all cached ones) cost nothing.
# Filesystem timestamps come from a coarse clock that lags by up to a tick (~4 ms).
SETTLE_NS = 100_000_000
SETTLED_MS = SETTLE_NS // 1_000_000


def settle(seconds: float) -> None:
    """The settle wait of a recently written file (a seam: tests drive a paused writer)."""
    time.sleep(seconds)


class NotSettled(Exception):
    """A read under `FileReader.settling_later` met a file that must settle first.

    Raised instead of the settle wait, so the caller can wait elsewhere (`wait_s`, at most
    `SETTLE_NS`) and run the same work again with the same `SettleLater`. Nothing read by the
    interrupted attempt is delivered; it is never a `RutterError`.
    """

    def __init__(self, rel: str, wait_s: float) -> None:
        super().__init__(f"{rel} was written moments ago; read it again in {wait_s:.3f} s")
        self.rel = rel
        self.wait_s = wait_s


@dataclass(frozen=True, slots=True)
class _Unsettled:
    identity: FileIdentity
    content: bytes
    ready_ns: int


@dataclass(slots=True)
class SettleLater:
    """The settle waits of one piece of work, done by its caller between attempts.

    An attempt that meets a file stamped less than `SETTLE_NS` ago records the file's identity
    and bytes (read twice, identically) and raises `NotSettled`. On the next attempt, once the
    wait is over, that file's read is the third read of `_read_verified`: it must show the same
    identity and bytes, else `concurrent_modification`, exactly as a change during the wait.
    With `defer` False (the last attempt) a file still to settle waits in place (`settle`).
    """

    defer: bool = True
    seen: dict[tuple[str, int], _Unsettled] = field(default_factory=dict, repr=False)
    """What each deferred file showed, by path and read length."""


# Directories whose st_size is at most this are listed rather than probed name by name. On
# ext4 that is one block (about a hundred entries); elsewhere st_size grows with entries too.
LISTING_MAX_DIR_BYTES = 4096

# Bounds memory in a long-lived server: one entry per (workspace, target) recently asked for.
MAX_DERIVED_RESULTS = 4096

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)
_READ_FLAGS = os.O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK | _O_CLOEXEC | _O_BINARY
_CAN_PROBE_WITHOUT_FOLLOWING = os.access in os.supports_follow_symlinks
_PROC_FD_PATHS = sys.platform.startswith("linux") and os.path.isdir("/proc/self/fd")
# A name over the file system's limit (ENAMETOOLONG) cannot exist: missing, not unreadable.
_MISSING_ERRNOS = frozenset({errno.ENOENT, errno.ENOTDIR, errno.ENAMETOOLONG})
# Windows reparse points (junctions included) count as links.
_REPARSE = getattr(stat, "FILE_ATTRIBUTE_REPARSE_POINT", 0x400)


class FileIdentity(NamedTuple):
    dev: int
    ino: int
    size: int
    mtime_ns: int
    ctime_ns: int
    mode: int


def identity_of(st: os.stat_result) -> FileIdentity:
    return FileIdentity(
        st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode
    )


def is_link(st: os.stat_result) -> bool:
    if stat.S_ISLNK(st.st_mode):
        return True
    attributes = getattr(st, "st_file_attributes", 0)
    return bool(attributes & _REPARSE)


def lstat_or_none(path: str) -> os.stat_result | None:
    """lstat, with a missing path (or a missing directory on the way) as None."""
    try:
        return os.lstat(path)
    except OSError as exc:
        if exc.errno in _MISSING_ERRNOS:
            return None
        raise


def read_head(path: str, length: int) -> bytes | None:
    """The first `length` bytes of the regular file at `path`, opened as discovery opens files
    (never through a final link, never blocking on a FIFO); None when it cannot be read."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, length)
    except OSError:
        return None
    finally:
        os.close(fd)


T = TypeVar("T")


@dataclass(slots=True)
class _Cached(Generic[T]):
    identity: FileIdentity
    value: T


class _IdentityCache(Generic[T]):
    """Path → value, served only while the path's identity is unchanged and not racy."""

    def __init__(self, racy_window_ns: int, clock_ns: Callable[[], int]) -> None:
        self._entries: dict[str, _Cached[T]] = {}
        self._racy_window_ns = racy_window_ns
        self._clock_ns = clock_ns

    def get(self, path: str, identity: FileIdentity) -> T | None:
        entry = self._entries.get(path)
        if entry is None or entry.identity != identity:
            return None
        return entry.value

    def put(self, path: str, identity: FileIdentity, value: T, started_ns: int) -> None:
        # `started_ns` is taken before the read: a change after it but within the same
        # timestamp tick would leave the identity unchanged, so such entries are not kept.
        newest = max(identity.mtime_ns, identity.ctime_ns)
        if newest + self._racy_window_ns > started_ns:
            self._entries.pop(path, None)
            return
        self._entries[path] = _Cached(identity, value)

    def discard(self, path: str) -> None:
        self._entries.pop(path, None)

    def clear(self) -> None:
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


@dataclass(frozen=True, slots=True)
class DirEntryStat:
    name: str
    st: os.stat_result


class FileReader:
    """Safe, cached access to the files discovery needs. One instance per long-lived caller.

    Safe to share between threads: each cache operation is a single dict operation or runs
    under a lock, and a lost cache entry only costs a re-read.
    """

    def __init__(
        self,
        *,
        racy_window_ns: int = DEFAULT_RACY_WINDOW_NS,
        clock_ns: Callable[[], int] = time.time_ns,
    ) -> None:
        self._clock_ns = clock_ns
        self._probes: _IdentityCache[tuple[tuple[str, ...], frozenset[str]]] = _IdentityCache(
            racy_window_ns, clock_ns
        )
        self._listings: _IdentityCache[tuple[str, ...]] = _IdentityCache(racy_window_ns, clock_ns)
        # Decoded results, keyed by decoder name and path: warm reads skip decoding too.
        self._decoded: _IdentityCache[object] = _IdentityCache(racy_window_ns, clock_ns)
        self._decoders: set[str] = set()
        self._derived: dict[Hashable, tuple[object, object]] = {}
        self._derived_lock = threading.Lock()
        self._local = threading.local()

    @contextmanager
    def settling_later(self, later: SettleLater) -> Iterator[None]:
        """Reads on this thread inside the block leave settle waits to the caller (see
        `SettleLater`): for a server whose one disk thread must not sleep."""
        previous = getattr(self._local, "later", None)
        self._local.later = later
        try:
            yield
        finally:
            self._local.later = previous

    def clear(self) -> None:
        self._probes.clear()
        self._listings.clear()
        self._decoded.clear()
        self._derived.clear()

    def recall(self, key: Hashable, inputs: object) -> object | None:
        """A result derived from exactly `inputs` earlier (e.g. an assembled snapshot)."""
        entry = self._derived.get(key)
        if entry is None or entry[0] != inputs:
            return None
        return entry[1]

    def remember(self, key: Hashable, inputs: object, value: object) -> None:
        with self._derived_lock:
            self._derived.pop(key, None)
            if len(self._derived) >= MAX_DERIVED_RESULTS:
                del self._derived[next(iter(self._derived))]  # oldest first: dicts keep order
            self._derived[key] = (inputs, value)

    def invalidate(self, path: str) -> None:
        """Forget what is cached for `path` (an absolute path): used by file watchers."""
        self._probes.discard(path)
        self._listings.discard(path)
        for decoder in tuple(self._decoders):  # a copy: other threads may add one meanwhile
            self._decoded.discard(_decoded_key(decoder, path))

    def probe(
        self, dir_path: str, dir_st: os.stat_result, names: tuple[str, ...]
    ) -> dict[str, os.stat_result]:
        """lstat of each of `names` inside `dir_path` that exists.

        While the directory's identity is unchanged no entry was added, removed or renamed in
        it, so only the names known to be present are re-checked.
        """
        dir_identity = identity_of(dir_st)
        cached = self._probes.get(dir_path, dir_identity)
        if cached is not None and cached[0] == names:
            known = cached[1]
            if not known:
                return {}  # most directories hold none of the names: nothing to re-check
            found: dict[str, os.stat_result] = {}
            for name in names:
                if name in known:
                    st = lstat_or_none(os.path.join(dir_path, name))
                    if st is None:
                        break  # vanished despite the cache: probe afresh below
                    found[name] = st
            else:
                return found
        started = self._clock_ns()
        found = {}
        if dir_st.st_size <= LISTING_MAX_DIR_BYTES:
            # A small directory: one listing costs less than a lookup per candidate name, each
            # of which resolves the whole (deep) path again. Present names are then lstat'ed.
            with os.scandir(dir_path) as scan:
                present = {entry.name for entry in scan if entry.name in names}
            candidates = [name for name in names if name in present]
            quick = False
        else:
            # A large directory: listing would cost in proportion to its size, so look up each
            # name. Most are absent: access() answers that without the cost of an exception. It
            # cannot tell "absent" from "not allowed to look", so it is only used in a
            # directory we may search; elsewhere lstat raises and discovery fails closed.
            candidates = list(names)
            quick = _CAN_PROBE_WITHOUT_FOLLOWING and os.access(dir_path, os.X_OK)
        for name in candidates:
            path = os.path.join(dir_path, name)
            if quick and not os.access(path, os.F_OK, follow_symlinks=False):
                continue
            st = lstat_or_none(path)
            if st is not None:
                found[name] = st
        after = lstat_or_none(dir_path)
        if after is not None and identity_of(after) == dir_identity:
            self._probes.put(dir_path, dir_identity, (names, frozenset(found)), started)
        return found

    def list_dir(self, dir_path: str, dir_st: os.stat_result) -> list[DirEntryStat]:
        """Every entry of a directory with its lstat, sorted by name bytes."""
        dir_identity = identity_of(dir_st)
        names = self._listings.get(dir_path, dir_identity)
        if names is None:
            started = self._clock_ns()
            with os.scandir(dir_path) as scan:
                names = tuple(sorted((entry.name for entry in scan), key=os.fsencode))
            after = lstat_or_none(dir_path)
            if after is not None and identity_of(after) == dir_identity:
                self._listings.put(dir_path, dir_identity, names, started)
        entries: list[DirEntryStat] = []
        for name in names:
            st = lstat_or_none(os.path.join(dir_path, name))
            if st is None:
                self._listings.discard(dir_path)
                raise discovery_error(
                    "concurrent_modification",
                    f"{name} disappeared from {dir_path} while it was being listed; try again",
                )
            entries.append(DirEntryStat(name, st))
        return entries

    def read_decoded(
        self,
        path: str,
        st: os.stat_result,
        *,
        max_bytes: int,
        rel: str,
        decoder: str,
        decode: Callable[[bytes], T],
    ) -> T:
        """`decode` of the bytes of the regular file that `st` (its lstat) describes.

        The bytes are verified unchanged while read; `decode`'s result is cached under
        `decoder` while the file's identity holds. Raises `too_large` past `max_bytes` and
        `concurrent_modification` when the file is replaced or rewritten while it is read.
        """
        expected = identity_of(st)
        if expected.size > max_bytes:
            raise discovery_error(
                "too_large",
                f"{rel} is {expected.size} bytes, over the limit of {max_bytes} bytes; "
                "shorten it or split it into several files",
                path=rel,
                details={"bytes": expected.size, "limit": max_bytes},
            )
        key = _decoded_key(decoder, path)
        self._decoders.add(decoder)
        cached = self._decoded.get(key, expected)
        if cached is not None:
            return cast(T, cached)
        started = self._clock_ns()
        value = decode(self._read_verified(path, expected, max_bytes=max_bytes, rel=rel))
        self._decoded.put(key, expected, value, started)
        return value

    def read_prefix(self, path: str, st: os.stat_result, *, prefix: int, rel: str) -> bytes:
        """The first `prefix` bytes of the regular file that `st` (its lstat) describes (all of
        it when shorter), verified as `read_decoded` verifies a whole file; never cached. For a
        reader that keeps only the start of a file (an agent cutting it at its budget)."""
        return self._read_verified(path, identity_of(st), max_bytes=prefix, rel=rel, prefix=True)

    def _read_verified(
        self, path: str, expected: FileIdentity, *, max_bytes: int, rel: str, prefix: bool = False
    ) -> bytes:
        def changed() -> Exception:
            return discovery_error(
                "concurrent_modification",
                f"{rel} changed while it was being read; discovery was stopped so no mixed "
                "content is delivered; try again once it has been saved",
                path=rel,
            )

        try:
            fd = os.open(path, _READ_FLAGS)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise discovery_error(
                    "symlink",
                    f"{rel} became a symbolic link while it was read; nothing was delivered. "
                    "Try again; if it stays a link, point it at a regular file inside the "
                    f"workspace or exclude {rel} in .prayu/instructions.ignore",
                    path=rel,
                ) from exc
            if exc.errno in _MISSING_ERRNOS:
                raise changed() from exc
            raise
        try:
            _require_opened_at(fd, path, rel)
            before = os.fstat(fd)
            if identity_of(before) != expected or not stat.S_ISREG(before.st_mode):
                raise changed()
            wanted = max_bytes if prefix else max_bytes + 1
            first = _pread_all(fd, wanted)
            second = _pread_all(fd, wanted)
            # The kernel stamps mtime when a write starts; a large write can stall between pages
            # with both our reads inside the stall. A file stamped moments ago gets a settle
            # delay and a third read, so a write that is still going on shows up as a change.
            now = self._clock_ns()
            age_ns = now - max(expected.mtime_ns, expected.ctime_ns)
            later: SettleLater | None = getattr(self._local, "later", None)
            if later is not None:
                seen = later.seen.get((path, wanted))
                if seen is not None:  # waited for by the caller: these reads are the third
                    if seen.identity != expected or seen.content != first:
                        raise changed()
                    if now >= seen.ready_ns:
                        age_ns = SETTLE_NS
            if age_ns < SETTLE_NS:  # a future stamp (clock skew) waits the full delay, no more
                wait_ns = min(SETTLE_NS, SETTLE_NS - age_ns)
                if later is not None and later.defer:
                    if first != second or identity_of(os.fstat(fd)) != expected:
                        raise changed()
                    later.seen[(path, wanted)] = _Unsettled(expected, first, now + wait_ns)
                    raise NotSettled(rel, wait_ns / 1e9)
                settle(wait_ns / 1e9)
                second = _pread_all(fd, wanted)
            after = os.fstat(fd)
        finally:
            os.close(fd)
        size = min(expected.size, max_bytes) if prefix else expected.size
        if first != second or identity_of(after) != expected or len(first) != size:
            raise changed()
        return first


def _decoded_key(decoder: str, path: str) -> str:
    return f"{decoder}\0{path}"


def _require_opened_at(fd: int, path: str, rel: str) -> None:
    """Refuse a file reached through a directory that became a link after it was checked.

    O_NOFOLLOW guards only the last path component; the kernel's own record of where the open
    landed (/proc/self/fd on Linux) covers every component. `path` is built from the resolved
    workspace root, so any difference means a link was followed on the way.
    """
    if not _PROC_FD_PATHS:
        return
    try:
        landed = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return  # no /proc here after all (e.g. a restricted sandbox): nothing more to check
    if landed == f"{path} (deleted)":
        raise discovery_error(  # replaced or removed between the open and this check
            "concurrent_modification",
            f"{rel} was replaced while it was being read; try again once it has been saved",
            path=rel,
        )
    if landed != path:
        raise discovery_error(
            "symlink",
            f"{rel} was reached through a directory that became a symbolic link during "
            f"discovery (it resolved to {landed}); nothing was delivered",
            path=rel,
        )


def _pread_all(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    offset = 0
    while offset < limit:
        chunk = os.pread(fd, limit - offset, offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)
