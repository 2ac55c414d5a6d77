"""Where instruction files live and how they rank (docs/reference/discovery.md): the names read at
each level, their slots, and the one precedence formula.

Pure functions on workspace-relative paths (`/` separators, `.` for the root): the walk ranks
what it reads with them, and the editor's index classifies a file from its path alone with the
same rules, so the two cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from rutter_core.discovery.ignore import IGNORE_FILE
from rutter_core.discovery.snapshot import SourceKind

OVERRIDE_NAME: Final = "AGENTS.override.md"
AGENTS_NAME: Final = "AGENTS.md"
CLAUDE_NAME: Final = "CLAUDE.md"
CLAUDE_DIR: Final = ".claude"
PRAYU_DIR: Final = ".prayu"
PRAYU_INSTRUCTIONS: Final = "instructions.md"
PRAYU_RULES: Final = "rules"
IGNORE_NAME: Final = "instructions.ignore"
"""Read only at the workspace root, as `IGNORE_FILE`."""

LEVEL_NAMES: Final = (OVERRIDE_NAME, AGENTS_NAME, CLAUDE_NAME, CLAUDE_DIR, PRAYU_DIR)
"""The entries of a level's directory that discovery looks for."""
CLAUDE_DIR_NAMES: Final = (CLAUDE_NAME,)
PRAYU_NAMES: Final = (PRAYU_INSTRUCTIONS, PRAYU_RULES, IGNORE_NAME)

SLOT_AGENTS: Final = 0
SLOT_CLAUDE: Final = 1
SLOT_CLAUDE_DIR: Final = 2
SLOT_PRAYU_INSTRUCTIONS: Final = 3
SLOT_FIRST_RULE: Final = 10
"""Rules take 10, 11, ... in the order of their canonical paths."""

FileKind = SourceKind | Literal["ignore_file"]

_SLOTS: Final[dict[FileKind, int]] = {
    "agents_override": SLOT_AGENTS,
    "agents": SLOT_AGENTS,
    "claude": SLOT_CLAUDE,
    "claude_dir": SLOT_CLAUDE_DIR,
    "prayu_instructions": SLOT_PRAYU_INSTRUCTIONS,
}

_BY_NAME: Final[dict[str, SourceKind]] = {
    OVERRIDE_NAME: "agents_override",
    AGENTS_NAME: "agents",
    CLAUDE_NAME: "claude",
}


def precedence(depth: int, slot: int) -> int:
    """Higher wins where sources conflict; strictly increases with the delivery order."""
    return 100 * depth + slot


def depth_of(scope: str) -> int:
    """A level's depth: the root is 0, each directory below it one more."""
    return 0 if scope == "." else scope.count("/") + 1


def join_rel(scope: str, name: str) -> str:
    return name if scope == "." else f"{scope}/{name}"


@dataclass(frozen=True, slots=True)
class InstructionFile:
    """What an instruction file (or the ignore file) is, from its path alone."""

    rel: str
    kind: FileKind
    level: str
    """The directory whose level reads this file (its scope); `.` for the root."""

    @property
    def depth(self) -> int:
        return depth_of(self.level)

    @property
    def slot(self) -> int | None:
        """The slot (docs/reference/discovery.md); rules get theirs from their order, known
        only once read."""
        return _SLOTS.get(self.kind)

    @property
    def precedence(self) -> int | None:
        slot = self.slot
        return None if slot is None else precedence(self.depth, slot)

    @property
    def is_source(self) -> bool:
        return self.kind != "ignore_file"


def classify(rel: str) -> InstructionFile | None:
    """Which instruction file `rel` is (docs/reference/discovery.md), or None."""
    if rel == IGNORE_FILE:
        return InstructionFile(rel, "ignore_file", ".")
    parts = rel.split("/")
    name = parts[-1]
    for index in range(len(parts) - 2):
        if parts[index] == PRAYU_DIR and parts[index + 1] == PRAYU_RULES:
            if name.lower().endswith(".md"):  # any case, as discovery reads them
                return InstructionFile(rel, "prayu_rule", _scope(parts[:index]))
            return None
    parent = parts[-2] if len(parts) > 1 else None
    if parent == PRAYU_DIR and name == PRAYU_INSTRUCTIONS:
        return InstructionFile(rel, "prayu_instructions", _scope(parts[:-2]))
    if parent == CLAUDE_DIR and name == CLAUDE_NAME:
        return InstructionFile(rel, "claude_dir", _scope(parts[:-2]))
    kind = _BY_NAME.get(name)
    if kind is None:
        return None
    return InstructionFile(rel, kind, _scope(parts[:-1]))


def _scope(parts: list[str]) -> str:
    return "/".join(parts) or "."


def may_change_discovery(rel: str) -> bool:
    """Whether a change at `rel` (a file or directory) can change what discovery delivers:
    an instruction file, the ignore file, or anything inside or named like a `.prayu/` or
    `.claude/` directory."""
    return (
        classify(rel) is not None
        or f"/{PRAYU_DIR}/" in f"/{rel}/"
        or rel.endswith(f"/{CLAUDE_DIR}")
        or rel == CLAUDE_DIR
    )
