"""What the targets of one batch share: `SharedLevels`, for one pass of discovery over many
targets at one moment (the language server re-indexing the directories of its open
documents, `rutter context instructions --targets-from`).

Within a pass the root's files are read once instead of once per target, each directory on
the way is looked up (`lstat`) and checked once (a later target's chain starts below the
deepest directory an earlier one reached), the workspace root resolved (`realpath`) once,
and the conflicts of a list of sources worked out once. Because a directory is looked up once
per pass, a walked prefix of levels is known by its workspace-relative path alone, and a level
that adds nothing (most directories hold no instruction file) shares its parent's state.
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

StatesKey = tuple[str, int]
"""(workspace root, which limits): the walk states of one root under one set of limits."""


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
    raised again for each target, naming it. The same goes for the chain of directories: a
    directory checked on the way to one target is not checked again on the way to another,
    only the segments below it are.
    """

    __slots__ = (
        "_chains", "_conflicts", "_limits", "_real_roots", "_states", "_stats",
    )  # fmt: skip

    def __init__(self) -> None:
        self._states: dict[StatesKey, dict[str, _LevelState]] = {}
        self._stats: dict[str, os.stat_result | None] = {}
        self._real_roots: set[str] = set()
        self._chains: dict[tuple[str, str], tuple[Level, ...]] = {}
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
        """`walk_chain`, from the deepest directory on the way to `target` that an earlier
        target of the pass reached (each directory checked once per pass)."""
        walked: tuple[Level, ...] = ()
        scope = target
        while True:
            known = self._chains.get((workspace_root, scope))
            if known is not None:
                walked = known
                break
            if scope == ".":
                break
            scope = scope.rpartition("/")[0] or "."
        levels = walk_chain(
            workspace_root,
            target,
            limits,
            lstat=self.lstat,
            root_checked=workspace_root in self._real_roots,
            walked=walked,
        )
        self._real_roots.add(workspace_root)  # reached only when the root passed the check
        for depth in range(len(walked), len(levels)):
            self._chains[(workspace_root, levels[depth].scope)] = tuple(levels[: depth + 1])
        return levels

    def conflicts(self, sources: tuple[StackSource, ...]) -> tuple[Conflict, ...]:
        """`conflicts_of`, once per list of sources (targets below the same levels share it)."""
        kept = self._conflicts.get(id(sources))
        if kept is not None and kept[0] is sources:
            return kept[1]
        found = conflicts_of(sources)
        self._conflicts[id(sources)] = (sources, found)  # the tuple is kept: its id stays unique
        return found

    def states(self, workspace_root: str, limits: Limits) -> dict[str, _LevelState]:
        """The walk's states after each level walked in this pass under `limits`, by scope
        (limits are told apart by identity: the same object for a whole batch)."""
        index = next((i for i, known in enumerate(self._limits) if known is limits), None)
        if index is None:
            self._limits.append(limits)
            index = len(self._limits) - 1
        return self._states.setdefault((workspace_root, index), {})

    @staticmethod
    def resume(walk: _Walk, levels: list[Level], states: dict[str, _LevelState]) -> int:
        """Restore `walk` after the longest kept prefix of `levels`; the index of the next
        level."""
        for index in range(len(levels) - 1, -1, -1):
            state = states.get(levels[index].scope)
            if state is not None:
                walk.ignore = state.ignore
                walk.found = list(state.found)
                walk.ignored = list(state.ignored)
                walk.total_bytes = state.total_bytes
                return index + 1
        return 0

    @staticmethod
    def keep(
        walk: _Walk,
        states: dict[str, _LevelState],
        scope: str,
        sources: tuple[StackSource, ...],
    ) -> None:
        states[scope] = _LevelState(
            walk.ignore, tuple(walk.found), sources, tuple(walk.ignored), walk.total_bytes
        )

    @staticmethod
    def reuse(states: dict[str, _LevelState], parent: str, scope: str) -> None:
        """The level `scope` added nothing to the walk after `parent`: the same state."""
        states[scope] = states[parent]
