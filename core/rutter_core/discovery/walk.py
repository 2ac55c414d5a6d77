"""Project-instruction discovery (contract section 5): which sources apply to a target, and why.

Walks from the workspace root to the target's directory, never outside the root, never
through a link, and fails closed with a typed error on anything unsafe.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NoReturn

from rutter_core.discovery.fsread import FileReader, identity_of, is_link, lstat_or_none
from rutter_core.discovery.ignore import IGNORE_FILE, IgnoreMatch, IgnoreRules
from rutter_core.discovery.snapshot import (
    AUTHORITY_JSON,
    DEFAULT_LIMITS,
    PROTOCOL_VERSION,
    TRUST_CLASS,
    Conflict,
    IgnoredEntry,
    Limits,
    Snapshot,
    SourceKind,
    snapshot_fingerprint,
)
from rutter_core.discovery.sourcetext import SourceText, decode_source
from rutter_core.kernel.clock import rfc3339, utc_now
from rutter_core.kernel.errors import RutterError, discovery_error

OVERRIDE_NAME = "AGENTS.override.md"
AGENTS_NAME = "AGENTS.md"
CLAUDE_NAME = "CLAUDE.md"
CLAUDE_DIR = ".claude"
PRAYU_DIR = ".prayu"
PRAYU_INSTRUCTIONS = "instructions.md"
PRAYU_RULES = "rules"
IGNORE_NAME = "instructions.ignore"

LEVEL_NAMES = (OVERRIDE_NAME, AGENTS_NAME, CLAUDE_NAME, CLAUDE_DIR, PRAYU_DIR)
CLAUDE_DIR_NAMES = (CLAUDE_NAME,)
PRAYU_NAMES = (PRAYU_INSTRUCTIONS, PRAYU_RULES, IGNORE_NAME)

SLOT_AGENTS = 0
SLOT_CLAUDE = 1
SLOT_CLAUDE_DIR = 2
SLOT_PRAYU_INSTRUCTIONS = 3
SLOT_FIRST_RULE = 10

# Entries looked at under one .prayu/rules tree, Markdown or not: bounds the work a hostile
# tree can cause before the source bound applies.
MAX_RULES_ENTRIES = 4096

_KIND_LABELS: dict[SourceKind, str] = {
    "agents_override": OVERRIDE_NAME,
    "agents": AGENTS_NAME,
    "claude": CLAUDE_NAME,
    "claude_dir": ".claude/CLAUDE.md",
    "prayu_instructions": ".prayu/instructions.md",
    "prayu_rule": "rule",
}


def join_rel(scope: str, name: str) -> str:
    return name if scope == "." else f"{scope}/{name}"


def read_ignore_rules(
    reader: FileReader, path: str, st: os.stat_result, limits: Limits
) -> IgnoreRules:
    """The parsed ignore file at `path` (its lstat `st`), cached while its identity holds."""
    return reader.read_decoded(
        path,
        st,
        max_bytes=limits.max_ignore_bytes,
        rel=IGNORE_FILE,
        decoder="ignore",
        decode=lambda raw: IgnoreRules.parse(
            raw, max_bytes=limits.max_ignore_bytes, max_patterns=limits.max_ignore_patterns
        ),
    )


def normalize_target(target: str) -> str:
    """The canonical workspace-relative form of `target` (`.` for the root), or `invalid_target`."""

    def reject(why: str) -> NoReturn:
        raise discovery_error(
            "invalid_target",
            f"target {target!r} {why}; give a path relative to the workspace root, "
            "with `/` separators, e.g. src/main.go",
            path=target if _is_utf8(target) else None,
        )

    if not _is_utf8(target):
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


def _is_utf8(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class _Level:
    scope: str
    path: str
    st: os.stat_result
    depth: int


@dataclass(slots=True)
class _Found:
    """A source that will be delivered, before ordinals and explanations are assigned."""

    rel: str
    kind: SourceKind
    level: _Level
    slot: int
    text: SourceText
    notes: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _Walk:
    workspace_root: str
    target: str
    limits: Limits
    reader: FileReader
    ignore: IgnoreRules = field(default_factory=IgnoreRules.empty)
    found: list[_Found] = field(default_factory=list)
    ignored: list[IgnoredEntry] = field(default_factory=list)
    total_bytes: int = 0

    # -- checks -----------------------------------------------------------------------------

    def ignored_by_file(self, rel: str) -> IgnoreMatch | None:
        match = self.ignore.match(rel)
        if match is not None:
            self.ignored.append(
                IgnoredEntry(path=rel, reason="ignore_file", line=match.line, pattern=match.pattern)
            )
        return match

    @staticmethod
    def require_regular(rel: str, st: os.stat_result) -> None:
        if is_link(st):
            raise discovery_error(
                "symlink",
                f"{rel} is a symbolic link; instruction files must be regular files inside the "
                "workspace (replace the link with the file itself)",
                path=rel,
            )
        if not stat.S_ISREG(st.st_mode):
            raise discovery_error(
                "not_regular_file",
                f"{rel} is a {_file_type(st)}, not a regular file; remove it or replace it with "
                "a regular Markdown file",
                path=rel,
            )

    @staticmethod
    def require_real_dir(rel: str, st: os.stat_result) -> bool:
        """True for a real directory; False when the path is something else (not a link)."""
        if is_link(st):
            raise discovery_error(
                "symlink",
                f"{rel} is a symbolic link; discovery never follows links (replace it with "
                "a real directory)",
                path=rel,
            )
        return stat.S_ISDIR(st.st_mode)

    # -- reading ----------------------------------------------------------------------------

    def read(self, rel: str, abs_path: str, st: os.stat_result) -> SourceText:
        return self.reader.read_decoded(
            abs_path,
            st,
            max_bytes=self.limits.max_file_bytes,
            rel=rel,
            decoder="source",
            decode=lambda raw: decode_source(raw, rel=rel),
        )

    def deliver(
        self, rel: str, kind: SourceKind, level: _Level, slot: int, text: SourceText
    ) -> _Found:
        if text.blank:
            raise discovery_error(
                "empty_source",
                f"{rel} is empty or whitespace only; write its instructions or delete it "
                "(only a blank AGENTS.override.md is skipped)",
                path=rel,
            )
        if text.content_bytes > self.limits.max_file_bytes:
            raise discovery_error(
                "too_large",
                f"{rel} is {text.content_bytes} bytes after secret redaction, over the limit "
                f"of {self.limits.max_file_bytes} bytes; shorten it",
                path=rel,
                details={"bytes": text.content_bytes, "limit": self.limits.max_file_bytes},
            )
        if len(self.found) >= self.limits.max_files:
            raise discovery_error(
                "too_many_files",
                f"more than {self.limits.max_files} instruction sources apply to {self.target}; "
                f"{rel} is one too many. Merge rules or exclude some in {IGNORE_FILE}",
                path=rel,
                details={"limit": self.limits.max_files},
            )
        self.total_bytes += text.raw_bytes
        if self.total_bytes > self.limits.max_total_bytes:
            raise discovery_error(
                "total_too_large",
                f"the instruction sources for {self.target} total {self.total_bytes} bytes "
                f"(reached at {rel}), over the limit of {self.limits.max_total_bytes} bytes; "
                f"shorten them or exclude some in {IGNORE_FILE}",
                path=rel,
                details={"bytes": self.total_bytes, "limit": self.limits.max_total_bytes},
            )
        item = _Found(rel=rel, kind=kind, level=level, slot=slot, text=text)
        self.found.append(item)
        return item

    def plain_source(
        self,
        rel: str,
        abs_path: str,
        st: os.stat_result,
        kind: SourceKind,
        level: _Level,
        slot: int,
    ) -> None:
        if self.ignored_by_file(rel) is not None:
            return
        self.require_regular(rel, st)
        self.deliver(rel, kind, level, slot, self.read(rel, abs_path, st))

    # -- the walk ---------------------------------------------------------------------------

    def load_ignore(self, prayu: dict[str, os.stat_result], prayu_path: str) -> None:
        st = prayu.get(IGNORE_NAME)
        if st is None:
            return
        if is_link(st):
            raise discovery_error(
                "symlink",
                f"{IGNORE_FILE} is a symbolic link; make it a regular file",
                path=IGNORE_FILE,
            )
        if not stat.S_ISREG(st.st_mode):
            raise discovery_error(
                "not_regular_file",
                f"{IGNORE_FILE} is a {_file_type(st)}, not a regular file",
                path=IGNORE_FILE,
            )
        limits = self.limits
        if st.st_size > limits.max_ignore_bytes:
            raise discovery_error(
                "invalid_ignore",
                f"{IGNORE_FILE} is {st.st_size} bytes, over the limit of "
                f"{limits.max_ignore_bytes} bytes; shorten it",
                path=IGNORE_FILE,
                details={"bytes": st.st_size, "limit": limits.max_ignore_bytes},
            )
        self.ignore = read_ignore_rules(
            self.reader, os.path.join(prayu_path, IGNORE_NAME), st, limits
        )

    def level(self, level: _Level) -> None:
        entries = self.reader.probe(level.path, level.st, LEVEL_NAMES)
        claude_dir = self.subdir(level, CLAUDE_DIR, entries, CLAUDE_DIR_NAMES)
        prayu_dir = self.subdir(level, PRAYU_DIR, entries, PRAYU_NAMES)
        prayu = prayu_dir[1] if prayu_dir else {}
        if level.depth == 0 and prayu_dir:
            self.load_ignore(prayu, prayu_dir[0])

        self.agents_slot(level, entries)
        if CLAUDE_NAME in entries:
            self.plain_source(
                join_rel(level.scope, CLAUDE_NAME),
                os.path.join(level.path, CLAUDE_NAME),
                entries[CLAUDE_NAME],
                "claude",
                level,
                SLOT_CLAUDE,
            )
        if claude_dir and CLAUDE_NAME in claude_dir[1]:
            self.plain_source(
                join_rel(level.scope, f"{CLAUDE_DIR}/{CLAUDE_NAME}"),
                os.path.join(claude_dir[0], CLAUDE_NAME),
                claude_dir[1][CLAUDE_NAME],
                "claude_dir",
                level,
                SLOT_CLAUDE_DIR,
            )
        if prayu_dir and PRAYU_INSTRUCTIONS in prayu:
            self.plain_source(
                join_rel(level.scope, f"{PRAYU_DIR}/{PRAYU_INSTRUCTIONS}"),
                os.path.join(prayu_dir[0], PRAYU_INSTRUCTIONS),
                prayu[PRAYU_INSTRUCTIONS],
                "prayu_instructions",
                level,
                SLOT_PRAYU_INSTRUCTIONS,
            )
        if prayu_dir and PRAYU_RULES in prayu:
            self.rules(level, os.path.join(prayu_dir[0], PRAYU_RULES), prayu[PRAYU_RULES])

    def subdir(
        self,
        level: _Level,
        name: str,
        entries: dict[str, os.stat_result],
        names: tuple[str, ...],
    ) -> tuple[str, dict[str, os.stat_result]] | None:
        st = entries.get(name)
        if st is None or not self.require_real_dir(join_rel(level.scope, name), st):
            return None  # absent, or a plain file named like the directory: nothing inside
        path = os.path.join(level.path, name)
        return path, self.reader.probe(path, st, names)

    def agents_slot(self, level: _Level, entries: dict[str, os.stat_result]) -> None:
        override_rel = join_rel(level.scope, OVERRIDE_NAME)
        agents_rel = join_rel(level.scope, AGENTS_NAME)
        chosen: _Found | None = None
        fallback_note: str | None = None
        override_st = entries.get(OVERRIDE_NAME)
        if override_st is not None:
            match = self.ignored_by_file(override_rel)
            if match is not None:
                fallback_note = (
                    f"used because {override_rel} is excluded by {IGNORE_FILE}:{match.line}"
                )
            else:
                self.require_regular(override_rel, override_st)
                text = self.read(override_rel, os.path.join(level.path, OVERRIDE_NAME), override_st)
                if text.blank:
                    self.ignored.append(IgnoredEntry(path=override_rel, reason="blank_override"))
                    fallback_note = f"used because {override_rel} is blank"
                else:
                    chosen = self.deliver(override_rel, "agents_override", level, SLOT_AGENTS, text)
        agents_st = entries.get(AGENTS_NAME)
        if agents_st is None or self.ignored_by_file(agents_rel) is not None:
            return
        self.require_regular(agents_rel, agents_st)
        if chosen is not None:
            self.ignored.append(
                IgnoredEntry(path=agents_rel, reason="superseded", superseded_by=override_rel)
            )
            chosen.notes.append(f"replaces {agents_rel}, which is not delivered")
            return
        text = self.read(agents_rel, os.path.join(level.path, AGENTS_NAME), agents_st)
        found = self.deliver(agents_rel, "agents", level, SLOT_AGENTS, text)
        if fallback_note is not None:
            found.notes.append(fallback_note)

    def rules(self, level: _Level, rules_path: str, rules_st: os.stat_result) -> None:
        rules_rel = join_rel(level.scope, f"{PRAYU_DIR}/{PRAYU_RULES}")
        if not self.require_real_dir(rules_rel, rules_st):
            raise discovery_error(
                "not_regular_file",
                f"{rules_rel} is a {_file_type(rules_st)}; it must be a directory of .md rules",
                path=rules_rel,
            )
        files: list[tuple[bytes, str, str, os.stat_result]] = []
        budget = [MAX_RULES_ENTRIES]
        self.collect_rules(rules_rel, rules_path, rules_st, 1, files, budget)
        files.sort(key=lambda item: item[0])
        for index, (_, rel, abs_path, st) in enumerate(files):
            self.deliver(
                rel, "prayu_rule", level, SLOT_FIRST_RULE + index, self.read(rel, abs_path, st)
            )

    def collect_rules(
        self,
        dir_rel: str,
        dir_path: str,
        dir_st: os.stat_result,
        nesting: int,
        files: list[tuple[bytes, str, str, os.stat_result]],
        budget: list[int],
    ) -> None:
        if nesting > self.limits.max_depth:
            raise discovery_error(
                "too_deep",
                f"{dir_rel} nests rules more than {self.limits.max_depth} directories deep; "
                "flatten the rules tree",
                path=dir_rel,
                details={"limit": self.limits.max_depth},
            )
        for entry in self.reader.list_dir(dir_path, dir_st):
            budget[0] -= 1
            if budget[0] < 0:
                raise discovery_error(
                    "too_many_files",
                    f"the rules tree of {dir_rel} has more than {MAX_RULES_ENTRIES} entries; "
                    "keep only rules in it",
                    path=dir_rel,
                    details={"limit": MAX_RULES_ENTRIES},
                )
            if not _is_utf8(entry.name):
                raise discovery_error(
                    "invalid_utf8",
                    f"{dir_rel} holds an entry whose name is not valid UTF-8; rename it",
                    path=dir_rel,
                )
            rel = f"{dir_rel}/{entry.name}"
            path = os.path.join(dir_path, entry.name)
            if stat.S_ISDIR(entry.st.st_mode) and not is_link(entry.st):
                self.collect_rules(rel, path, entry.st, nesting + 1, files, budget)
                continue
            is_rule = entry.name.lower().endswith(".md")
            if stat.S_ISREG(entry.st.st_mode) and not is_rule:
                continue  # a plain non-Markdown file next to the rules: not a rule, harmless
            if self.ignored_by_file(rel) is not None:
                continue
            self.require_regular(rel, entry.st)
            files.append((rel.encode("utf-8"), rel, path, entry.st))


def _file_type(st: os.stat_result) -> str:
    mode = st.st_mode
    for test, name in (
        (stat.S_ISDIR, "directory"),
        (stat.S_ISFIFO, "FIFO"),
        (stat.S_ISSOCK, "socket"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
        (stat.S_ISLNK, "symbolic link"),
    ):
        if test(mode):
            return name
    return "special file"


def _walk_chain(root: str, target: str, limits: Limits) -> list[_Level]:
    """The directories from the root to the target's directory, each checked on the way."""
    if os.path.realpath(root) != root:
        raise discovery_error(
            "symlink",
            f"the workspace root {root} now resolves through a symbolic link; register the "
            "real directory instead",
            path=".",
        )
    root_st = lstat_or_none(root)
    if root_st is None or not stat.S_ISDIR(root_st.st_mode):
        raise discovery_error(
            "not_found",
            f"the workspace root {root} no longer exists or is not a directory; "
            "re-register the workspace",
            path=".",
        )
    levels = [_Level(".", root, root_st, 0)]
    if target == ".":
        return levels
    segments = target.split("/")
    if len(segments) > limits.max_depth:
        raise discovery_error(
            "too_deep",
            f"target {target} is {len(segments)} levels deep, over the limit of {limits.max_depth}",
            path=target,
            details={"limit": limits.max_depth},
        )
    path = root
    for index, segment in enumerate(segments):
        rel = "/".join(segments[: index + 1])
        path = os.path.join(path, segment)
        st = lstat_or_none(path)
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
            raise discovery_error(
                "symlink",
                f"{rel} is a symbolic link; discovery never follows links out of the "
                "directory tree",
                path=rel,
            )
        if stat.S_ISDIR(st.st_mode):
            levels.append(_Level(rel, path, st, len(levels)))
        elif not last:
            raise discovery_error(
                "not_found",
                f"{rel} is not a directory, so {target} cannot exist; check the target path",
                path=rel,
            )
    return levels


@dataclass(frozen=True, slots=True)
class StackSource:
    """A delivered source as the walk found it, before ordinals and explanations."""

    path: str
    kind: SourceKind
    scope: str
    """The level (directory) whose walk read it; `.` for the root."""
    depth: int
    slot: int
    text: SourceText
    notes: tuple[str, ...] = ()
    """Extra reasons (fallbacks, replacements), in the order they arose."""

    @property
    def precedence(self) -> int:
        return 100 * self.depth + self.slot

    @property
    def role(self) -> str:
        """What it competes for: sources of one role conflict, the nearer one wins."""
        if self.kind == "agents_override":
            return "agents"
        if self.kind == "prayu_rule":
            prefix = join_rel(self.scope, f"{PRAYU_DIR}/{PRAYU_RULES}/")
            return f"prayu_rule:{self.path[len(prefix) :]}"
        return self.kind


@dataclass(frozen=True, slots=True)
class Stack:
    """The result of discovery's walk for one target, frozen and typed: the sources in
    precedence order, what was ignored (and why), and the conflicts between sources.

    `discover` builds the snapshot from it; callers that need only which sources apply (the
    language server's index) use `discover_stack` and skip the snapshot. Cached source texts
    are the same objects while their files' identities hold, so stacks of an unchanged tree
    compare equal cheaply.
    """

    workspace_id: str
    workspace_root: str
    target: str
    """Canonical workspace-relative target."""
    target_dir: str
    """The deepest directory walked (the target itself when it is a directory)."""
    limits: Limits
    sources: tuple[StackSource, ...]
    ignored: tuple[IgnoredEntry, ...]
    conflicts: tuple[Conflict, ...]


@dataclass(frozen=True, slots=True)
class _LevelState:
    """The walk's state after a prefix of levels (target-independent, unlike its errors)."""

    ignore: IgnoreRules
    found: tuple[_Found, ...]
    sources: tuple[StackSource, ...]
    ignored: tuple[IgnoredEntry, ...]
    total_bytes: int


class SharedLevels:
    """Levels walked for earlier targets of one batch, reused by later targets below them.

    For one pass over many targets at one moment (the language server re-indexing the
    directories of its open documents): the root's files are read once per pass instead of
    once per target. What a level read is not checked again for later targets (each
    directory on the way is, by identity), so use a fresh one for each pass. A level that
    fails is never kept: the error is raised again for each target, naming it.
    """

    __slots__ = ("_states",)

    def __init__(self) -> None:
        self._states: dict[tuple[object, ...], _LevelState] = {}

    def resume(self, walk: _Walk, keys: list[tuple[object, ...]]) -> int:
        """Restore `walk` after the longest kept prefix; the index of the next level."""
        for index in range(len(keys) - 1, -1, -1):
            state = self._states.get(keys[index])
            if state is not None:
                walk.ignore = state.ignore
                walk.found = list(state.found)
                walk.ignored = list(state.ignored)
                walk.total_bytes = state.total_bytes
                return index + 1
        return 0

    def keep(self, walk: _Walk, key: tuple[object, ...], sources: tuple[StackSource, ...]) -> None:
        self._states[key] = _LevelState(
            walk.ignore, tuple(walk.found), sources, tuple(walk.ignored), walk.total_bytes
        )

    def sources(self, key: tuple[object, ...]) -> tuple[StackSource, ...]:
        return self._states[key].sources


def _frozen(item: _Found) -> StackSource:
    return StackSource(
        item.rel, item.kind, item.level.scope, item.level.depth, item.slot, item.text,
        tuple(item.notes),
    )  # fmt: skip


def discover_stack(
    workspace_id: str,
    workspace_root: str,
    target: str,
    *,
    reader: FileReader,
    limits: Limits = DEFAULT_LIMITS,
    shared: SharedLevels | None = None,
) -> Stack:
    """What applies to `target` in the workspace at `workspace_root`, without the snapshot.

    The one implementation of discovery's rules (`discover` builds on it). `shared` lets the
    targets of one batch reuse the levels they have in common. Raises a typed `RutterError`.
    """
    canonical_target = normalize_target(target)
    try:
        levels = _walk_chain(workspace_root, canonical_target, limits)
        walk = _Walk(workspace_root, canonical_target, limits, reader)
        if shared is None:
            for level in levels:
                walk.level(level)
            sources = tuple(_frozen(item) for item in walk.found)
        else:
            sources = _walk_shared(walk, levels, shared)
    except OSError as exc:
        raise _unreadable(exc, workspace_root) from exc
    return Stack(
        workspace_id,
        workspace_root,
        canonical_target,
        levels[-1].scope,
        limits,
        sources,
        tuple(walk.ignored),
        _conflicts(sources),
    )


def _walk_shared(
    walk: _Walk, levels: list[_Level], shared: SharedLevels
) -> tuple[StackSource, ...]:
    # A prefix is known by every directory's identity on the way, as this target saw them.
    keys: list[tuple[object, ...]] = []
    key: tuple[object, ...] = (walk.workspace_root, walk.limits)
    for level in levels:
        key = (*key, level.scope, identity_of(level.st))
        keys.append(key)
    start = shared.resume(walk, keys)
    sources = shared.sources(keys[start - 1]) if start else ()
    for index in range(start, len(levels)):
        before = len(walk.found)
        walk.level(levels[index])
        sources = sources + tuple(_frozen(item) for item in walk.found[before:])
        shared.keep(walk, keys[index], sources)
    return sources


def discover(
    workspace_id: str,
    workspace_root: str,
    target: str,
    *,
    reader: FileReader,
    limits: Limits = DEFAULT_LIMITS,
    now: Callable[[], datetime] = utc_now,
) -> Snapshot:
    """The effective instruction snapshot for `target` in the workspace at `workspace_root`.

    `workspace_root` is the registered (resolved) root. Raises a typed `RutterError`.
    """
    stack = discover_stack(workspace_id, workspace_root, target, reader=reader, limits=limits)
    return snapshot_of(stack, reader=reader, now=now)


def snapshot_of(
    stack: Stack, *, reader: FileReader, now: Callable[[], datetime] = utc_now
) -> Snapshot:
    """The snapshot of a discovered stack, `loaded_at` now.

    A snapshot assembled earlier from an equal stack is reused (kept by `reader`): its sources
    keep the time their content was loaded; the snapshot says when it was checked.
    """
    loaded_at = rfc3339(now())
    key = ("snapshot", stack.workspace_id, stack.workspace_root, stack.target, stack.limits)
    previous = reader.recall(key, stack)
    if isinstance(previous, Snapshot):
        return previous.model_copy(update={"loaded_at": loaded_at})
    snapshot = _assemble(stack, loaded_at)
    reader.remember(key, stack, snapshot)
    return snapshot


def _unreadable(exc: OSError, workspace_root: str) -> RutterError:
    """An OS refusal (permissions, I/O error) as a typed error naming the workspace path."""
    rel: str | None = None
    if isinstance(exc.filename, str):
        candidate = os.path.relpath(exc.filename, workspace_root)
        if candidate != ".." and not candidate.startswith("../"):
            rel = candidate.replace(os.sep, "/")
    where = rel if rel is not None else "a path in the workspace"
    return discovery_error(
        "unreadable",
        f"{where} cannot be read ({exc.strerror or exc}); fix its permissions or remove it",
        path=rel,
        details={"errno": exc.errno} if exc.errno is not None else None,
    )


def _conflicts(sources: tuple[StackSource, ...]) -> tuple[Conflict, ...]:
    """Each source against the previous one of its role: both apply, the nearer one wins."""
    conflicts: list[Conflict] = []
    last_by_role: dict[str, StackSource] = {}
    for item in sources:
        role = item.role
        lower = last_by_role.get(role)
        if lower is not None:
            conflicts.append(
                Conflict(
                    role=role,
                    lower_precedence_path=lower.path,
                    higher_precedence_path=item.path,
                    resolution=(
                        f"both apply; {item.path} is nearer to the target and wins where "
                        "they conflict"
                    ),
                )
            )
        last_by_role[role] = item
    return tuple(conflicts)


def _label(item: StackSource) -> str:
    if item.kind == "prayu_rule":
        rule = item.role.removeprefix("prayu_rule:")
        if item.scope == ".":
            return f"workspace-root rule {rule}"
        return f"rule {rule} of {item.scope}"
    if item.scope == ".":
        return f"workspace-root {_KIND_LABELS[item.kind]}"
    return item.path


def _reach(item: StackSource, target: str, target_dir: str) -> str:
    depth = item.depth
    if item.scope != target_dir:
        return f"inherited by {target} (depth {depth})"
    if target == target_dir:
        if target == ".":
            return "applies to the whole workspace (depth 0)"
        return f"applies to {target} itself and everything below it (depth {depth})"
    return f"applies to {target} in its own directory (depth {depth})"


def _assemble(stack: Stack, loaded_at: str) -> Snapshot:
    target, target_dir = stack.target, stack.target_dir
    wins_over: dict[str, list[str]] = {}
    loses_to: dict[str, list[str]] = {}
    for conflict in stack.conflicts:
        lower, higher = conflict.lower_precedence_path, conflict.higher_precedence_path
        wins_over.setdefault(higher, []).append(lower)
        loses_to.setdefault(lower, []).append(higher)

    # Built as plain JSON first: the fingerprint is taken from exactly what is emitted, and
    # one validation of the whole document is much cheaper than a model per source.
    sources: list[dict[str, Any]] = []
    for index, item in enumerate(stack.sources):
        why = [_label(item), _reach(item, target, target_dir), *item.notes]
        if item.kind == "claude_dir":
            why.append(f"its scope is {item.scope}, the directory holding .claude/")
        why.extend(f"overrides {rel} where they conflict" for rel in wins_over.get(item.path, []))
        why.extend(
            f"{rel} is nearer to the target and wins where they conflict"
            for rel in loses_to.get(item.path, [])
        )
        text = item.text
        sources.append(
            {
                "ordinal": index + 1,
                "path": item.path,
                "kind": item.kind,
                "scope": item.scope,
                "depth": item.depth,
                "precedence": item.precedence,
                "bytes": text.raw_bytes,
                "content": text.content,
                "content_sha256": text.content_sha256,
                "loaded_at": loaded_at,
                "trust": TRUST_CLASS,
                "applicable_to": [target],
                "why_effective": "; ".join(why),
                "redacted": text.redaction.redacted,
                "redactions": [
                    {"kind": kind, "count": count} for kind, count in text.redaction.counts()
                ],
                "authority": AUTHORITY_JSON,
            }
        )
    document: dict[str, Any] = {
        "protocol_version": PROTOCOL_VERSION,
        "workspace_id": stack.workspace_id,
        "target_path": target,
        "fingerprint": "",
        "loaded_at": loaded_at,
        "limits": stack.limits.model_dump(),
        "sources": sources,
        "ignored": [entry.model_dump(exclude_none=True) for entry in stack.ignored],
        "conflicts": [conflict.model_dump() for conflict in stack.conflicts],
    }
    document["fingerprint"] = snapshot_fingerprint(document)
    return Snapshot.model_validate(document)
