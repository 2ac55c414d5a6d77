# ruff: noqa: PTH112, PTH116, PTH118, PTH120
# (str paths and os calls on purpose: lstat and no-follow opens are what this module is about)
"""The git identity of a workspace (docs/reference/continuity.md), read without running git.

Why pure Python, no dependency: the identity needs a few small text files (`.git`, `HEAD`, a
loose ref or `packed-refs`, `config` for the object format). Reading them runs nothing: no
`git` process (whose repository config can name an fsmonitor, hooks, filter drivers ...), no
library that opens the object database, the index or attributes. dulwich would run nothing
here either, but brings config, index and pack parsers we do not need: this is the smaller
attack surface. Objects are never opened: the identity is what the refs say.

Discovery follows `git rev-parse` run in the workspace root, with these decisions:

- The root may be the work tree's top or any directory inside: from the root upwards, the
  first directory holding a `.git` entry is the work tree. A directory that is itself a git
  directory (a bare repository, or the root lies inside a `.git`) is not in a work tree, nor
  is a repository whose own config says `core.bare = true` (a linked worktree of a bare
  repository is one, as in git). The search stops at a filesystem boundary (git's default).
  `GIT_DIR`, `GIT_CEILING_DIRECTORIES` and the like are ignored (the identity belongs to the
  directory, not the caller); so is `core.worktree` (the work tree is where `.git` is).
- A `.git` above the root must belong to `owner_uid` (default: the effective uid), as must its
  directory and the git directory it names, or `dubious_ownership` (git's safe.directory
  rule, for the case it exists for: a repository planted above someone's directory, as in
  /tmp/.git). A root the person chose is read whoever owns it; safe.directory is not read.
- A `.git` that exists but cannot be used (a FIFO, a link loop, a dangling link, a `gitdir:`
  file naming nothing usable) stops the search with a reason; it never falls through to a
  parent repository: the root evidently has its own.
- A `gitdir:` file (linked worktrees, submodules, `--separate-git-dir`) or a `.git` symbolic
  link may name any directory, as in git: refusing links would buy nothing, since a
  `gitdir:` file can name the same place. What is read there is bounded instead: the target
  must look like a git directory (a regular `HEAD`, and `refs/` + `objects/` or a
  `commondir` file); one `gitdir:` and one `commondir` hop, never chains; only regular files,
  opened without following a link in the last component and without blocking (a FIFO is
  refused, never waited on), each size-limited (`HEAD`, refs, `gitdir:`, `commondir` 4 KiB,
  `config` 1 MiB, `packed-refs` 256 MiB streamed). Directories on the way may be links (the
  `repo` tool links `refs/`), but a ref name is checked by git's check-ref-format rules before
  it becomes a path, so `ref: ../../x` never leaves the git directory. A `HEAD` or loose ref
  that is itself a link (git's long-gone legacy format) is `unreadable`.
- `HEAD` is followed through at most 5 symbolic refs (git's limit); loose refs win over
  `packed-refs`; `refs/worktree/`, `refs/bisect/`, `refs/rewritten/` live in a linked
  worktree's own directory, other refs in the common one. `branch` is the last symbolic ref's
  target (what `git symbolic-ref HEAD` prints) without `refs/heads/`; a detached HEAD, or one
  pointing outside `refs/heads/`, has none. `head` is the full lowercase hex ID: 40 for SHA-1,
  64 for SHA-256 (`extensions.objectformat`, format version 1). A format above 1, an unknown
  object format or a ref storage other than files (reftable) is `unsupported_repository`;
  other unknown extensions are tolerated (they do not change how refs are stored).
- Reasons (stable codes, never file content): `not_a_git_work_tree`, `dubious_ownership`,
  `unborn_branch` (the branch is known, it has no commit yet), `unreadable` (what must be
  read cannot be, safely), `malformed` (read, but git would not accept it),
  `unsupported_repository`.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator, Mapping
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

GitReason = Literal[
    "not_a_git_work_tree",
    "dubious_ownership",
    "unborn_branch",
    "unreadable",
    "malformed",
    "unsupported_repository",
]

SMALL_FILE_MAX_BYTES: Final = 4096
CONFIG_MAX_BYTES: Final = 1024 * 1024
PACKED_REFS_MAX_BYTES: Final = 256 * 1024 * 1024
MAX_SYMREF_DEPTH: Final = 5
HEX_LENGTHS: Final = {"sha1": 40, "sha256": 64}
_PER_WORKTREE_PREFIXES: Final = ("refs/worktree/", "refs/bisect/", "refs/rewritten/")
_BRANCH_PREFIX: Final = "refs/heads/"
_HEX: Final = frozenset("0123456789abcdef")
_REFNAME_FORBIDDEN: Final = frozenset(" ~^:?*[\\\x7f")
_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_READ_FLAGS: Final = (
    os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)  # fmt: skip


class GitIdentity(BaseModel):
    """A workspace's git identity: `head` set (and `reason` None), or `reason` set. `branch` is
    None when detached; with `unborn_branch` it names the branch that has no commit yet."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    branch: str | None
    head: str | None
    reason: GitReason | None

    @model_validator(mode="after")
    def _consistent(self) -> GitIdentity:
        if (self.head is None) == (self.reason is None):
            raise ValueError("exactly one of head and reason is set")
        if self.head is not None and not _is_hex_id(self.head):
            raise ValueError("head is a full lowercase hex object ID")
        if self.branch is not None and self.head is None and self.reason != "unborn_branch":
            raise ValueError("only an unborn branch has a branch without a head")
        return self

    def to_snapshot(self) -> dict[str, Any]:
        """The snapshot's fields: `{"git": {"branch": b, "head": h}, "git_reason": None}` or
        `{"git": None, "git_reason": reason}` (an unborn branch too: inside `git`, `head` is
        never null). The branch is redacted (docs/reference/redaction.md)."""
        from rutter_core.discovery.redaction import redact  # lazy: not on `workspace register`

        if self.head is None:
            return {"git": None, "git_reason": self.reason}
        branch = None if self.branch is None else redact(self.branch).text
        return {"git": {"branch": branch, "head": self.head}, "git_reason": None}

    @classmethod
    def from_snapshot(cls, fields: Mapping[str, Any]) -> GitIdentity:
        """The identity a snapshot recorded (the inverse of `to_snapshot`); ValueError when
        `fields` is not what `to_snapshot` makes."""
        git = fields.get("git")
        if git is None:
            return cls(branch=None, head=None, reason=fields.get("git_reason"))
        if not isinstance(git, Mapping) or set(git) != {"branch", "head"}:
            raise ValueError("a snapshot's git is {branch, head} or null")
        return cls(branch=git["branch"], head=git["head"], reason=fields.get("git_reason"))


class GitDrift(BaseModel):
    """What changed between a recorded identity and the current one (session tree markers)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    branch_changed: bool
    head_changed: bool


def git_drift(before: GitIdentity, after: GitIdentity) -> GitDrift:
    """Compared as snapshots record them: an identity that became or stopped being available
    changed; two unavailable ones (whatever their reasons) did not."""
    was = before.to_snapshot()["git"] or {"branch": None, "head": None}
    now = after.to_snapshot()["git"] or {"branch": None, "head": None}
    return GitDrift(
        branch_changed=was["branch"] != now["branch"], head_changed=was["head"] != now["head"]
    )


def read_git_identity(root: str, *, owner_uid: int | None = None) -> GitIdentity:
    """The git identity of the work tree holding `root`. Runs nothing, and never raises for
    anything it finds on disk (the module docstring lists every decision)."""
    if owner_uid is None and hasattr(os, "geteuid"):
        owner_uid = os.geteuid()
    try:
        return _Repository(find_gitdir(root, owner_uid)).identity()
    except _Unavailable as exc:
        return GitIdentity(branch=exc.branch, head=None, reason=exc.reason)
    except ValidationError:
        raise  # a bug here, not something found on disk
    except OSError:
        return GitIdentity(branch=None, head=None, reason="unreadable")
    except ValueError:  # undecodable text, a NUL in a path
        return GitIdentity(branch=None, head=None, reason="malformed")


class _Unavailable(Exception):
    def __init__(self, reason: GitReason, branch: str | None = None) -> None:
        super().__init__(reason)
        self.reason: GitReason = reason
        self.branch = branch


def find_gitdir(root: str, owner_uid: int | None) -> str:
    """The git directory of the work tree holding `root` (`_Unavailable` with the reason)."""
    start = os.path.realpath(root)
    start_st = os.stat(start)
    if not stat.S_ISDIR(start_st.st_mode):
        raise _Unavailable("unreadable")
    current = start
    while True:
        entry = os.path.join(current, ".git")
        entry_st = _lstat_or_none(entry)
        if entry_st is not None:
            above = current != start
            if above:
                _require_owner(owner_uid, os.lstat(current), entry_st)
            gitdir = _locate_gitdir(current, entry, entry_st)
            if above:
                _require_owner(owner_uid, os.stat(gitdir))
            return gitdir
        if _gitdir_problem(current) is None:
            raise _Unavailable("not_a_git_work_tree")
        parent = os.path.dirname(current)
        if parent == current or os.stat(parent).st_dev != start_st.st_dev:
            raise _Unavailable("not_a_git_work_tree")
        current = parent


def _lstat_or_none(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _require_owner(owner_uid: int | None, *found: os.stat_result) -> None:
    if owner_uid is not None and any(st.st_uid != owner_uid for st in found):
        raise _Unavailable("dubious_ownership")


def _locate_gitdir(work_tree: str, entry: str, entry_st: os.stat_result) -> str:
    """The git directory `work_tree/.git` names: itself, a `gitdir:` file's target, or (for a
    link) what the link's target would give."""
    path, st = entry, entry_st
    if stat.S_ISLNK(st.st_mode):
        path = os.path.realpath(entry, strict=True)  # a loop or a dangling link: OSError
        st = os.lstat(path)
    if stat.S_ISDIR(st.st_mode):
        gitdir = path
    elif stat.S_ISREG(st.st_mode):
        data = _read_file(path, SMALL_FILE_MAX_BYTES) or b""
        line = _one_line(data)
        target = line.removeprefix("gitdir: ")
        if target == line or not target:
            raise _Unavailable("malformed")
        gitdir = os.path.realpath(os.path.join(work_tree, target))
    else:
        raise _Unavailable("unreadable")
    if not os.path.isdir(gitdir):  # missing: unreadable
        raise _Unavailable("unreadable")
    problem = _gitdir_problem(gitdir)
    if problem is not None:
        raise _Unavailable(problem)
    return gitdir


def _one_line(data: bytes) -> str:
    text = data.rstrip(b"\r\n")
    if b"\0" in text or b"\n" in text:
        raise _Unavailable("malformed")
    return os.fsdecode(text)


def _gitdir_problem(path: str) -> GitReason | None:
    """None when `path` is a git directory (git's is_git_directory, without opening objects);
    otherwise why not: `unreadable` for a `HEAD` that is not a regular file, else `malformed`."""
    head = _lstat_or_none(os.path.join(path, "HEAD"))
    if head is None:
        return "malformed"
    if not stat.S_ISREG(head.st_mode):
        return "unreadable"
    commondir = _lstat_or_none(os.path.join(path, "commondir"))
    if commondir is not None and stat.S_ISREG(commondir.st_mode):
        return None
    parts = (os.path.join(path, "refs"), os.path.join(path, "objects"))
    return None if all(os.path.isdir(part) for part in parts) else "malformed"


def _open_regular(path: str) -> int | None:
    """A descriptor on the regular file at `path`, None when nothing is there. Anything else
    (a link, a directory, a FIFO, a device) is `unreadable` and never opened: the open does
    not follow a last-component link and does not block, should it change meanwhile."""
    st = _lstat_or_none(path)
    if st is None:
        return None
    if not stat.S_ISREG(st.st_mode):
        raise _Unavailable("unreadable")
    try:
        fd = os.open(path, _READ_FLAGS)
    except (FileNotFoundError, NotADirectoryError):
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise _Unavailable("unreadable")
    return fd


def _read_file(path: str, limit: int) -> bytes | None:
    """The bytes of a regular file of at most `limit` bytes; None when it does not exist."""
    fd = _open_regular(path)
    if fd is None:
        return None
    try:
        return b"".join(_chunks(fd, limit))
    finally:
        os.close(fd)


def _chunks(fd: int, limit: int) -> Iterator[bytes]:
    """A file's bytes in chunks; `unreadable` once there are more than `limit`."""
    total = 0
    while chunk := os.read(fd, min(64 * 1024, limit + 1 - total)):
        total += len(chunk)
        if total > limit:
            raise _Unavailable("unreadable")
        yield chunk


class _Repository:
    """The files of one git directory and its common directory, read on demand."""

    def __init__(self, gitdir: str) -> None:
        self.gitdir = gitdir
        self.commondir = gitdir
        common = _read_file(os.path.join(gitdir, "commondir"), SMALL_FILE_MAX_BYTES)
        if common is not None:
            target = _one_line(common)
            self.commondir = os.path.realpath(os.path.join(gitdir, target))
            if not target or not os.path.isdir(os.path.join(self.commondir, "refs")):
                raise _Unavailable("malformed")
        config = _read_file(os.path.join(self.commondir, "config"), CONFIG_MAX_BYTES)
        settings = _parse_config(config or b"")
        self.hex_length = _hex_length(settings)
        if gitdir == self.commondir and _boolean(settings.get("core.bare", "false")):
            raise _Unavailable("not_a_git_work_tree")

    def identity(self) -> GitIdentity:
        name = "HEAD"
        for _ in range(MAX_SYMREF_DEPTH + 1):
            value = self._ref(name)
            branch = name.removeprefix(_BRANCH_PREFIX) if name.startswith(_BRANCH_PREFIX) else None
            if value is None:  # HEAD itself exists: the git directory was checked
                raise _Unavailable("unborn_branch", branch=branch)
            if not value.startswith("ref:"):
                return GitIdentity(branch=branch, head=value, reason=None)
            name = value.removeprefix("ref:").strip()
            if not _valid_refname(name):
                raise _Unavailable("malformed")
        raise _Unavailable("malformed")  # symbolic refs nested too deep (or a cycle)

    def _ref(self, name: str) -> str | None:
        """`ref: <target>` or the object ID that `name` holds; None when it does not exist."""
        per_worktree = name == "HEAD" or name.startswith(_PER_WORKTREE_PREFIXES)
        path = os.path.join(self.gitdir if per_worktree else self.commondir, *name.split("/"))
        st = _lstat_or_none(path)
        if st is not None and not stat.S_ISDIR(st.st_mode):  # a directory of refs: no ref
            data = _read_file(path, SMALL_FILE_MAX_BYTES)
            if data is not None:
                if b"\0" in data:
                    raise _Unavailable("malformed")
                text = data.decode("utf-8").rstrip()
                return text if text.startswith("ref:") else self._object_id(text)
        return None if per_worktree else self._packed(name)

    def _object_id(self, text: str) -> str:
        oid = text.lower()
        if len(oid) != self.hex_length or not _is_hex_id(oid) or set(oid) == {"0"}:
            raise _Unavailable("malformed")
        return oid

    def _packed(self, name: str) -> str | None:
        fd = _open_regular(os.path.join(self.commondir, "packed-refs"))
        if fd is None:
            return None
        wanted = os.fsencode(name)
        try:
            pending = b""
            for chunk in _chunks(fd, PACKED_REFS_MAX_BYTES):
                *lines, pending = (pending + chunk).split(b"\n")
                if len(pending) > 2 * SMALL_FILE_MAX_BYTES:
                    raise _Unavailable("malformed")
                for line in lines:
                    oid = self._packed_line(line.rstrip(b"\r"), wanted)
                    if oid is not None:
                        return oid
            return self._packed_line(pending.rstrip(b"\r"), wanted)
        finally:
            os.close(fd)

    def _packed_line(self, line: bytes, wanted: bytes) -> str | None:
        """The object ID on `line` when it names `wanted` (comments and peeled lines skipped)."""
        if not line or line.startswith((b"#", b"^")):
            return None
        oid, space, ref = line.partition(b" ")
        if not space:
            raise _Unavailable("malformed")
        return self._object_id(oid.decode("ascii")) if ref == wanted else None


def _is_hex_id(text: str) -> bool:
    return len(text) in HEX_LENGTHS.values() and set(text) <= _HEX


def _valid_refname(name: str) -> bool:
    """git's check-ref-format rules, for a full name under `refs/` (so it is a safe path)."""
    if not name.startswith("refs/") or name.endswith(("/", ".")) or len(name) > 1024:
        return False
    if ".." in name or "@{" in name or any(c in _REFNAME_FORBIDDEN or c < " " for c in name):
        return False
    return all(p and p[0] != "." and not p.endswith(".lock") for p in name.split("/"))


def _hex_length(settings: Mapping[str, str | None]) -> int:
    """The object ID length the repository format says (git's read_repository_format)."""
    version = _integer(settings.get("core.repositoryformatversion", "0"))
    object_format = settings.get("extensions.objectformat", "sha1")
    ref_storage = settings.get("extensions.refstorage", "files")
    if object_format is None or ref_storage is None:
        raise _Unavailable("malformed")  # git: "missing value"
    extended = "extensions.objectformat" in settings or "extensions.refstorage" in settings
    if version not in (0, 1) or (version == 0 and extended) or ref_storage.lower() != "files":
        raise _Unavailable("unsupported_repository")
    length = HEX_LENGTHS.get(object_format.lower())
    if length is None:
        raise _Unavailable("unsupported_repository")
    return length


def _integer(value: str | None) -> int:
    try:
        return int((value or "").strip())
    except ValueError:
        raise _Unavailable("malformed") from None


def _boolean(value: str | None) -> bool:
    """git's boolean: no value is true, an empty one false, words or any integer."""
    lowered = "true" if value is None else value.strip().lower()
    if lowered in ("true", "yes", "on"):
        return True
    if lowered in ("false", "no", "off", ""):
        return False
    return _integer(lowered) != 0


_CONFIG_KEYS: Final = frozenset(
    {"core.repositoryformatversion", "core.bare", "extensions.objectformat",
     "extensions.refstorage"})  # fmt: skip
_SPACE: Final = " \t\n\v\f\r"  # C's isspace: git works on bytes
_ESCAPES: Final = {"n": "\n", "t": "\t", "b": "\b", "\\": "\\", '"': '"', "\n": ""}
_SECTION: Final = re.compile(r'\[([A-Za-z0-9.-]+)([ \t]+"(?:[^"\\\n]|\\[^\n])*")?\]')
_KEY: Final = re.compile(r"([A-Za-z][A-Za-z0-9-]*)[ \t]*")


def _parse_config(data: bytes) -> dict[str, str | None]:
    """The few settings we need from a git config file, parsed as git's config.c does (the last
    value wins; a key without `=` has the value None, meaning true). Includes are not followed
    (nor does git for the repository format). A file git would refuse is `malformed`."""
    text = data.removeprefix(b"\xef\xbb\xbf").decode("latin-1").replace("\r\n", "\n")
    found: dict[str, str | None] = {}
    section = ""  # git takes keys before any section too (they are none of ours)
    at = 0
    while at < len(text):
        if text[at] in _SPACE:
            at += 1
        elif text[at] in "#;":
            at = _line_end(text, at)
        elif header := _SECTION.match(text, at):
            name = header[1].lower()  # a subsection (either syntax) holds none of our keys
            section = "" if header[2] or "." in name else name
            at = header.end()
        elif key := _KEY.match(text, at):
            value, at = _config_value(text, key.end())
            if f"{section}.{key[1].lower()}" in _CONFIG_KEYS:
                found[f"{section}.{key[1].lower()}"] = value
        else:
            raise _Unavailable("malformed")
    return found


def _line_end(text: str, at: int) -> int:
    newline = text.find("\n", at)
    return len(text) if newline < 0 else newline + 1


def _config_value(text: str, at: int) -> tuple[str | None, int]:
    """The value after a key and where the text goes on (git's get_value and parse_value:
    quotes, escapes, comments, backslash-newline continuations, outer spaces dropped)."""
    if at >= len(text) or text[at] == "\n":
        return None, at + 1
    if text[at] != "=":
        raise _Unavailable("malformed")
    out: list[str] = []
    spaces, quoted, at = 0, False, at + 1
    while at < len(text) and text[at] != "\n":
        ch, at = text[at], at + 1
        if ch in _SPACE and not quoted:
            spaces += 1 if out else 0
            continue
        if ch in "#;" and not quoted:
            at = _line_end(text, at) - 1
            break
        if spaces:
            out.append(" " * spaces)
            spaces = 0
        if ch == "\\":
            escaped = _ESCAPES.get(text[at], "?") if at < len(text) else ""  # EOF: a newline
            if escaped == "?":
                raise _Unavailable("malformed")
            if escaped:
                out.append(escaped)
            at += 1
        elif ch == '"':
            quoted = not quoted
        else:
            out.append(ch)
    if quoted:
        raise _Unavailable("malformed")
    return "".join(out), at + 1
