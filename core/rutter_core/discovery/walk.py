"""The walk of project-instruction discovery (docs/reference/discovery.md): which sources apply to a
target, and what was ignored.

Walks from the workspace root to the target's directory, never outside the root, never
through a link, and fails closed with a typed error on anything unsafe. Where files live and
how they rank is `layout`; what one file must be is `checks`; the walk's result is a
`stack.Stack`, which `assemble` turns into the snapshot (`discover` does both).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from rutter_core.discovery.assemble import snapshot_of
from rutter_core.discovery.chain import Level, walk_chain
from rutter_core.discovery.checks import (
    Checked,
    check_candidate,
    file_type,
    load_ignore_rules,
    require_candidate,
    require_real_dir,
    require_regular,
)
from rutter_core.discovery.fsread import FileReader, is_link
from rutter_core.discovery.ignore import IGNORE_FILE, IgnoreMatch, IgnoreRules
from rutter_core.discovery.layout import (
    AGENTS_NAME,
    CLAUDE_DIR,
    CLAUDE_DIR_NAMES,
    CLAUDE_NAME,
    IGNORE_NAME,
    LEVEL_NAMES,
    OVERRIDE_NAME,
    PRAYU_DIR,
    PRAYU_INSTRUCTIONS,
    PRAYU_NAMES,
    PRAYU_RULES,
    SLOT_AGENTS,
    SLOT_CLAUDE,
    SLOT_CLAUDE_DIR,
    SLOT_FIRST_RULE,
    SLOT_PRAYU_INSTRUCTIONS,
    join_rel,
)
from rutter_core.discovery.shared import SharedLevels
from rutter_core.discovery.snapshot import (
    DEFAULT_LIMITS,
    IgnoredEntry,
    Limits,
    Snapshot,
    SourceKind,
)
from rutter_core.discovery.sourcetext import SourceText
from rutter_core.discovery.stack import Stack, StackSource, conflicts_of
from rutter_core.discovery.targets import is_utf8, normalize_target
from rutter_core.kernel.clock import utc_now
from rutter_core.kernel.errors import RutterError, discovery_error
from rutter_core.kernel.text import first_forbidden_char

# Entries looked at under one .prayu/rules tree, Markdown or not: bounds the work a hostile
# tree can cause before the source bound applies.
MAX_RULES_ENTRIES = 4096


@dataclass(slots=True)
class _Found:
    """A source that will be delivered, before ordinals and explanations are assigned."""

    rel: str
    kind: SourceKind
    level: Level
    slot: int
    text: SourceText
    notes: list[str] = field(default_factory=list)
    link_target: str | None = None
    link_stub: bool = False
    link_hops: tuple[str, ...] = ()


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

    # -- what is delivered -------------------------------------------------------------------

    def ignored_by_file(self, rel: str) -> IgnoreMatch | None:
        match = self.ignore.match(rel)
        if match is not None:
            self.ignored.append(
                IgnoredEntry(path=rel, reason="ignore_file", line=match.line, pattern=match.pattern)
            )
        return match

    def source(self, rel: str, abs_path: str, st: os.stat_result, kind: SourceKind) -> Checked:
        """A source that must be delivered: every refusal of its own (`check_candidate`)."""
        checked = check_candidate(
            self.reader, rel, abs_path, st, kind=kind, limits=self.limits,
            root=self.workspace_root,
        )  # fmt: skip
        assert checked is not None  # only a blank override is skipped, not asked here
        return checked

    def admit(
        self, rel: str, kind: SourceKind, level: Level, slot: int, checked: Checked
    ) -> _Found | None:
        """Deliver a checked source, within the bounds on all sources together; a link whose
        final file is already delivered (as a source, or as another link's end) is an alias
        instead (docs/reference/discovery.md; see `_aliases` for one whose final file is
        delivered later in the walk)."""
        text = checked.text
        if checked.link_target is not None:
            # Its chain reaches a source delivered already: its final file, or a link on the
            # way (`CLAUDE.md -> AGENTS.md -> .agents/AGENTS.md` with AGENTS.md delivered).
            for item in self.found:
                if item.rel == checked.link_target or item.rel in checked.link_hops:
                    self.ignored.append(_alias(rel, item.rel, checked.link_stub))
                    return None
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
        item = _Found(
            rel=rel, kind=kind, level=level, slot=slot, text=text,
            link_target=checked.link_target, link_stub=checked.link_stub,
            link_hops=checked.link_hops,
        )  # fmt: skip
        self.found.append(item)
        return item

    def plain_source(
        self,
        rel: str,
        abs_path: str,
        st: os.stat_result,
        kind: SourceKind,
        level: Level,
        slot: int,
    ) -> None:
        if self.ignored_by_file(rel) is not None:
            return
        self.admit(rel, kind, level, slot, self.source(rel, abs_path, st, kind))

    # -- the walk ---------------------------------------------------------------------------

    def load_ignore(self, prayu: dict[str, os.stat_result], prayu_path: str) -> None:
        st = prayu.get(IGNORE_NAME)
        if st is not None:
            path = os.path.join(prayu_path, IGNORE_NAME)
            self.ignore = load_ignore_rules(self.reader, path, st, self.limits)

    def level(self, level: Level) -> None:
        entries = self.reader.probe(level.path, level.st, LEVEL_NAMES)
        if not entries:
            return  # most directories hold no instruction file: nothing to look at
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
        level: Level,
        name: str,
        entries: dict[str, os.stat_result],
        names: tuple[str, ...],
    ) -> tuple[str, dict[str, os.stat_result]] | None:
        st = entries.get(name)
        if st is None or not require_real_dir(join_rel(level.scope, name), st):
            return None  # absent, or a plain file named like the directory: nothing inside
        path = os.path.join(level.path, name)
        return path, self.reader.probe(path, st, names)

    def agents_slot(self, level: Level, entries: dict[str, os.stat_result]) -> None:
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
                override_path = os.path.join(level.path, OVERRIDE_NAME)
                checked = check_candidate(
                    self.reader, override_rel, override_path, override_st,
                    kind="agents_override", limits=self.limits, root=self.workspace_root,
                )  # fmt: skip
                if checked is None:
                    self.ignored.append(IgnoredEntry(path=override_rel, reason="blank_override"))
                    fallback_note = f"used because {override_rel} is blank"
                else:
                    chosen = self.admit(
                        override_rel, "agents_override", level, SLOT_AGENTS, checked
                    )
                    if chosen is None:  # an alias of a source above: this level has none
                        fallback_note = f"used because {override_rel} links to a source above"
        agents_st = entries.get(AGENTS_NAME)
        if agents_st is None or self.ignored_by_file(agents_rel) is not None:
            return
        agents_path = os.path.join(level.path, AGENTS_NAME)
        require_candidate(self.workspace_root, agents_rel, agents_path, agents_st)
        if chosen is not None:
            self.ignored.append(
                IgnoredEntry(path=agents_rel, reason="superseded", superseded_by=override_rel)
            )
            chosen.notes.append(f"replaces {agents_rel}, which is not delivered")
            return
        checked = self.source(agents_rel, agents_path, agents_st, "agents")
        found = self.admit(agents_rel, "agents", level, SLOT_AGENTS, checked)
        if found is not None and fallback_note is not None:
            found.notes.append(fallback_note)

    def rules(self, level: Level, rules_path: str, rules_st: os.stat_result) -> None:
        rules_rel = join_rel(level.scope, f"{PRAYU_DIR}/{PRAYU_RULES}")
        if not require_real_dir(rules_rel, rules_st):
            raise discovery_error(
                "not_regular_file",
                f"{rules_rel} is a {file_type(rules_st)}; it must be a directory of .md rules",
                path=rules_rel,
            )
        files: list[tuple[bytes, str, str, os.stat_result]] = []
        budget = [MAX_RULES_ENTRIES]
        # Nesting counts directories below `.prayu/rules/`: 32 at most (docs/reference/limits.md).
        self.collect_rules(rules_rel, rules_path, rules_st, 0, files, budget)
        files.sort(key=lambda item: item[0])
        for index, (_, rel, abs_path, st) in enumerate(files):
            checked = self.source(rel, abs_path, st, "prayu_rule")
            self.admit(rel, "prayu_rule", level, SLOT_FIRST_RULE + index, checked)

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
            if not is_utf8(entry.name):
                raise discovery_error(
                    "invalid_utf8",
                    f"{dir_rel} holds an entry whose name is not valid UTF-8; rename it",
                    path=dir_rel,
                )
            unsafe = first_forbidden_char(entry.name, allowed="")
            if unsafe is not None:  # a newline in a name would forge lines wherever it is shown
                raise discovery_error(
                    "invalid_name",
                    f"{dir_rel} holds an entry whose name contains the control character "
                    f"U+{ord(unsafe[1]):04X}; rename it",
                    path=dir_rel,
                    details={"codepoint": f"U+{ord(unsafe[1]):04X}"},
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
            if not (is_rule and is_link(entry.st)):  # a linked rule is followed when read
                require_regular(rel, entry.st)
            files.append((rel.encode("utf-8"), rel, path, entry.st))


def _frozen(item: _Found) -> StackSource:
    return StackSource(
        item.rel, item.kind, item.level.scope, item.level.depth, item.slot, item.text,
        tuple(item.notes), item.link_target, item.link_stub, item.link_hops,
    )  # fmt: skip


def _alias(rel: str, alias_of: str, stub: bool) -> IgnoredEntry:
    return IgnoredEntry(
        path=rel, reason="alias", alias_of=alias_of, link_stub=True if stub else None
    )


def _aliases(
    sources: tuple[StackSource, ...], ignored: list[IgnoredEntry]
) -> tuple[StackSource, ...]:
    """Links whose final file turned out to be a source delivered later in the walk (a root
    link to a nested AGENTS.md): listed as aliases, not delivered twice
    (docs/reference/discovery.md)."""
    if all(item.link_target is None for item in sources):
        return sources  # no link among them (the usual case)
    delivered = {item.path for item in sources}

    def reaches_delivered(item: StackSource) -> bool:
        return item.link_target in delivered or any(hop in delivered for hop in item.link_hops)

    staying = {item.path for item in sources if not reaches_delivered(item)}
    kept: list[StackSource] = []
    for item in sources:
        if item.path in staying:
            kept.append(item)
            continue
        # A chain through (or to) sources delivered later: it names the one that stays.
        reached = [hop for hop in (*item.link_hops, item.link_target) if hop in delivered]
        alias_of = next((hop for hop in reached if hop in staying), reached[0])
        ignored.append(_alias(item.path, alias_of, item.link_stub))
    return sources if len(kept) == len(sources) else tuple(kept)


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
        walk = _Walk(workspace_root, canonical_target, limits, reader)
        if shared is None:
            levels = walk_chain(workspace_root, canonical_target, limits)
            for level in levels:
                walk.level(level)
            sources = tuple(_frozen(item) for item in walk.found)
            conflicts = conflicts_of(sources)
        else:
            levels = shared.chain(workspace_root, canonical_target, limits)
            sources = _walk_shared(walk, levels, shared)
            conflicts = shared.conflicts(sources)
    except OSError as exc:
        raise _unreadable(exc, workspace_root) from exc
    ignored = list(walk.ignored)
    resolved = _aliases(sources, ignored)
    if len(resolved) != len(sources):  # a late alias left the sources: they layer anew
        conflicts = conflicts_of(resolved)
    sources = resolved
    return Stack(
        workspace_id,
        workspace_root,
        canonical_target,
        levels[-1].scope,
        limits,
        sources,
        tuple(ignored),
        conflicts,
    )


def _walk_shared(walk: _Walk, levels: list[Level], shared: SharedLevels) -> tuple[StackSource, ...]:
    states = shared.states(walk.workspace_root, walk.limits)
    start = shared.resume(walk, levels, states)
    sources = states[levels[start - 1].scope].sources if start else ()
    for index in range(start, len(levels)):
        found, ignored, ignore = len(walk.found), len(walk.ignored), walk.ignore
        walk.level(levels[index])
        if (
            index
            and len(walk.found) == found
            and len(walk.ignored) == ignored
            and walk.ignore is ignore
        ):
            # The level added nothing (a walk only appends, and only a level's own sources
            # get notes): its state is its parent's.
            shared.reuse(states, levels[index - 1].scope, levels[index].scope)
            continue
        sources = sources + tuple(_frozen(item) for item in walk.found[found:])
        shared.keep(walk, states, levels[index].scope, sources)
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
