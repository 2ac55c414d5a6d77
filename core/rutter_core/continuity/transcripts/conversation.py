"""Which entries of a transcript are the conversation the agent went on with
(docs/reference/transcripts.md): decided over everything read so far, not line by line,
because a later line can undo earlier ones.

- Claude Code (`ClaudeTree`): records form a tree by `parentUuid`; the conversation is the path
  from the newest leaf back to the root (see `claude_code`'s docstring for where this is
  learned). Entries off the path belong to a branch the person rewound away from: `abandoned`.
- Codex (`CodexTurns`): a `thread_rolled_back` event drops the last `num_turns` turns the
  person started, as Codex drops them from its own history (openai/codex
  `codex-rs/core/src/context_manager/history.rs`, `drop_last_n_user_turns`, read 2026-12-05):
  the cut is at the Nth-last message the person typed (at the first one when fewer), then moves
  up over the context the harness inserted right before it, never above the first turn.
  Entries after the cut are `rolled_back`.

Entries are handed out once (`take`): the import stores what it takes. When the agent undoes
messages that were handed out already (`--watch` stored them before the rewind or rollback was
written), they stay in the thread: stored messages are never deleted. What is counted is what
was left out of the store.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Final, Protocol

from rutter_core.continuity.model import Injected
from rutter_core.continuity.transcripts.records import Entry, LineOutcome, OmitReason, TreeNode

_PRE_TURN_CONTEXT: Final[frozenset[Injected]] = frozenset(
    {"instructions", "environment_context", "interruption", "notification", "command", "skill"}
)
"""Harness text Codex writes just before a turn the person starts; a rollback takes it with the
turn."""


class Conversation(Protocol):
    def add(self, outcome: LineOutcome) -> None: ...

    def take(self) -> list[Entry]:
        """The entries of the conversation not handed out yet, in the transcript's order."""
        ...

    def left_out(self) -> Counter[OmitReason]:
        """Entries read and not handed out because the agent undid them, by reason."""
        ...


class _Held:
    """Entries in the transcript's order, the tree node each belongs to (its line's), and which
    were handed out."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.nodes: list[str | None] = []
        self.handed: list[bool] = []

    def hold(self, entries: tuple[Entry, ...], node: TreeNode | None = None) -> None:
        self.entries.extend(entries)
        self.nodes.extend(None if node is None else node.uuid for _ in entries)
        self.handed.extend(False for _ in entries)


class ClaudeTree:
    """Two readings for files that do not record the tree as Claude Code does: a record without
    a `parentUuid` field follows the tree record before it in the file, and a file in which no
    record names a parent has no tree to choose a path in: it is read in order, whole."""

    def __init__(self) -> None:
        self._held = _Held()
        self._nodes: dict[str, TreeNode] = {}
        self._previous: dict[str, str | None] = {}
        """Each record's predecessor in the file: what stands in for a parent the file does not
        hold after its first record (a line that could not be read, and so was skipped)."""
        self._last: str | None = None
        self._has_parents = False
        self._abandoned = 0

    def add(self, outcome: LineOutcome) -> None:
        node = outcome.node
        if node is not None and node.uuid not in self._nodes:  # written twice: its first place
            if not node.stated:
                node = replace(node, parent=self._last)
            self._has_parents = self._has_parents or node.parent is not None
            self._nodes[node.uuid] = node
            self._previous[node.uuid] = self._last
            self._last = node.uuid
        self._held.hold(outcome.entries, node)

    def take(self) -> list[Entry]:
        live = self._live_nodes()
        taken: list[Entry] = []
        abandoned = 0
        held = self._held
        for index, entry in enumerate(held.entries):
            if held.handed[index]:
                continue
            node = held.nodes[index]
            if live is None or node is None or node in live:
                held.handed[index] = True
                taken.append(entry)
            else:
                abandoned += 1
        self._abandoned = abandoned
        return taken

    def left_out(self) -> Counter[OmitReason]:
        return Counter({"abandoned": self._abandoned} if self._abandoned else {})

    def _live_nodes(self) -> set[str] | None:
        """The nodes on the path from the newest leaf to the root; None when there is nothing to
        choose between (no record can end a conversation, or no record names a parent)."""
        nodes = self._nodes
        if not self._has_parents:
            return None
        # A leaf is a record that can end a conversation and that no such record follows: the
        # ancestors of every one of them are marked, each walk stopping at a marked node.
        followed: set[str] = set()
        for node in nodes.values():
            if not node.leaf:
                continue
            parent = node.parent
            while parent is not None and parent not in followed:
                followed.add(parent)
                above = nodes.get(parent)
                parent = None if above is None else above.parent
        leaves = [node for node in nodes.values() if node.leaf and node.uuid not in followed]
        if not leaves:
            return None
        current: str | None = max(leaves, key=lambda node: node.order).uuid
        path: set[str] = set()
        while current is not None and current not in path:
            step = nodes.get(current)
            if step is None:
                break
            path.add(current)
            current = step.parent
            if current is not None and current not in nodes:
                # A parent the file does not hold: an older session's for the file's first
                # record, which ends the path; after that, a line that could not be read, for
                # which the record before this one in the file stands in.
                current = self._previous.get(step.uuid)
        return path


class CodexTurns:
    def __init__(self) -> None:
        self._held = _Held()
        self._alive: list[bool] = []
        self._rolled_back = 0

    def add(self, outcome: LineOutcome) -> None:
        if outcome.rollback is not None:
            self._roll_back(outcome.rollback)
        self._held.hold(outcome.entries)
        self._alive.extend(True for _ in outcome.entries)

    def take(self) -> list[Entry]:
        held = self._held
        taken: list[Entry] = []
        for index, entry in enumerate(held.entries):
            if self._alive[index] and not held.handed[index]:
                held.handed[index] = True
                taken.append(entry)
        return taken

    def left_out(self) -> Counter[OmitReason]:
        return Counter({"rolled_back": self._rolled_back} if self._rolled_back else {})

    def _roll_back(self, turns: int) -> None:
        alive = [index for index, living in enumerate(self._alive) if living]
        entries = self._held.entries
        # A turn starts with what the person typed: Codex's own context is never `user` here.
        starts = [at for at, index in enumerate(alive) if entries[index].role == "user"]
        if turns <= 0 or not starts:
            return
        cut = starts[0] if turns >= len(starts) else starts[-turns]
        while cut > starts[0] and entries[alive[cut - 1]].injected in _PRE_TURN_CONTEXT:
            cut -= 1
        for index in alive[cut:]:
            self._alive[index] = False
            if not self._held.handed[index]:
                self._rolled_back += 1


__all__ = ["ClaudeTree", "CodexTurns", "Conversation"]
