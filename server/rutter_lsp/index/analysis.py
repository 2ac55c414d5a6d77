"""What the editor shows, computed from discovery: pure functions run on the disk worker.

The server never re-implements discovery. For every directory that holds an open document
(or whose level reads an open instruction file) it asks discovery for that directory's stack
(`discover_stack`: which sources apply, what is ignored, the conflicts; no snapshot, no
fingerprint) and indexes the answers by source path: which open documents each instruction
file reaches, its conflicts, and why a file is ignored. The full snapshot is built only for
the few directories whose instruction files someone looks at (hover, lens, diagnostics).
Inputs and results are immutable, so results can be handed from the worker thread to the
event loop without copying.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from rutter_core.discovery.assemble import snapshot_of
from rutter_core.discovery.checks import check_source, load_ignore_rules
from rutter_core.discovery.fsread import FileReader, lstat_or_none, read_head
from rutter_core.discovery.ignore import IGNORE_FILE
from rutter_core.discovery.snapshot import (
    DEFAULT_LIMITS,
    Conflict,
    IgnoredEntry,
    Limits,
    Snapshot,
    Source,
)
from rutter_core.discovery.stack import Stack
from rutter_core.discovery.walk import SharedLevels, discover_stack
from rutter_core.kernel.errors import RutterError
from rutter_lsp.index.paths import Folder, InstructionFile, directory_of

DirKey = tuple[str, str]
"""(workspace_id, workspace-relative directory)"""
FileKey = tuple[str, str]
"""(workspace_id, workspace-relative file path)"""


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """What the editor shows of a fail-closed discovery error: its fields as plain values, for
    sharing across threads (the exception itself would keep the walk's frames alive)."""

    code: str
    message: str
    path: str | None = None
    details: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def of(cls, error: RutterError) -> ErrorInfo:
        return cls(error.code, error.message, error.path, tuple(sorted(error.details.items())))

    def detail(self, key: str) -> Any:
        return dict(self.details).get(key)


@dataclass(frozen=True, slots=True)
class OpenDoc:
    """An open document inside a served folder."""

    uri: str
    folder: Folder
    rel: str
    instruction: InstructionFile | None
    agent_file: bool = False
    """A file some agent profile reads by name (GEMINI.md, .cursor/rules, ...; issue 20)."""

    @property
    def diagnosed(self) -> bool:
        """Whether the document gets diagnostics: an instruction file or an agent's file."""
        return self.instruction is not None or self.agent_file

    @property
    def directory(self) -> str:
        """The directory whose discovery answers questions about this document."""
        if self.instruction is not None:
            return self.instruction.level
        return directory_of(self.rel)

    @property
    def dir_key(self) -> DirKey:
        return (self.folder.workspace_id, self.directory)


@dataclass(frozen=True, slots=True)
class DirResult:
    workspace_id: str
    directory: str
    stack: Stack | None
    error: ErrorInfo | None

    def snapshot(self, reader: FileReader) -> Snapshot | None:
        """The full snapshot of this directory's stack (worker only; `reader` keeps it)."""
        return None if self.stack is None else snapshot_of(self.stack, reader=reader)


@dataclass(frozen=True, slots=True)
class Index:
    """Discovery results for the directories of all open documents, indexed by source."""

    dirs: Mapping[DirKey, DirResult] = field(default_factory=dict)
    applies: Mapping[FileKey, tuple[str, ...]] = field(default_factory=dict)
    """Instruction file → URIs of the open (non-instruction) documents it reaches."""
    conflicts: Mapping[FileKey, tuple[Conflict, ...]] = field(default_factory=dict)
    ignored: Mapping[FileKey, IgnoredEntry] = field(default_factory=dict)


def discover_dir(
    folder: Folder, directory: str, reader: FileReader, shared: SharedLevels | None = None
) -> DirResult:
    try:
        stack = discover_stack(
            folder.workspace_id, folder.root, directory, reader=reader, shared=shared
        )
    except RutterError as error:
        return DirResult(folder.workspace_id, directory, None, ErrorInfo.of(error))
    return DirResult(folder.workspace_id, directory, stack, None)


def build_index(results: Iterable[DirResult], docs: Sequence[OpenDoc]) -> Index:
    dirs = {(result.workspace_id, result.directory): result for result in results}
    applies: dict[FileKey, list[str]] = defaultdict(list)
    conflicts: dict[FileKey, dict[tuple[str, str, str], Conflict]] = defaultdict(dict)
    ignored: dict[FileKey, IgnoredEntry] = {}
    for (workspace_id, _), result in dirs.items():
        if result.stack is None:
            continue
        for conflict in result.stack.conflicts:
            key = (conflict.role, conflict.lower_precedence_path, conflict.higher_precedence_path)
            conflicts[(workspace_id, conflict.lower_precedence_path)][key] = conflict
            conflicts[(workspace_id, conflict.higher_precedence_path)][key] = conflict
        for entry in result.stack.ignored:
            ignored[(workspace_id, entry.path)] = entry
    # In URI order, each URI once: every list of URIs below comes out sorted, with no sort of
    # its own (a source of the root reaches nearly every open document).
    unique = {doc.uri: doc for doc in docs}
    for uri in sorted(unique):
        doc = unique[uri]
        if doc.instruction is not None:
            continue  # instruction files are not targets people count
        found = dirs.get(doc.dir_key)
        if found is None or found.stack is None:
            continue  # fail closed: nothing reaches this document
        for source in found.stack.sources:
            applies[(doc.folder.workspace_id, source.path)].append(uri)
    return Index(
        dirs=dirs,
        applies={key: tuple(uris) for key, uris in applies.items()},
        conflicts={key: tuple(found.values()) for key, found in conflicts.items()},
        ignored=ignored,
    )


FileState = Literal[
    "effective", "superseded", "ignored", "blank_override", "alias", "failed", "blocked",
    "control", "not_read",
]  # fmt: skip


@dataclass(frozen=True, slots=True)
class FileStatus:
    """Everything the editor says about one instruction file (or the ignore file)."""

    folder: Folder
    file: InstructionFile
    state: FileState
    source: Source | None = None
    ignored: IgnoredEntry | None = None
    error: ErrorInfo | None = None
    """A fail-closed condition located on this very file."""
    blocking: ErrorInfo | None = None
    """Discovery of this file's directory fails because of another path."""
    conflicts: tuple[Conflict, ...] = ()
    applies_to: tuple[str, ...] = ()
    stack: tuple[str, ...] = ()
    """The sources delivered for this file's directory, in order."""
    ignored_by_file: tuple[IgnoredEntry, ...] = ()
    """For the ignore file: the entries it excludes among what discovery has seen."""


def file_status(
    folder: Folder,
    file: InstructionFile,
    index: Index,
    reader: FileReader,
    *,
    limits: Limits = DEFAULT_LIMITS,
) -> FileStatus:
    """The status of `file` from the index, completing it from disk where needed."""
    key: FileKey = (folder.workspace_id, file.rel)
    result = index.dirs.get((folder.workspace_id, file.level))
    if result is None:
        result = discover_dir(folder, file.level, reader)
    conflicts = index.conflicts.get(key, ())
    applies_to = index.applies.get(key, ())
    if file.kind == "ignore_file":
        seen = sorted(
            (entry for (ws, _), entry in index.ignored.items()
             if ws == folder.workspace_id and entry.reason == "ignore_file"),
            key=lambda entry: (entry.line or 0, entry.path),
        )  # fmt: skip
        error = result.error if result.error and result.error.path == IGNORE_FILE else None
        return FileStatus(
            folder, file, "failed" if error else "control", error=error,
            ignored_by_file=tuple(seen),
        )  # fmt: skip
    if result.error is not None:
        if result.error.path == file.rel:
            return FileStatus(folder, file, "failed", error=result.error)
        own = check_file(folder, file, reader, limits=limits)
        return FileStatus(
            folder, file, "failed" if own else "blocked", error=own, blocking=result.error,
            conflicts=conflicts,
        )  # fmt: skip
    found = result.stack
    assert found is not None
    stack = tuple(source.path for source in found.sources)
    if file.rel in stack:
        # Only now the snapshot: the source's ordinal, explanation and redactions.
        snapshot = result.snapshot(reader)
        assert snapshot is not None
        for source in snapshot.sources:
            if source.path == file.rel:
                return FileStatus(
                    folder, file, "effective", source=source, conflicts=conflicts,
                    applies_to=applies_to, stack=stack,
                )  # fmt: skip
    for entry in found.ignored:
        if entry.path == file.rel:
            state: FileState = _IGNORED_STATES.get(entry.reason, "ignored")
            return FileStatus(folder, file, state, ignored=entry, stack=stack)
    return FileStatus(folder, file, "not_read", stack=stack)


_IGNORED_STATES: dict[str, FileState] = {
    "superseded": "superseded",
    "blank_override": "blank_override",
    "alias": "alias",
}


def check_file(
    folder: Folder, file: InstructionFile, reader: FileReader, *, limits: Limits = DEFAULT_LIMITS
) -> ErrorInfo | None:
    """The fail-closed condition of this one file, as discovery would report it, when
    discovery stopped before reaching it (another file fails first)."""
    path = folder.path_of(file.rel)
    try:
        st = lstat_or_none(path)
        if st is None or _ignored(folder, file.rel, reader, limits):
            return None
        if file.kind != "ignore_file":
            check_source(
                reader, file.rel, path, st, kind=file.kind, limits=limits, root=folder.root
            )
    except RutterError as error:
        return ErrorInfo.of(error)
    except OSError:
        return None
    return None


def _ignored(folder: Folder, rel: str, reader: FileReader, limits: Limits) -> bool:
    """Whether the workspace's ignore file (when readable and valid) excludes `rel`."""
    path = folder.path_of(IGNORE_FILE)
    st = lstat_or_none(path)
    if st is None:
        return False
    try:
        rules = load_ignore_rules(reader, path, st, limits)
    except RutterError:
        return False
    return rules.match(rel) is not None


def read_prefix(folder: Folder, rel: str, length: int) -> bytes | None:
    """The first `length` bytes of a regular file (never through a link), for positions."""
    return read_head(folder.path_of(rel), length)
