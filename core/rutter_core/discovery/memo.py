"""`LevelMemo`: what each directory level contributed to discovery, kept across passes.

A pass of `SharedLevels` walks each level once, but the next pass (the language server's
refresh after a change) walks every level below a changed one again, although only the
changed level's files differ. A level's contribution (the sources it delivers, what it
ignores, the bytes it adds, and at the root the ignore rules it loads) depends only on:

- the level's own entries: the directory, its `.claude/` and `.prayu/` (and the rules tree
  below), and every instruction file in them, each known by its identity (device, inode, size,
  times, mode), which is what the `FileReader` trusts too;
- the ignore rules in force (the same parsed rules object, which the reader keeps while the
  ignore file's identity holds; any two empty rule sets are alike);
- the sources delivered above it, only through the bounds on all sources together (checked
  again on every replay) and through links (a level holding any link is never kept).

So a level is replayed when all of that holds: one `lstat` per kept entry (once per pass,
shared with the chain walk) and no reading, decoding or checking. A level is kept only when
none of its entries changed within the racy window (git's rule, as the reader's), a level that
failed is never kept, and `invalidate(path)` drops every level whose directory holds `path`
(the server calls it for each changed path it is told of, so a change that keeps an identity
within a clock tick is not missed). Use one memo per reader and keep it for the reader's
lifetime; it is not thread-safe (the language server uses it on its disk worker only).
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from rutter_core.discovery.fsread import (
    DEFAULT_RACY_WINDOW_NS,
    FileIdentity,
    identity_of,
    is_link,
)
from rutter_core.discovery.ignore import IgnoreRules
from rutter_core.discovery.snapshot import IgnoredEntry, Limits

if TYPE_CHECKING:
    from rutter_core.discovery.chain import Level
    from rutter_core.discovery.walk import _Found, _Walk

MAX_LEVELS: Final = 200_000
"""Bound of the kept levels (a walk over more starts the memo afresh)."""

Touched = list[tuple[str, os.stat_result]]
"""The entries one level's walk looked at: path and lstat."""


@dataclass(frozen=True, slots=True)
class _Kept:
    root: str
    limits: Limits
    ignore_before: IgnoreRules
    ignore_after: IgnoreRules
    level: FileIdentity
    watched: tuple[tuple[str, FileIdentity], ...]
    found: tuple[_Found, ...]
    ignored: tuple[IgnoredEntry, ...]
    total_bytes: int


def _same_rules(a: IgnoreRules, b: IgnoreRules) -> bool:
    return a is b or (a.pattern_count == 0 and b.pattern_count == 0)


class LevelMemo:
    __slots__ = ("_clock_ns", "_kept", "_racy_window_ns", "replayed", "walked")

    def __init__(
        self,
        *,
        racy_window_ns: int = DEFAULT_RACY_WINDOW_NS,
        clock_ns: Callable[[], int] = time.time_ns,
    ) -> None:
        self._kept: dict[str, _Kept] = {}
        self._racy_window_ns = racy_window_ns
        self._clock_ns = clock_ns
        self.replayed = 0
        """Levels replayed so far (for tests and benchmarks: how much was not walked)."""
        self.walked = 0

    def __len__(self) -> int:
        return len(self._kept)

    def invalidate(self, path: str) -> None:
        """Forget every level whose directory holds `path` (at any depth)."""
        current = path.rstrip(os.sep) or os.sep
        while True:
            self._kept.pop(current, None)
            parent = os.path.dirname(current)  # noqa: PTH120 (a str path, as the walk's)
            if parent == current:
                return
            current = parent

    def clear(self) -> None:
        self._kept.clear()

    def walk_level(
        self, walk: _Walk, level: Level, lstat: Callable[[str], os.stat_result | None]
    ) -> None:
        """`walk.level(level)`, replayed from what was kept when nothing it depends on
        changed; otherwise walked, and kept for the next pass when it may be."""
        kept = self._kept.get(level.path)
        if kept is not None and self._replay(walk, level, kept, lstat):
            self.replayed += 1
            return
        self.walked += 1
        found_before, ignored_before = len(walk.found), len(walk.ignored)
        bytes_before, ignore_before = walk.total_bytes, walk.ignore
        touched: Touched = []
        walk.touched = touched
        try:
            walk.level(level)  # an error propagates: nothing is kept
        finally:
            walk.touched = None
        self._kept.pop(level.path, None)
        newest = max(
            (max(st.st_mtime_ns, st.st_ctime_ns) for _, st in touched),
            default=0,
        )
        newest = max(newest, level.st.st_mtime_ns, level.st.st_ctime_ns)
        if newest + self._racy_window_ns > self._clock_ns():
            return  # changed moments ago: it may change again without its identity changing
        if any(is_link(st) for _, st in touched):
            return  # a link reaches outside the level, and aliases depend on what is above
        if len(self._kept) >= MAX_LEVELS:
            self._kept.clear()
        self._kept[level.path] = _Kept(
            walk.workspace_root,
            walk.limits,
            ignore_before,
            walk.ignore,
            identity_of(level.st),
            tuple((path, identity_of(st)) for path, st in touched),
            tuple(walk.found[found_before:]),
            tuple(walk.ignored[ignored_before:]),
            walk.total_bytes - bytes_before,
        )

    def _replay(
        self,
        walk: _Walk,
        level: Level,
        kept: _Kept,
        lstat: Callable[[str], os.stat_result | None],
    ) -> bool:
        limits = walk.limits
        if (
            kept.root != walk.workspace_root
            or kept.limits is not limits
            or not _same_rules(kept.ignore_before, walk.ignore)
            or identity_of(level.st) != kept.level
            or len(walk.found) + len(kept.found) > limits.max_files
            or walk.total_bytes + kept.total_bytes > limits.max_total_bytes
        ):
            return False
        for path, identity in kept.watched:
            st = lstat(path)
            if st is None or identity_of(st) != identity:
                return False
        walk.found.extend(
            dataclasses.replace(item, level=level, notes=list(item.notes)) for item in kept.found
        )
        walk.ignored.extend(kept.ignored)
        walk.total_bytes += kept.total_bytes
        walk.ignore = kept.ignore_after
        return True
