"""The directories discovery walks for a target: from the workspace root down to the target's
directory, each checked on the way (never a link, never outside the root)."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass

from rutter_core.discovery.fsread import is_link, lstat_or_none
from rutter_core.discovery.links import resolve_target_link
from rutter_core.discovery.snapshot import Limits
from rutter_core.kernel.errors import Hint, discovery_error


@dataclass(frozen=True, slots=True)
class Level:
    """One directory on the way from the root to the target: its level of discovery."""

    scope: str
    """Workspace-relative (`.` for the root)."""
    path: str
    st: os.stat_result
    depth: int


def walk_chain(
    root: str,
    target: str,
    limits: Limits,
    *,
    lstat: Callable[[str], os.stat_result | None] = lstat_or_none,
    root_checked: bool = False,
    walked: tuple[Level, ...] = (),
) -> list[Level]:
    """The directories from the root to the target's directory, each checked on the way.

    For a batch of targets at one moment (`shared.SharedLevels`): `lstat` may answer from what
    the batch already looked up, `root_checked` says the root was found to be its own real
    path earlier in the batch (one `realpath` per root, not per target), and `walked` are the
    levels of a directory on the way to `target` that the batch already checked (from the
    root down): only the segments below it are looked at."""
    if walked:
        _require_depth(target, limits)
        return _walk_down(root, target, list(walked), lstat)
    if not root_checked and os.path.realpath(root) != root:
        raise discovery_error(
            "symlink",
            f"the workspace root {root} now resolves through a symbolic link; the workspace "
            "must name the real directory",
            path=".",
            hint=Hint("move_workspace"),
        )
    root_st = lstat(root)
    if root_st is None or not stat.S_ISDIR(root_st.st_mode):
        raise discovery_error(
            "not_found",
            f"the workspace root {root} no longer exists or is not a directory",
            path=".",
            hint=Hint("move_workspace"),
        )
    _require_depth(target, limits)
    return _walk_down(root, target, [Level(".", root, root_st, 0)], lstat)


def _require_depth(target: str, limits: Limits) -> None:
    if target == ".":
        return
    depth = target.count("/") + 1
    if depth > limits.max_depth:
        raise discovery_error(
            "too_deep",
            f"target {target} is {depth} levels deep, over the limit of {limits.max_depth}",
            path=target,
            details={"limit": limits.max_depth},
        )


def _walk_down(
    root: str, target: str, levels: list[Level], lstat: Callable[[str], os.stat_result | None]
) -> list[Level]:
    """`levels` (checked, from the root down to a directory on the way to `target`) extended
    with the directories below it on the way to `target`, each checked."""
    if target == ".":
        return levels
    segments = target.split("/")
    path = levels[-1].path
    scope = levels[-1].scope
    for index in range(len(levels) - 1, len(segments)):
        segment = segments[index]
        rel = scope = segment if scope == "." else f"{scope}/{segment}"
        # `os.path.join` without its generality: `path` is absolute, `segment` one plain name.
        path = f"{path}{segment}" if path.endswith(os.sep) else f"{path}{os.sep}{segment}"
        st = lstat(path)
        last = index == len(segments) - 1
        if st is None:
            if last:
                break  # a file not written yet: its directory's instructions still apply
            raise discovery_error(
                "not_found",
                f"directory {rel} does not exist in the workspace; check the target path",
                path=rel,
            )
        if is_link(st):
            if last:
                # A linked target (docs/reference/discovery.md): it must end at a file inside the
                # root; its own directory is the one walked.
                resolve_target_link(root, rel, path)
                break
            raise discovery_error(
                "symlink",
                f"{rel} is a symbolic link to a directory on the way to {target}; discovery "
                "never walks through a linked directory: give the target by its real path",
                path=rel,
            )
        if stat.S_ISDIR(st.st_mode):
            levels.append(Level(rel, path, st, len(levels)))
        elif not last:
            raise discovery_error(
                "not_found",
                f"{rel} is not a directory, so {target} cannot exist; check the target path",
                path=rel,
            )
    return levels
