"""TEMPORARY stand-in for the `gitid` branch's `continuity/git.py` (drop this file at merge).

Only the interface the checkpoint uses, as that branch defines it:
`read_git_identity(root).to_snapshot()` gives the snapshot's fields `{"git": {"branch", "head"}
| None, "git_reason": reason | None}`. It reads `.git/HEAD` and the ref it names as files (no
`git` process, so no hook, filter or fsmonitor runs); it knows no worktrees, no reftable, no
parent directories and no ownership rules: the `gitid` module does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rutter_core.discovery.redaction import redact

_OBJECT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


@dataclass(frozen=True, slots=True)
class GitIdentity:
    branch: str | None
    head: str | None
    reason: str | None

    def to_snapshot(self) -> dict[str, Any]:
        if self.head is None:
            return {"git": None, "git_reason": self.reason}
        branch = None if self.branch is None else redact(self.branch).text
        return {"git": {"branch": branch, "head": self.head}, "git_reason": None}


def _absent(reason: str, branch: str | None = None) -> GitIdentity:
    return GitIdentity(branch=branch, head=None, reason=reason)


def read_git_identity(root: str) -> GitIdentity:
    git = Path(root) / ".git"
    if not git.is_dir():
        return _absent("not_a_git_work_tree")
    try:
        head = (git / "HEAD").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return _absent("unreadable")
    if _OBJECT.fullmatch(head):
        return GitIdentity(branch=None, head=head, reason=None)
    if not head.startswith("ref: refs/heads/"):
        return _absent("malformed")
    ref = head.removeprefix("ref: ")
    branch = ref.removeprefix("refs/heads/")
    target: str | None
    try:
        target = (git / ref).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        target = _packed(git, ref)
    if target is None or not _OBJECT.fullmatch(target):
        return _absent("unborn_branch", branch)
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
