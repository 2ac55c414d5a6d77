"""Where a document is: its workspace, its workspace-relative path, and which instruction file
(contract 5.1) it is, if any. Pure functions on strings; nothing here touches the disk."""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from pathlib import PurePath
from typing import Final, Literal

from pygls.uris import from_fs_path, to_fs_path

from rutter_core.discovery.ignore import IGNORE_FILE
from rutter_core.discovery.snapshot import SourceKind
from rutter_core.discovery.walk import (
    AGENTS_NAME,
    CLAUDE_DIR,
    CLAUDE_NAME,
    OVERRIDE_NAME,
    PRAYU_DIR,
    PRAYU_INSTRUCTIONS,
    PRAYU_RULES,
    SLOT_AGENTS,
    SLOT_CLAUDE,
    SLOT_CLAUDE_DIR,
    SLOT_PRAYU_INSTRUCTIONS,
)

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


@dataclass(frozen=True, slots=True)
class Folder:
    """An editor workspace folder being served, and the registration it maps to."""

    uri: str
    path: str
    """The folder's path as the client named it (normalized, not resolved)."""
    name: str
    workspace_id: str
    root: str
    """The registered, resolved root."""

    def path_of(self, rel: str) -> str:
        """The absolute path of workspace-relative `rel` under the registered root."""
        return str(PurePath(self.root, *rel.split("/")))


@dataclass(frozen=True, slots=True)
class Located:
    folder: Folder
    rel: str
    """Canonical workspace-relative path (`/` separators, `.` for the root)."""


@dataclass(frozen=True, slots=True)
class InstructionFile:
    """What an instruction file (or the ignore file) is, from its path alone."""

    rel: str
    kind: FileKind
    level: str
    """The directory whose level reads this file (its scope); `.` for the root."""

    @property
    def depth(self) -> int:
        return 0 if self.level == "." else self.level.count("/") + 1

    @property
    def slot(self) -> int | None:
        """The slot in contract 5.1; rules get theirs from their order, known only once read."""
        return _SLOTS.get(self.kind)

    @property
    def precedence(self) -> int | None:
        slot = self.slot
        return None if slot is None else 100 * self.depth + slot

    @property
    def is_source(self) -> bool:
        return self.kind != "ignore_file"


def path_of_uri(uri: str) -> str | None:
    """The local path of a `file:` URI, normalized; None for other schemes."""
    if not uri.startswith("file:"):
        return None
    path = to_fs_path(uri)
    return None if path is None else os.path.normpath(path)


def uri_of_path(path: str) -> str:
    uri = from_fs_path(path)
    if uri is None:  # pragma: no cover - only for relative paths, which we never pass
        raise ValueError(f"not an absolute path: {path}")
    return str(uri)


def _relative(path: str, base: str) -> str | None:
    """`path` relative to `base` when inside it (component-wise), in `/` form."""
    norm_path, norm_base = os.path.normcase(path), os.path.normcase(base)
    if norm_path == norm_base:
        return "."
    prefix = norm_base.rstrip(os.sep) + os.sep
    if not norm_path.startswith(prefix):
        return None
    rel = path[len(prefix) :]
    return rel.replace(os.sep, "/") if os.sep != "/" else rel


def locate(path: str, folders: list[Folder] | tuple[Folder, ...]) -> Located | None:
    """The deepest served folder containing `path` (a normalized absolute path).

    Lexical only: the path is compared with the registered (resolved) root and with the folder
    path the client gave, never resolved itself, so a symlinked file inside a workspace stays
    where it is and discovery reports it.
    """
    best: Located | None = None
    best_len = -1
    for folder in folders:
        for base in (folder.root, folder.path):
            rel = _relative(path, base)
            if rel is not None and len(base) > best_len:
                best, best_len = Located(folder, rel), len(base)
                break
    return best


def classify(rel: str) -> InstructionFile | None:
    """Which instruction file `rel` is, per contract 5.1, or None for any other file."""
    if rel == IGNORE_FILE:
        return InstructionFile(rel, "ignore_file", ".")
    parts = rel.split("/")
    name = parts[-1]
    for index in range(len(parts) - 2):
        if parts[index] == PRAYU_DIR and parts[index + 1] == PRAYU_RULES:
            if name.lower().endswith(".md"):  # any case, as discovery reads them
                return InstructionFile(rel, "prayu_rule", _level(parts[:index]))
            return None
    parent = parts[-2] if len(parts) > 1 else None
    if parent == PRAYU_DIR and name == PRAYU_INSTRUCTIONS:
        return InstructionFile(rel, "prayu_instructions", _level(parts[:-2]))
    if parent == CLAUDE_DIR and name == CLAUDE_NAME:
        return InstructionFile(rel, "claude_dir", _level(parts[:-2]))
    kind = _BY_NAME.get(name)
    if kind is None:
        return None
    return InstructionFile(rel, kind, _level(parts[:-1]))


def _level(parts: list[str]) -> str:
    return "/".join(parts) or "."


def directory_of(rel: str) -> str:
    """The directory a file target's instructions come from (`.` at the root)."""
    return posixpath.dirname(rel) or "."


def is_watched_path(rel: str) -> bool:
    """Whether a changed path can change what discovery delivers (for file events)."""
    return (
        classify(rel) is not None
        or f"/{PRAYU_DIR}/" in f"/{rel}/"
        or rel.endswith(f"/{CLAUDE_DIR}")
        or rel == CLAUDE_DIR
    )
