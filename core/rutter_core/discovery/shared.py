"""What the targets of one batch share: `SharedLevels`, for one pass of discovery over many
targets at one moment (the language server re-indexing the directories of its open
documents, `rutter context instructions --targets-from`).

Within a pass the root's files are read once instead of once per target, each directory on
the way is looked up (`lstat`) once, the workspace root resolved (`realpath`) once, and the
conflicts of a list of sources worked out once. Because a directory is looked up once per
pass, a walked prefix of levels is known by its workspace-relative path alone.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rutter_core.discovery.chain import Level, walk_chain
from rutter_core.discovery.fsread import lstat_or_none
from rutter_core.discovery.ignore import IgnoreRules
from rutter_core.discovery.snapshot import Conflict, IgnoredEntry, Limits
from rutter_core.discovery.stack import StackSource, conflicts_of

if TYPE_CHECKING:
    from rutter_core.discovery.walk import _Found, _Walk

LevelKey = tuple[str, int, str]
"""(workspace root, which limits, level scope)"""


@dataclass(frozen=True, slots=True)
class _LevelState:
    """The walk's state after a prefix of levels (target-independent, unlike its errors)."""

    ignore: IgnoreRules
    found: tuple[_Found, ...]
    sources: tuple[StackSource, ...]
    ignored: tuple[IgnoredEntry, ...]
    total_bytes: int


class SharedLevels:
    """Levels walked for earlier targets of one batch, reused by later targets below them.

    What a level read is not checked again for later targets, and each directory is looked up
    once, so use a fresh one for each pass. A level that fails is never kept: the error is
    raised again for each target, naming it.
    """

    __slots__ = ("_conflicts", "_limits", "_real_roots", "_states", "_stats")

    def __init__(self) -> None:
        self._states: dict[LevelKey, _LevelState] = {}
        self._stats: dict[str, os.stat_result | None] = {}
        self._real_roots: set[str] = set()
        self._conflicts: dict[int, tuple[tuple[StackSource, ...], tuple[Conflict, ...]]] = {}
        self._limits: list[Limits] = []

    def lstat(self, path: str) -> os.stat_result | None:
        """`lstat_or_none`, once per path and pass (an error is not kept: raised each time)."""
        try:
            return self._stats[path]
        except KeyError:
            found = self._stats[path] = lstat_or_none(path)
            return found

    def chain(self, workspace_root: str, target: str, limits: Limits) -> list[Level]:
        """`walk_chain`, its lookups shared with the pass's earlier targets."""
        levels = walk_chain(
            workspace_root,
            target,
            limits,
            lstat=self.lstat,
            root_checked=workspace_root in self._real_roots,
        )
        self._real_roots.add(workspace_root)  # reached only when the root passed the check
        return levels

    def conflicts(self, sources: tuple[StackSource, ...]) -> tuple[Conflict, ...]:
        """`conflicts_of`, once per list of sources (targets below the same levels share it)."""
        kept = self._conflicts.get(id(sources))
        if kept is not None and kept[0] is sources:
            return kept[1]
        found = conflicts_of(sources)
        self._conflicts[id(sources)] = (sources, found)  # the tuple is kept: its id stays unique
        return found

    def key(self, workspace_root: str, limits: Limits, scope: str) -> LevelKey:
        """How the walk's state after the level `scope` is known within this pass."""
        for index, known in enumerate(self._limits):
            if known is limits:
                return (workspace_root, index, scope)
        self._limits.append(limits)
        return (workspace_root, len(self._limits) - 1, scope)

    def resume(self, walk: _Walk, keys: list[LevelKey]) -> int:
        """Restore `walk` after the longest kept prefix; the index of the next level."""
        for index in range(len(keys) - 1, -1, -1):
            state = self._states.get(keys[index])
            if state is not None:
                walk.ignore = state.ignore
                walk.found = list(state.found)
                walk.ignored = list(state.ignored)
                walk.total_bytes = state.total_bytes
                return index + 1
        return 0

    def keep(self, walk: _Walk, key: LevelKey, sources: tuple[StackSource, ...]) -> None:
        self._states[key] = _LevelState(
            walk.ignore, tuple(walk.found), sources, tuple(walk.ignored), walk.total_bytes
        )

    def sources(self, key: LevelKey) -> tuple[StackSource, ...]:
        return self._states[key].sources
