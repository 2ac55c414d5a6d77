"""TEMPORARY stand-in for the `gitid` branch's `continuity/git.py` (drop this file at merge).

Only the name and shape the checkpoint uses: `read_git_identity(root).to_snapshot()`. It reads
`.git/HEAD` and the ref it names as files (no `git` process, so no hook, filter or fsmonitor of
the repository runs); it knows no worktrees, no reftable and no SHA-256 subtleties.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_OBJECT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


@dataclass(frozen=True, slots=True)
class GitIdentity:
    branch: str | None
    head: str | None
    reason: str | None

    def to_snapshot(self) -> dict[str, Any]:
        return {"branch": self.branch, "head": self.head, "reason": self.reason}


def _absent(reason: str) -> GitIdentity:
    return GitIdentity(branch=None, head=None, reason=reason)


def read_git_identity(root: Path) -> GitIdentity:
    git = root / ".git"
    if not git.is_dir():
        return _absent("not_a_git_work_tree")
    try:
        head = (git / "HEAD").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return _absent("unreadable_head")
    if _OBJECT.fullmatch(head):
        return GitIdentity(branch=None, head=head, reason=None)
    if not head.startswith("ref: refs/heads/"):
        return _absent("unreadable_head")
    ref = head.removeprefix("ref: ")
    branch = ref.removeprefix("refs/heads/")
    target: str | None
    try:
        target = (git / ref).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        target = _packed(git, ref)
    if target is None or not _OBJECT.fullmatch(target):
        return GitIdentity(branch=branch, head=None, reason="unborn_branch")
    return GitIdentity(branch=branch, head=target, reason=None)


def _packed(git: Path, ref: str) -> str | None:
    try:
        lines = (git / "packed-refs").read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    for line in lines:
        sha, _, name = line.partition(" ")
        if name == ref:
            return sha
    return None
