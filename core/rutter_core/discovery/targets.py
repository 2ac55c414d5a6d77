"""Targets as people type them (docs/reference/workspaces.md, `--target`): relative to the current
directory when it is inside the workspace, workspace-relative otherwise, or absolute inside
the workspace root. The one place every surface's `--target` is resolved; the answer is the
canonical workspace-relative path discovery takes (`normalize_target`, which the walk applies
to every target it is given).

Resolution is lexical: a linked target keeps its own path (discovery resolves the link, 5.6),
and `..` is resolved against the typed path, refused only where it leaves the root.
"""

from __future__ import annotations

import os
import posixpath
from typing import NoReturn

from rutter_core.kernel.errors import discovery_error


def normalize_target(target: str) -> str:
    """The canonical workspace-relative form of `target` (`.` for the root), or `invalid_target`."""

    def reject(why: str) -> NoReturn:
        raise discovery_error(
            "invalid_target",
            f"target {target!r} {why}; give a path relative to the workspace root, "
            "with `/` separators, e.g. src/main.go",
            path=target if is_utf8(target) else None,
        )

    if not target:
        reject("is empty (give `.` for the whole workspace)")
    if not is_utf8(target):
        reject("is not valid UTF-8")
    if "\x00" in target:
        reject("contains a NUL character")
    if "\\" in target:
        reject("contains a backslash")
    if target.startswith("/") or (len(target) >= 2 and target[1] == ":" and target[0].isalpha()):
        reject("is absolute")
    segments = [segment for segment in target.split("/") if segment not in ("", ".")]
    if ".." in segments:
        reject("contains a `..` segment")
    return "/".join(segments) or "."


def is_utf8(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _within(root: str, path: str) -> str | None:
    """`path` (absolute, normalized) relative to `root` with `/` separators, or None."""
    if path == root:
        return "."
    prefix = root.rstrip(os.sep) + os.sep
    if not path.startswith(prefix):
        return None
    return path[len(prefix) :].replace(os.sep, "/")


def _is_absolute(typed: str) -> bool:
    return typed.startswith("/") or (len(typed) >= 2 and typed[1] == ":" and typed[0].isalpha())


def typed_target(typed: str, root: str, cwd: str | None) -> str:
    """The canonical workspace-relative target for `typed` in the workspace at `root` (its
    resolved path), typed in directory `cwd` (None: no current directory, e.g. a server).

    Raises `invalid_target`: empty, NUL, backslash, invalid UTF-8, an absolute path outside the
    root, or a relative path whose `..` leaves it.
    """

    def reject(why: str) -> NoReturn:
        raise discovery_error(
            "invalid_target",
            f"the target {why}; give a path inside the workspace {root}: relative to the "
            "current directory when you are inside it, else relative to the workspace root, "
            "or absolute",
        )

    if not typed or "\x00" in typed or "\\" in typed:
        return normalize_target(typed)  # its own refusals, worded for each case
    if _is_absolute(typed):
        if not typed.startswith("/"):
            reject("is an absolute path of another drive")
        lexical = os.path.normpath(typed)
        rel = _within(root, lexical)
        if rel is None:  # typed through a linked directory outside, e.g. /tmp on macOS
            parent = os.path.realpath(os.path.dirname(lexical))
            rel = _within(root, os.path.join(parent, os.path.basename(lexical)))
        if rel is None:
            reject("is an absolute path outside the workspace root")
        return normalize_target(rel)
    base = _within(root, os.path.realpath(cwd)) if cwd is not None else None
    if base is None:
        return normalize_target(typed)
    joined = posixpath.normpath(posixpath.join(base, typed))
    if joined == ".." or joined.startswith("../"):
        reject("leaves the workspace through `..`")
    return normalize_target(joined)
