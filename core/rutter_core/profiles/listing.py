"""A bounded, cached list of a project's files, for one question: does a rule's glob match any
file at all? (An `applyTo` that matches nothing is a rule its agent never loads.)

Bounded: at most `MAX_LISTED_FILES` files and `MAX_LISTED_DIRS` directories, `MAX_DEPTH` deep,
never through a linked directory, never into `.git` or `node_modules`. A listing that hit a bound
is `complete=False`, and nobody claims "matches no file" from it. Cached per root for
`TTL_SECONDS` (monotonic clock): glob checks on every keystroke cost one walk per root per TTL.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

MAX_LISTED_FILES: Final = 20_000
MAX_LISTED_DIRS: Final = 5_000
MAX_DEPTH: Final = 32
TTL_SECONDS: Final = 30.0
SKIPPED_DIRS: Final = frozenset({".git", "node_modules"})


@dataclass(frozen=True, slots=True)
class Listing:
    files: tuple[str, ...]
    """Paths relative to the listed directory, `/`-separated."""
    complete: bool


def list_files(top: str) -> Listing:
    files: list[str] = []
    dirs = 0
    stack: list[tuple[str, str, int]] = [(top, "", 0)]
    while stack:
        path, rel, depth = stack.pop()
        dirs += 1
        if dirs > MAX_LISTED_DIRS:
            return Listing(tuple(files), False)
        try:
            with os.scandir(path) as scan:
                entries = list(scan)
        except OSError:
            return Listing(tuple(files), False)
        for entry in entries:
            child = f"{rel}{entry.name}"
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            if stat.S_ISDIR(mode):
                if entry.name in SKIPPED_DIRS:
                    continue
                if depth + 1 >= MAX_DEPTH:
                    return Listing(tuple(files), False)
                stack.append((entry.path, child + "/", depth + 1))
            else:
                files.append(child)
                if len(files) >= MAX_LISTED_FILES:
                    return Listing(tuple(files), False)
    return Listing(tuple(files), True)


class ProjectFiles:
    """`list_files` per directory, reused for `TTL_SECONDS` (thread-safe)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._cached: dict[str, tuple[float, Listing]] = {}

    def get(self, top: str) -> Listing:
        now = self._clock()
        with self._lock:
            hit = self._cached.get(top)
        if hit is not None and now - hit[0] < TTL_SECONDS:
            return hit[1]
        listing = list_files(top)
        with self._lock:
            if len(self._cached) >= 64:
                self._cached.clear()
            self._cached[top] = (now, listing)
        return listing
