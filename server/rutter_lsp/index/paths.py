"""Where a document is: its served folder and its workspace-relative path. Pure functions on
strings; nothing here touches the disk.

Which instruction file a path is (`classify`, `InstructionFile`) and whether a changed path can
change discovery (`is_watched_path`) are discovery's rules (`rutter_core.discovery.layout`),
named here for the index's callers.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from pathlib import PurePath

from pygls.uris import from_fs_path, to_fs_path

from rutter_core.discovery.layout import FileKind, InstructionFile, classify
from rutter_core.discovery.layout import may_change_discovery as is_watched_path

__all__ = [
    "FileKind",
    "Folder",
    "InstructionFile",
    "Located",
    "classify",
    "directory_of",
    "is_watched_path",
    "locate",
    "path_of_uri",
    "uri_of_path",
]


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


def directory_of(rel: str) -> str:
    """The directory a file target's instructions come from (`.` at the root)."""
    return posixpath.dirname(rel) or "."
