"""Evaluating a profile for one target: the files its agent would load, in its order, where it
would cut them, and what it would pass over (notes, for the editor's diagnostics).

The walk is discovery's (`walk_chain`: from the workspace root to the target's directory, no
linked directory, nothing outside the root); the project root is the deepest directory on it
holding a stop marker (`.git`), else the workspace root. Every file is read through
`profiles.reading` (discovery's safe readers). Nothing here writes, and nothing here is part
of discovery's snapshot, fingerprint or a run.
"""

from __future__ import annotations

import os
import posixpath
import stat
from dataclasses import dataclass, field
from typing import Final, Literal

from rutter_core.discovery.chain import Level, walk_chain
from rutter_core.discovery.checks import require_real_dir
from rutter_core.discovery.fsread import FileReader, lstat_or_none
from rutter_core.discovery.snapshot import DEFAULT_LIMITS
from rutter_core.kernel.errors import RutterError, discovery_error
from rutter_core.profiles.frontmatter import FrontMatter, body_start, parse_front_matter
from rutter_core.profiles.globs import compile_glob, split_globs
from rutter_core.profiles.imports import find_imports
from rutter_core.profiles.model import FileRule, Profile, RulesDir
from rutter_core.profiles.reading import AgentFile, Found, find, join, read

MAX_RULE_FILES: Final = 256
"""Rule files looked at per rules directory; the rest are passed over with a note."""
MAX_RULE_DEPTH: Final = 32
MAX_VIEW_FILES: Final = 256
"""Files one view reads at most (imports included): a file importing hundreds of files that
import hundreds more stops here, with a note on the import where it stopped."""

Origin = Literal["file", "rule", "import"]


@dataclass(frozen=True, slots=True)
class Truncation:
    byte: int
    """Bytes of the file the agent keeps: it cuts before this byte (0-based offset)."""
    line: int
    """The 1-based line holding the first byte lost."""
    lost_bytes: int


@dataclass(frozen=True, slots=True)
class Loaded:
    file: AgentFile
    why: str
    origin: Origin
    importer: str | None = None
    hop: int = 0
    truncation: Truncation | None = None


@dataclass(frozen=True, slots=True)
class Note:
    """Something the agent passes over or cuts, located in a file (for diagnostics)."""

    rel: str
    code: str
    message: str
    line: int | None = None
    """0-based line in `rel`; None: the file as a whole."""


@dataclass(frozen=True, slots=True)
class Evaluation:
    profile: Profile
    project_root: str
    target: str
    loaded: tuple[Loaded, ...]
    notes: tuple[Note, ...]


def size_text(size: int) -> str:
    if size < 1024:
        return f"{size} bytes"
    kib = f"{size / 1024:.1f}".removesuffix(".0")
    return f"{kib} KiB"


class Memo:
    """Lookups shared by the evaluations of one moment (the editor's refresh round, like a
    batch's shared levels in discovery): each path is `lstat`ed and each candidate found once,
    the root's realpath checked once. Reads still verify each file's identity, so a file that
    changed meanwhile is refused, never mixed. Without a memo every lookup is fresh."""

    def __init__(self) -> None:
        self._lstats: dict[str, os.stat_result | None] = {}
        self._found: dict[tuple[str, str], Found | None] = {}
        self._errors: dict[tuple[str, str], RutterError] = {}
        self.roots: set[str] = set()

    def lstat(self, path: str) -> os.stat_result | None:
        try:
            return self._lstats[path]
        except KeyError:
            st = self._lstats[path] = lstat_or_none(path)
            return st

    def find(self, root: str, rel: str) -> Found | None:
        key = (root, rel)
        if key in self._errors:
            raise self._errors[key]
        try:
            return self._found[key]
        except KeyError:
            pass
        try:
            found = self._found[key] = find(root, rel)
        except RutterError as error:
            self._errors[key] = error
            raise
        return found


class _Fresh(Memo):
    """No sharing: every lookup goes to the disk."""

    def lstat(self, path: str) -> os.stat_result | None:
        return lstat_or_none(path)

    def find(self, root: str, rel: str) -> Found | None:
        return find(root, rel)


def project_root_of(levels: list[Level], markers: tuple[str, ...], memo: Memo) -> int:
    """The index in `levels` of the deepest directory holding a stop marker (0: the root)."""
    for index in range(len(levels) - 1, -1, -1):
        if any(memo.lstat(os.path.join(levels[index].path, m)) is not None for m in markers):
            return index
    return 0


@dataclass(slots=True)
class _Run:
    profile: Profile
    root: str
    target: str
    reader: FileReader
    levels: list[Level]
    project_root: str
    memo: Memo
    loaded: list[Loaded] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)

    @property
    def name(self) -> str:
        return self.profile.name

    # -- files -------------------------------------------------------------------------------

    def files(self, spec: FileRule, level: Level) -> list[Loaded]:
        out: list[Loaded] = []
        for name in spec.names:
            rel = join(level.scope, name)
            found = self.memo.find(self.root, rel)
            if found is None:
                continue
            why = f"{spec.why}; this one is in directory {level.scope}"
            loaded = self.load(found.rel, found, why, "file")
            out.extend(loaded)
            if spec.pick == "first":
                break
        return out

    def load(self, rel: str, found: Found, why: str, origin: Origin) -> list[Loaded]:
        """The file with its imports in the agent's order (nothing if passed over)."""
        if rel in self.seen:
            return []
        limits = self.profile.limits
        if (
            limits.per_file_bytes is not None
            and limits.per_file_action == "skip"
            and found.size > limits.per_file_bytes
        ):
            self.notes.append(
                Note(rel, "too_large_skipped", f"{self.name} will not read this file: it is "
                     f"{size_text(found.size)}, over its limit of "
                     f"{size_text(limits.per_file_bytes)} per file")
            )  # fmt: skip
            return []
        file = read(self.reader, self.root, found)
        if file.blank:
            return []
        self.seen.add(rel)
        if found.target_rel is not None:
            self.seen.add(found.target_rel)  # `CLAUDE.md -> AGENTS.md`: AGENTS.md is read
        return self.with_imports(Loaded(file, why, origin), 0)

    # -- imports -----------------------------------------------------------------------------

    def with_imports(self, item: Loaded, hop: int) -> list[Loaded]:
        spec = self.profile.imports
        if spec is None:
            return [item]
        imported: list[Loaded] = []
        text = item.file.text
        for ref in find_imports(text[body_start(text) :], skip_code=spec.skip_code):
            line = ref.line + text[: body_start(text)].count("\n")
            rel = self.resolve(item.file.rel, ref.path)
            if rel is None:
                self.notes.append(
                    Note(item.file.rel, "import_outside", "this import is outside the "
                         f"workspace: rutter does not read it, so what {self.name} takes from "
                         "it is not shown", line)
                )  # fmt: skip
                continue
            if rel in self.seen:
                continue  # a cycle, or a file already loaded: read once
            if len(self.seen) >= MAX_VIEW_FILES:
                self.notes.append(
                    Note(item.file.rel, "too_many_imports", f"rutter stops reading imports "
                         f"after {MAX_VIEW_FILES} files: what {self.name} takes from this "
                         "import and the ones after it is not shown", line)
                )  # fmt: skip
                break
            try:
                found = self.memo.find(self.root, rel)
            except RutterError as error:
                self.notes.append(Note(item.file.rel, "import_unreadable", error.message, line))
                continue
            if found is None:
                continue  # not a file: agents leave the text as it is
            if hop + 1 > spec.max_hops:
                self.notes.append(
                    Note(item.file.rel, "import_too_deep", f"this import is deeper than "
                         f"{spec.max_hops} hops from the file {self.name} loads: it will not "
                         "read it", line)
                )  # fmt: skip
                continue
            try:
                file = read(self.reader, self.root, found)
            except RutterError as error:
                self.notes.append(Note(item.file.rel, "import_unreadable", error.message, line))
                continue
            self.seen.add(rel)
            why = f"imported by {item.file.rel} (hop {hop + 1} of at most {spec.max_hops})"
            imported.extend(
                self.with_imports(Loaded(file, why, "import", item.file.rel, hop + 1), hop + 1)
            )
        return [*imported, item] if spec.order == "before" else [item, *imported]

    def resolve(self, importer: str, written: str) -> str | None:
        """The workspace-relative path an import names; None outside the workspace."""
        if written.startswith("~"):
            return None
        if written.startswith("/"):
            rel = os.path.relpath(written, self.root).replace(os.sep, "/")
        else:
            rel = posixpath.normpath(posixpath.join(posixpath.dirname(importer), written))
        if rel == ".." or rel.startswith("../") or rel.startswith("/"):
            return None
        return rel

    # -- rules -------------------------------------------------------------------------------

    def rules(self, spec: RulesDir, level: Level) -> list[Loaded]:
        rules_rel = join(level.scope, spec.dir)
        found = self.rule_files(rules_rel, spec)
        out: list[Loaded] = []
        base = self.project_root if spec.globs_relative_to == "project_root" else level.scope
        target = _relative_to(self.target, base)
        for rel in found:
            item = self.memo.find(self.root, rel)
            if item is None or rel in self.seen:
                continue
            file = read(self.reader, self.root, item)
            matter = parse_front_matter(file.text)
            why = self.rule_why(spec, rel, matter, target)
            if why is None:
                continue
            if file.blank:
                continue
            self.seen.add(rel)
            out.extend(self.with_imports(Loaded(file, why, "rule"), 0))
        return out

    def rule_why(
        self, spec: RulesDir, rel: str, matter: FrontMatter, target: str | None
    ) -> str | None:
        if spec.exclude_key is not None:
            value = matter.get(spec.exclude_key)
            values = value if isinstance(value, list) else [value]
            if any(isinstance(v, str) and v in spec.excluded_values for v in values):
                line = matter.lines.get(spec.exclude_key)
                self.notes.append(
                    Note(rel, "excluded_agent", f"{self.name} will not read this file: its "
                         f"{spec.exclude_key} excludes it", line)
                )  # fmt: skip
                return None
        if spec.always_key is not None and matter.flag(spec.always_key):
            return f"{spec.why} with `{spec.always_key}: true`: it applies to every file"
        globs = split_globs(matter.get(spec.globs_key)) if spec.globs_key else ()
        if globs:
            if target is None:
                return None
            for pattern in globs:
                if compile_glob(pattern, star_matches_all=spec.star_matches_all).matches(target):
                    return f"{spec.why}: {self.target} matches its `{spec.globs_key}:` globs"
            return None
        if spec.without_globs == "always":
            return f"{spec.why} without `{spec.globs_key}:` globs: it applies to every file"
        return None

    def rule_files(self, rules_rel: str, spec: RulesDir) -> list[str]:
        """Rule files under `rules_rel` (sorted by path bytes), bounded."""
        path = os.path.join(self.root, *rules_rel.split("/"))
        st = self.memo.lstat(path)
        if st is None or not require_real_dir(rules_rel, st):
            return []
        files: list[str] = []
        stack: list[tuple[str, str, os.stat_result, int]] = [(rules_rel, path, st, 0)]
        while stack:
            rel, dir_path, dir_st, depth = stack.pop()
            for entry in self.reader.list_dir(dir_path, dir_st):
                child = f"{rel}/{entry.name}"
                if stat.S_ISDIR(entry.st.st_mode):
                    if spec.recursive and depth + 1 < MAX_RULE_DEPTH:
                        inner = os.path.join(dir_path, entry.name)
                        stack.append((child, inner, entry.st, depth + 1))
                    continue
                if entry.name.lower().endswith(spec.suffixes) and len(files) < MAX_RULE_FILES:
                    files.append(child)
        return sorted(files, key=os.fsencode)

    # -- the whole -----------------------------------------------------------------------------

    def run(self) -> None:
        start = next(i for i, lv in enumerate(self.levels) if lv.scope == self.project_root)
        walked = self.levels[start:]
        nearest: dict[int, int] = {}
        for index, spec in enumerate(self.profile.sources):
            if isinstance(spec, FileRule) and spec.where == "nearest":
                for position in range(len(walked) - 1, -1, -1):
                    names = (join(walked[position].scope, n) for n in spec.names)
                    if any(self.memo.find(self.root, rel) is not None for rel in names):
                        nearest[index] = position
                        break
        fallbacks: list[FileRule] = []
        for position, level in enumerate(walked):
            for index, spec in enumerate(self.profile.sources):
                if spec.where == "project_root" and position != 0:
                    continue
                if isinstance(spec, RulesDir):
                    self.loaded.extend(self.rules(spec, level))
                    continue
                if spec.unless_loaded:
                    if position == 0:
                        fallbacks.append(spec)
                    continue
                if spec.where == "nearest" and nearest.get(index) != position:
                    continue
                self.loaded.extend(self.files(spec, level))
            self.not_read(level)
        for spec in fallbacks:
            loaded_names = {posixpath.basename(item.file.rel) for item in self.loaded}
            if not loaded_names.intersection(spec.unless_loaded):
                self.loaded.extend(self.files(spec, walked[0]))
        self.apply_budget()

    def not_read(self, level: Level) -> None:
        """A file another agent reads, beside this agent's own file (in the same directory, not
        in a subdirectory such as `.claude/`) that does not import it:
        the person uses this agent here and may expect it to read both (reported only then,
        so a project that does not use this agent hears nothing)."""
        if not self.profile.not_read:
            return
        own = [
            name for spec in self.profile.sources if isinstance(spec, FileRule)
            for name in spec.names
            if "/" not in name and self.memo.lstat(os.path.join(level.path, name)) is not None
        ]  # fmt: skip
        if not own:
            return
        for name in self.profile.not_read:
            rel = join(level.scope, name)
            if rel in self.seen or self.memo.lstat(os.path.join(level.path, name)) is None:
                continue
            self.notes.append(
                Note(rel, "not_read", f"{self.name} will not read this {name}: {own[0]} in "
                     f"this directory does not import it (write @{name} in it to have it read)")
            )  # fmt: skip

    def apply_budget(self) -> None:
        budget = self.profile.limits.budget_bytes
        if budget is None:
            return
        remaining = budget
        kept: list[Loaded] = []
        spent: list[str] = []
        for index, entry in enumerate(self.loaded):
            item = entry
            if remaining == 0:
                for late in self.loaded[index:]:
                    self.notes.append(
                        Note(late.file.rel, "budget_dropped", f"{self.name} will not read this "
                             f"file: its {size_text(budget)} budget is spent by "
                             f"{', '.join(spent)}")
                    )  # fmt: skip
                dropped = ", ".join(late.file.rel for late in self.loaded[index:])
                last = kept[-1]
                kept[-1] = Loaded(
                    last.file, f"{last.why}; the budget is spent here: not loaded: {dropped}",
                    last.origin, last.importer, last.hop, last.truncation,
                )  # fmt: skip
                break
            size = item.file.size
            if size > remaining:
                cut = remaining
                line = item.file.raw[:cut].count(b"\n") + 1
                truncation = Truncation(cut, line, size - cut)
                before = ", ".join(spent) if spent else "nothing before it"
                self.notes.append(
                    Note(item.file.rel, "budget_cut", f"{self.name} will cut this file at line "
                         f"{line} (byte {cut}): its {size_text(budget)} budget is reached after "
                         f"{before}; {size_text(size - cut)} are lost", line - 1)
                )  # fmt: skip
                item = Loaded(
                    item.file,
                    f"{item.why}; cut at byte {cut} (line {line}): the {size_text(budget)} "
                    f"budget is reached, {size - cut} bytes lost",
                    item.origin, item.importer, item.hop, truncation,
                )  # fmt: skip
                size = cut
            spent.append(f"{item.file.rel} {size_text(size)}")
            remaining -= size
            kept.append(item)
        self.loaded = kept


def _relative_to(target: str, base: str) -> str | None:
    if base == ".":
        return target
    if target == base:
        return "."
    prefix = base + "/"
    return target[len(prefix) :] if target.startswith(prefix) else None


def _unreadable(exc: OSError, root: str) -> RutterError:
    """An OS refusal (permissions, I/O) as discovery's typed `unreadable`, naming no path
    outside the workspace."""
    rel: str | None = None
    if isinstance(exc.filename, str):
        candidate = os.path.relpath(exc.filename, root).replace(os.sep, "/")
        if candidate != ".." and not candidate.startswith("../"):
            rel = candidate
    where = rel if rel is not None else "a path in the workspace"
    return discovery_error(
        "unreadable",
        f"{where} cannot be read ({exc.strerror or 'error'}); fix its permissions or remove it",
        path=rel,
    )


def evaluate(
    profile: Profile, root: str, target: str, reader: FileReader, memo: Memo | None = None
) -> Evaluation:
    """What `profile`'s agent loads for `target` (canonical, workspace-relative) in the
    workspace at `root`. Raises discovery's typed errors where discovery would fail closed on
    a file the agent reads (a link out of the root, a FIFO, invalid UTF-8, a NUL byte)."""
    try:
        memo = memo or _Fresh()
        levels = walk_chain(
            root, target, DEFAULT_LIMITS, lstat=memo.lstat, root_checked=root in memo.roots
        )
        memo.roots.add(root)
        project = levels[project_root_of(levels, profile.stop_markers, memo)].scope
        run = _Run(profile, root, target, reader, levels, project, memo)
        run.run()
    except OSError as exc:
        raise _unreadable(exc, root) from exc
    return Evaluation(profile, project, target, tuple(run.loaded), tuple(run.notes))
