"""Discovery against files that change under it, and the FileReader's identity cache.

(a) A writer thread rewrites a source while discovery runs again and again: every answer is
    either a snapshot holding exactly one written version, or a typed refusal; never a mix.
    Then the same checks made deterministic: one change injected at each step of a read.
(b) The racy-timestamp rule, with a clock the test controls, and the identity cache's
    documented trade-off.
(c) Entries created or deleted in a directory are seen by a warm reader.

No test asserts that a race was actually observed (that would be a timing assertion); the
writer is simply fast enough that, in practice, both outcomes occur.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from rutter_core.discovery import fsread
from rutter_core.discovery.fsread import DEFAULT_RACY_WINDOW_NS, FileIdentity, FileReader
from rutter_core.discovery.snapshot import Snapshot
from rutter_core.discovery.walk import discover
from rutter_core.kernel.errors import RutterError
from tests.conftest import write_tree

ROUNDS = 80  # enough to hit both outcomes in practice; the suite runs on 2 shared cores
STABLE = "stable claude\n"
SAME_LENGTH = (b"alpha " * 40 + b"\n", b"omega " * 40 + b"\n")
DIFFERENT_LENGTH = (b"alpha " * 40 + b"\n", b"short omega\n")
# 48 KiB: twelve pages, under the 64 KiB source bound.
LARGE_SAME_LENGTH = (b"alpha " * 8000 + b"\n", b"omega " * 8000 + b"\n")
LARGE_DIFFERENT_LENGTH = (LARGE_SAME_LENGTH[0], b"short omega\n")


# -- (a) a writer racing discovery --------------------------------------------------------------


def write_pwrite(path: Path, body: bytes) -> None:
    """In place, same length: never shorter or longer than a version. One write of a one-page
    file is never seen half-done; see the large-file test below for what happens otherwise."""
    fd = os.open(path, os.O_WRONLY)
    try:
        os.pwrite(fd, body, 0)
    finally:
        os.close(fd)


def write_truncate(path: Path, body: bytes) -> None:
    """Truncate, then write: between the two the file is really empty for a moment."""
    fd = os.open(path, os.O_WRONLY)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, body, 0)
    finally:
        os.close(fd)


def write_replace(path: Path, body: bytes) -> None:
    """Write a temporary file beside it, then rename over it (what careful editors do)."""
    temporary = path.with_name(path.name + ".tmp")  # not a source name, not a rule (.tmp)
    temporary.write_bytes(body)
    temporary.replace(path)


Writer = Callable[[Path, bytes], None]

# Why `empty_source` is acceptable only with truncate-and-write: between the truncate and the
# write the file on disk really is empty. A discovery that looks at it entirely within that
# moment sees a consistent (unchanging) empty file and refuses it as discovery.md says for an
# empty source; that is a faithful answer about the disk, not mixed content. The other writers
# never leave the file in any state but one of the two full versions.
VARIANTS: list[tuple[str, Writer, tuple[bytes, bytes], frozenset[str]]] = [
    ("pwrite-same-length", write_pwrite, SAME_LENGTH, frozenset({"concurrent_modification"})),
    (
        "truncate-same-length",
        write_truncate,
        SAME_LENGTH,
        frozenset({"concurrent_modification", "empty_source"}),
    ),
    (
        "truncate-different-length",
        write_truncate,
        DIFFERENT_LENGTH,
        frozenset({"concurrent_modification", "empty_source"}),
    ),
    ("replace-same-length", write_replace, SAME_LENGTH, frozenset({"concurrent_modification"})),
    (
        "replace-different-length",
        write_replace,
        DIFFERENT_LENGTH,
        frozenset({"concurrent_modification"}),
    ),
]


class RacingWriter:
    """Alternates the two versions as fast as it can until stopped."""

    def __init__(self, path: Path, write: Writer, versions: tuple[bytes, bytes]) -> None:
        self.path = path
        self.write = write
        self.versions = versions
        self.writes = 0
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                self.write(self.path, self.versions[self.writes % 2])
                self.writes += 1
        except BaseException as exc:
            self.error = exc

    @property
    def last(self) -> bytes:
        return self.versions[(self.writes - 1) % 2] if self.writes else self.versions[0]

    def __enter__(self) -> RacingWriter:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join(timeout=60)
        assert not self._thread.is_alive()
        if self.error is not None:
            raise self.error


@pytest.fixture
def fast_switching() -> Iterator[None]:
    """Switch threads often so that reads and writes interleave within one discovery."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        yield
    finally:
        sys.setswitchinterval(previous)


def agents_content(snapshot: Snapshot, rel: str) -> str:
    contents = {source.path: source.content for source in snapshot.sources}
    assert contents.get("CLAUDE.md") == STABLE
    assert rel in contents, [source.path for source in snapshot.sources]
    return contents[rel]


def race(
    root: Path,
    rel: str,
    write: Writer,
    versions: tuple[bytes, bytes],
    acceptable: frozenset[str],
    shared_reader: bool,
) -> None:
    """Discover ROUNDS times while a writer alternates `versions` of `rel`."""
    write_tree(root, {rel: versions[0], "CLAUDE.md": STABLE, "src/x.go": "x"})
    allowed = {version.decode() for version in versions}
    warm = FileReader()
    outcomes: Counter[str] = Counter()
    with RacingWriter(root / rel, write, versions) as writer:
        for _ in range(ROUNDS):
            reader = warm if shared_reader else FileReader()
            try:
                snapshot = discover("race", str(root), "src/x.go", reader=reader)
            except RutterError as exc:
                refusal: RutterError | None = exc
            else:
                refusal = None
            if refusal is not None:
                assert refusal.code in acceptable, refusal
                if refusal.code != "concurrent_modification":
                    assert refusal.path == rel, refusal
                outcomes[refusal.code] += 1
                continue
            content = agents_content(snapshot, rel)
            assert content in allowed, (
                f"mixed content ({outcomes}): {content[:80]!r}…{content[-80:]!r}"
            )
            outcomes["snapshot"] += 1
    assert sum(outcomes.values()) == ROUNDS
    # Once the writer has stopped, both a fresh and the warm reader see its last version.
    final = writer.last.decode()
    for reader in (FileReader(), warm):
        snapshot = discover("race", str(root), "src/x.go", reader=reader)
        assert agents_content(snapshot, rel) == final, (outcomes, writer.writes)


@pytest.mark.usefixtures("fast_switching")
@pytest.mark.parametrize("shared_reader", [False, True], ids=["fresh-reader", "warm-reader"])
@pytest.mark.parametrize("rel", ["AGENTS.md", ".prayu/rules/style.md"])
@pytest.mark.parametrize(
    ("write", "versions", "acceptable"),
    [variant[1:] for variant in VARIANTS],
    ids=[variant[0] for variant in VARIANTS],
)
def test_rewrites_during_discovery_never_mix(
    workspace_root: Path,
    rel: str,
    write: Writer,
    versions: tuple[bytes, bytes],
    acceptable: frozenset[str],
    shared_reader: bool,
) -> None:
    race(workspace_root, rel, write, versions, acceptable, shared_reader)


# Files of many pages. Rename is atomic whatever the size, so this must hold:
@pytest.mark.usefixtures("fast_switching")
@pytest.mark.parametrize("shared_reader", [False, True], ids=["fresh-reader", "warm-reader"])
@pytest.mark.parametrize(
    "versions", [LARGE_SAME_LENGTH, LARGE_DIFFERENT_LENGTH], ids=["same-length", "different-length"]
)
def test_large_files_replaced_during_discovery_never_mix(
    workspace_root: Path, versions: tuple[bytes, bytes], shared_reader: bool
) -> None:
    race(
        workspace_root,
        "AGENTS.md",
        write_replace,
        versions,
        frozenset({"concurrent_modification"}),
        shared_reader,
    )


# Torn in-place writes (fsread.FileReader._read_verified): one write(2) of a multi-page file can
# block between pages (waiting for writeback of the next page, dirty-page throttling,
# preemption) after the kernel has already updated mtime/ctime, which it does at the *start* of
# the write. A discovery that runs entirely inside that pause sees the same identity before and
# after and two identical reads, and delivers half-new, half-old bytes (observed here split at
# 32 KiB, in most rounds). The engine re-reads a file stamped within SETTLE_NS after a settle
# delay, so such a write shows up as a change.
@pytest.mark.usefixtures("fast_switching")
def test_large_file_rewritten_in_place_during_discovery_never_mixes(workspace_root: Path) -> None:
    race(
        workspace_root,
        "AGENTS.md",
        write_pwrite,
        LARGE_SAME_LENGTH,
        frozenset({"concurrent_modification"}),
        shared_reader=False,
    )


# -- (b) the racy-timestamp rule --------------------------------------------------------------

# A moment long past (2020-09-13T12:26:40Z) to stamp files with.
OLD_NS = 1_600_000_000 * 10**9
WINDOW = DEFAULT_RACY_WINDOW_NS


def ctime_follows_mtime(monkeypatch: pytest.MonkeyPatch) -> None:
    """Simulate a filesystem whose change time does not move on a rewrite within one timestamp
    tick (coarse timestamps): identities see ctime == mtime. Only then can an in-place rewrite
    that keeps the size and (via os.utime) the mtime keep the file's identity, which is the
    situation the racy rule exists for."""
    real = fsread.identity_of

    def identity(st: os.stat_result) -> FileIdentity:
        return real(st)._replace(ctime_ns=st.st_mtime_ns)

    monkeypatch.setattr(fsread, "identity_of", identity)


def count_reads(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    counts: Counter[str] = Counter()
    real = os.pread

    def pread(fd: int, length: int, offset: int) -> bytes:
        counts["pread"] += 1
        return real(fd, length, offset)

    monkeypatch.setattr(os, "pread", pread)
    return counts


def rewrite_keeping_identity(path: Path, body: bytes, mtime_ns: int) -> None:
    assert len(body) == path.stat().st_size
    write_pwrite(path, body)
    os.utime(path, ns=(mtime_ns, mtime_ns))


def agents_text(root: Path, reader: FileReader) -> str:
    [source] = discover("racy", str(root), "x.go", reader=reader).sources
    return source.content


@pytest.mark.parametrize(
    "offset_ns",
    [-WINDOW, 0, 1, WINDOW // 2, WINDOW - 1],
    ids=["mtime-in-the-future", "same-instant", "1ns-later", "half-window", "window-minus-1ns"],
)
def test_racily_cached_file_is_reread_after_identity_preserving_rewrite(
    workspace_root: Path, monkeypatch: pytest.MonkeyPatch, offset_ns: int
) -> None:
    ctime_follows_mtime(monkeypatch)
    path = workspace_root / "AGENTS.md"
    path.write_bytes(b"version one\n")
    os.utime(path, ns=(OLD_NS, OLD_NS))
    reader = FileReader(clock_ns=lambda: OLD_NS + offset_ns)
    before = fsread.identity_of(path.lstat())
    assert agents_text(workspace_root, reader) == "version one\n"

    rewrite_keeping_identity(path, b"version two\n", OLD_NS)
    # The simulation holds: the rewrite is invisible to the identity.
    assert fsread.identity_of(path.lstat()) == before
    assert agents_text(workspace_root, reader) == "version two\n"

    # And it is read from disk each time while it stays racy.
    reads = count_reads(monkeypatch)
    assert agents_text(workspace_root, reader) == "version two\n"
    assert reads["pread"] > 0


@pytest.mark.parametrize("offset_ns", [WINDOW + 1, 3600 * 10**9], ids=["just-past", "an-hour"])
def test_identity_cache_serves_a_file_cached_long_after_its_mtime(
    workspace_root: Path, monkeypatch: pytest.MonkeyPatch, offset_ns: int
) -> None:
    ctime_follows_mtime(monkeypatch)
    path = workspace_root / "AGENTS.md"
    path.write_bytes(b"version one\n")
    os.utime(path, ns=(OLD_NS, OLD_NS))
    reader = FileReader(clock_ns=lambda: OLD_NS + offset_ns)
    assert agents_text(workspace_root, reader) == "version one\n"

    reads = count_reads(monkeypatch)
    assert agents_text(workspace_root, reader) == "version one\n"
    assert reads["pread"] == 0, "an unchanged, non-racy file must be served from the cache"

    # The documented trade-off of identity caching: a rewrite that keeps the identity (same
    # inode, size, mtime and, on this simulated filesystem, ctime) is not noticed. If this
    # assertion starts failing, the cache was changed; make sure that was deliberate.
    rewrite_keeping_identity(path, b"version two\n", OLD_NS)
    assert agents_text(workspace_root, reader) == "version one\n"
    assert reads["pread"] == 0
    # A fresh reader reads the disk.
    assert agents_text(workspace_root, FileReader(clock_ns=lambda: OLD_NS + offset_ns)) == (
        "version two\n"
    )

    # Any identity change is noticed: here the size.
    path.write_bytes(b"version three\n")
    os.utime(path, ns=(OLD_NS, OLD_NS))
    assert agents_text(workspace_root, reader) == "version three\n"


def test_recent_ctime_alone_makes_a_file_racy(
    workspace_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An old mtime (as `touch -d`, tar or git checkouts leave) does not make a file safe to
    cache while its ctime is recent."""
    path = workspace_root / "AGENTS.md"
    path.write_bytes(b"version one\n")
    os.utime(path, ns=(OLD_NS, OLD_NS))
    ctime = path.lstat().st_ctime_ns
    assert ctime > OLD_NS + WINDOW
    reader = FileReader(clock_ns=lambda: ctime + WINDOW // 2)
    assert agents_text(workspace_root, reader) == "version one\n"
    reads = count_reads(monkeypatch)
    assert agents_text(workspace_root, reader) == "version one\n"
    assert reads["pread"] > 0

    # The same file, cached once its ctime is old enough, is served from the cache.
    later = FileReader(clock_ns=lambda: ctime + WINDOW + 1)
    assert agents_text(workspace_root, later) == "version one\n"
    reads.clear()
    assert agents_text(workspace_root, later) == "version one\n"
    assert reads["pread"] == 0


# -- (a, deterministic) one change injected at each step of a read ----------------------------
#
# The thread race above shows the outcome distribution; these pin each check of the verified
# read down by performing the change at an exact moment: after the probe's lstat (before the
# open), between the two reads, and after both reads.


class ReadHooks:
    """Wraps os.open/os.pread for one file and runs a change at a chosen moment."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
        self.path = str(path)
        self.fds: set[int] = set()
        self.on_open: Callable[[], None] | None = None
        self.after_read: dict[int, Callable[[], None]] = {}  # nth completed full read → change
        self.reads_done = 0
        self.fired: list[str] = []
        real_open, real_pread = os.open, os.pread

        def fake_open(file: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            if os.fspath(file) == self.path and self.on_open is not None:
                change, self.on_open = self.on_open, None
                change()
                self.fired.append("open")
            fd = real_open(file, flags, *args, **kwargs)
            if os.fspath(file) == self.path:
                self.fds.add(fd)
            return fd

        def fake_pread(fd: int, length: int, offset: int) -> bytes:
            chunk = real_pread(fd, length, offset)
            if fd in self.fds and not chunk:  # end of one full read of the file
                self.reads_done += 1
                change = self.after_read.pop(self.reads_done, None)
                if change is not None:
                    change()
                    self.fired.append(f"after read {self.reads_done}")
            return chunk

        monkeypatch.setattr(os, "open", fake_open)
        monkeypatch.setattr(os, "pread", fake_pread)


def injected(root: Path, hooks: ReadHooks, expected: str) -> RutterError:
    with pytest.raises(RutterError) as caught:
        discover("inject", str(root), "x.go", reader=FileReader())
    assert hooks.fired, "the change was never injected: the read path changed, update the test"
    assert caught.value.code == expected, caught.value
    assert caught.value.path == "AGENTS.md"
    return caught.value


def test_rewrite_between_the_two_reads_is_refused(
    workspace_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the second read can notice: the rewrite keeps the identity (size, mtime and, on
    this simulated coarse-timestamp filesystem, ctime)."""
    ctime_follows_mtime(monkeypatch)
    path = workspace_root / "AGENTS.md"
    path.write_bytes(b"version one\n")
    os.utime(path, ns=(OLD_NS, OLD_NS))
    hooks = ReadHooks(monkeypatch, path)
    hooks.after_read[1] = lambda: rewrite_keeping_identity(path, b"version two\n", OLD_NS)
    injected(workspace_root, hooks, "concurrent_modification")


def test_rewrite_after_both_reads_is_refused(
    workspace_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/reference/discovery.md: metadata before and after the read differ →
    concurrent_modification."""
    path = workspace_root / "AGENTS.md"
    path.write_bytes(b"version one\n")
    os.utime(path, ns=(OLD_NS, OLD_NS))
    hooks = ReadHooks(monkeypatch, path)
    hooks.after_read[2] = lambda: rewrite_keeping_identity(path, b"version two\n", OLD_NS + 10**9)
    injected(workspace_root, hooks, "concurrent_modification")


@pytest.mark.parametrize("change", ["rewrite", "replace", "delete", "symlink"])
def test_change_between_probe_and_open_is_refused(
    workspace_root: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, change: str
) -> None:
    path = workspace_root / "AGENTS.md"
    path.write_bytes(b"version one\n")
    os.utime(path, ns=(OLD_NS, OLD_NS))
    outside = tmp_path / "outside.md"
    outside.write_bytes(b"outside!!!!\n")
    hooks = ReadHooks(monkeypatch, path)

    def swap() -> None:
        if change == "rewrite":
            rewrite_keeping_identity(path, b"version two\n", OLD_NS + 10**9)
        elif change == "replace":
            staged = workspace_root / "staged.tmp"
            staged.write_bytes(b"version two\n")
            os.utime(staged, ns=(OLD_NS, OLD_NS))  # same size and mtime; another inode
            staged.replace(path)
        elif change == "delete":
            path.unlink()
        else:
            path.unlink()
            path.symlink_to(outside)

    hooks.on_open = swap
    injected(workspace_root, hooks, "symlink" if change == "symlink" else "concurrent_modification")


# -- (c) directory changes and the probe cache ---------------------------------------------------


def count_lstats(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    counts: Counter[str] = Counter()
    real = os.lstat

    def lstat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        counts["lstat"] += 1
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "lstat", lstat)
    return counts


def age(root: Path, stamp_ns: int) -> None:
    """Give every directory and file below `root` (and `root`) the mtime `stamp_ns`, so that the
    next entry created in any of them certainly changes that directory's identity."""
    for path in [root, *root.rglob("*")]:
        os.utime(path, ns=(stamp_ns, stamp_ns), follow_symlinks=False)


def paths_seen(root: Path, reader: FileReader) -> list[str]:
    snapshot = discover("probe", str(root), "sub/x.go", reader=reader)
    fresh = discover("probe", str(root), "sub/x.go", reader=FileReader())
    assert [s.path for s in snapshot.sources] == [s.path for s in fresh.sources]
    assert [s.content for s in snapshot.sources] == [s.content for s in fresh.sources]
    assert snapshot.ignored == fresh.ignored
    return [source.path for source in snapshot.sources]


def test_created_and_deleted_entries_reach_a_warm_reader(
    workspace_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = workspace_root
    write_tree(root, {"AGENTS.md": "root\n", ".prayu/rules/a.md": "a\n", "sub/x.go": "x"})
    age(root, OLD_NS)
    # Ten seconds ahead of real time: every entry is past the racy window, so the warm reader
    # caches everything it can (probes, listings, decoded files).
    warm = FileReader(clock_ns=lambda: time.time_ns() + 10 * 10**9)
    assert paths_seen(root, warm) == ["AGENTS.md", ".prayu/rules/a.md"]

    # The caches really are in use: a warm discovery reads no file and checks fewer names
    # than a cold one.
    lstats = count_lstats(monkeypatch)
    reads = count_reads(monkeypatch)
    discover(
        "probe",
        str(root),
        "sub/x.go",
        reader=FileReader(clock_ns=lambda: time.time_ns() + 10 * 10**9),
    )
    cold = lstats["lstat"]
    lstats.clear()
    reads.clear()
    discover("probe", str(root), "sub/x.go", reader=warm)
    assert reads["pread"] == 0
    assert lstats["lstat"] < cold
    monkeypatch.undo()

    stamp = OLD_NS

    def step(files: dict[str, str | bytes] | None = None, remove: str | None = None) -> list[str]:
        nonlocal stamp
        # Give everything a fresh old mtime and let the warm reader cache that state, so the
        # change below is the only thing that can move a directory's identity.
        stamp += 10**9
        age(root, stamp)
        paths_seen(root, warm)
        if files:
            write_tree(root, files)
        if remove:
            (root / remove).unlink()
        return paths_seen(root, warm)

    assert step({"sub/AGENTS.md": "sub\n"}) == ["AGENTS.md", ".prayu/rules/a.md", "sub/AGENTS.md"]
    assert step({".prayu/rules/b.md": "b\n"}) == [
        "AGENTS.md",
        ".prayu/rules/a.md",
        ".prayu/rules/b.md",
        "sub/AGENTS.md",
    ]
    assert step({".prayu/rules/n/c.md": "c\n"}) == [
        "AGENTS.md",
        ".prayu/rules/a.md",
        ".prayu/rules/b.md",
        ".prayu/rules/n/c.md",
        "sub/AGENTS.md",
    ]
    assert step(remove="AGENTS.md") == [
        ".prayu/rules/a.md",
        ".prayu/rules/b.md",
        ".prayu/rules/n/c.md",
        "sub/AGENTS.md",
    ]
    assert step(remove=".prayu/rules/a.md") == [
        ".prayu/rules/b.md",
        ".prayu/rules/n/c.md",
        "sub/AGENTS.md",
    ]
    assert step(remove=".prayu/rules/n/c.md") == [".prayu/rules/b.md", "sub/AGENTS.md"]
    assert step({"sub/AGENTS.override.md": "override\n"}) == [
        ".prayu/rules/b.md",
        "sub/AGENTS.override.md",
    ]
    assert step({".claude/CLAUDE.md": "claude dir\n"}) == [
        ".claude/CLAUDE.md",
        ".prayu/rules/b.md",
        "sub/AGENTS.override.md",
    ]
    assert step({".prayu/instructions.ignore": ".prayu/rules/\n"}) == [
        ".claude/CLAUDE.md",
        "sub/AGENTS.override.md",
    ]
    assert step(remove="sub/AGENTS.override.md") == [".claude/CLAUDE.md", "sub/AGENTS.md"]


def test_chain_directory_swapped_for_a_link_after_the_chain_check_is_refused(
    tmp_path: Path, workspace_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The chain is checked, then `internal/` is replaced by a link to a look-alike tree
    outside the workspace just before its level is listed. Listing, lstat and open then all go
    through the link and agree with each other; only the check of where the open landed can
    notice. The outside text must never be delivered."""
    from rutter_core.discovery import fsread

    if not fsread._PROC_FD_PATHS:
        pytest.skip("needs /proc/self/fd")
    outside = tmp_path / "outside"
    (outside / "parser").mkdir(parents=True)
    (outside / "AGENTS.md").write_text("outside secrets\n", encoding="utf-8")
    (workspace_root / "internal/parser").mkdir(parents=True)
    (workspace_root / "internal/AGENTS.md").write_text("inside rules\n", encoding="utf-8")
    internal = str(workspace_root / "internal")
    real_scandir = os.scandir
    swapped = False

    def scandir_after_swap(path: str) -> Any:
        nonlocal swapped
        if not swapped and os.fspath(path) == internal:
            swapped = True
            Path(internal).rename(tmp_path / "moved-internal")
            Path(internal).symlink_to(outside)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir_after_swap)
    with pytest.raises(RutterError) as caught:
        discover("demo", str(workspace_root), "internal/parser/x.go", reader=FileReader())
    assert swapped
    assert caught.value.code == "symlink"
    assert caught.value.path == "internal/AGENTS.md"


def test_landing_outside_the_expected_path_is_a_symlink_error(tmp_path: Path) -> None:
    """Directly: a file opened through a linked directory is refused as `symlink`."""
    from rutter_core.discovery import fsread

    real_dir = tmp_path / "real"
    real_dir.mkdir()
    target = real_dir / "AGENTS.md"
    target.write_text("x\n", encoding="utf-8")
    (tmp_path / "link").symlink_to(real_dir)
    via_link = str(tmp_path / "link" / "AGENTS.md")
    reader = FileReader()
    if not fsread._PROC_FD_PATHS:
        pytest.skip("needs /proc/self/fd")
    with pytest.raises(RutterError) as caught:
        reader.read_decoded(
            via_link,
            os.lstat(via_link),
            max_bytes=1024,
            rel="link/AGENTS.md",
            decoder="raw",
            decode=bytes,
        )
    assert caught.value.code == "symlink"
    # The same file by its real path is fine.
    assert (
        reader.read_decoded(
            str(target),
            os.lstat(target),
            max_bytes=1024,
            rel="real/AGENTS.md",
            decoder="raw",
            decode=bytes,
        )
        == b"x\n"
    )


def test_invalidate_drops_exactly_that_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """File watchers call `invalidate(path)`: that file is read again, others stay cached, even
    one whose path ends the same way."""
    far = tmp_path / "AGENTS.md"
    near = tmp_path / "deep" / str(far).lstrip("/")  # its path ends with the whole of `far`'s
    near.parent.mkdir(parents=True)
    for file in (near, far):
        file.write_text("x\n", encoding="utf-8")
    reader = FileReader(clock_ns=lambda: time.time_ns() + 10**12)  # everything is old enough
    opened: list[str] = []
    real_open = os.open

    def counting_open(path: str, flags: int, *args: int, **kwargs: int) -> int:
        opened.append(os.fspath(path))
        return real_open(path, flags, *args, **kwargs)

    def read(file: Path) -> bytes:
        return reader.read_decoded(
            str(file), os.lstat(file), max_bytes=64, rel=file.name, decoder="raw", decode=bytes
        )

    read(near)
    read(far)
    monkeypatch.setattr(os, "open", counting_open)
    read(near)
    read(far)
    assert opened == []
    reader.invalidate(str(far))
    read(near)
    read(far)
    assert opened == [str(far)]
