"""Reading a file an agent would read, only through discovery's safe readers.

A file is looked up with `lstat` (never following a link), a link is followed by discovery's
`resolve_link` (inside the workspace, to a regular file, or the typed `symlink` error), and the
bytes are read by the shared `FileReader` (no-follow open, non-blocking, verified unchanged,
cached by identity) and checked by discovery's `checked_text` (`nul_byte`, `invalid_utf8`).
Profiles keep the raw bytes too: agents cut raw bytes. The text is never delivered (a view
holds paths, reasons and byte counts), so it is not redacted.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import Final

from rutter_core.discovery.checks import require_regular
from rutter_core.discovery.fsread import FileReader, is_link, lstat_or_none
from rutter_core.discovery.links import resolve_link, verify_unchanged
from rutter_core.discovery.sourcetext import checked_text

MAX_PROFILE_FILE_BYTES: Final = 4 * 1024 * 1024
"""The most any profile reads of one file (Claude Code's documented per-file limit); a larger
file is `too_large`, or skipped where the profile says its agent skips it."""


@dataclass(frozen=True, slots=True)
class AgentFile:
    rel: str
    """Workspace-relative path of the file as the agent names it (a link's own path)."""
    raw: bytes
    text: str
    """Decoded and newline-normalized (for imports and front matter; it never leaves)."""

    @property
    def size(self) -> int:
        return len(self.raw)

    @property
    def blank(self) -> bool:
        return not self.text.strip()


@dataclass(frozen=True, slots=True)
class Found:
    """A file that exists, before it is read."""

    rel: str
    path: str
    st: os.stat_result
    size: int
    target_rel: str | None = None
    """For a link: the file it ends at, workspace-relative."""


def rel_of(root: str, path: str) -> str:
    rel = os.path.relpath(path, root).replace(os.sep, "/")
    return "." if rel == "." else rel


def join(rel_dir: str, name: str) -> str:
    return name if rel_dir == "." else f"{rel_dir}/{name}"


def find(root: str, rel: str) -> Found | None:
    """The file at workspace-relative `rel` if something exists there; a directory is None.
    A link is followed inside the workspace (typed `symlink` error otherwise); anything but a
    regular file at the end is the typed `not_regular_file` error."""
    path = os.path.join(root, *rel.split("/"))
    st = lstat_or_none(path)
    if st is None:
        return None
    if is_link(st):
        end = resolve_link(root, rel, path)
        return Found(rel, path, st, end.st.st_size, end.rel)
    if stat.S_ISDIR(st.st_mode):
        return None
    require_regular(rel, st)
    return Found(rel, path, st, st.st_size)


def read(reader: FileReader, root: str, found: Found) -> AgentFile:
    """The bytes of a found file (through its link, re-checked after the read)."""
    if is_link(found.st):
        end = resolve_link(root, found.rel, found.path)
        raw, text = _read(reader, end.rel, end.path, end.st)
        verify_unchanged(found.rel, end)
        return AgentFile(found.rel, raw, text)
    raw, text = _read(reader, found.rel, found.path, found.st)
    return AgentFile(found.rel, raw, text)


def _read(reader: FileReader, rel: str, path: str, st: os.stat_result) -> tuple[bytes, str]:
    return reader.read_decoded(
        path,
        st,
        max_bytes=MAX_PROFILE_FILE_BYTES,
        rel=rel,
        decoder="profile",
        decode=lambda raw: (raw, checked_text(raw, rel=rel)),
    )
