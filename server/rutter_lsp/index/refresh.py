"""Coalescing refreshes: many events, one index rebuild, one round of diagnostics.

Events (documents opened or edited, files changed on disk, folders or settings changed) only
record what became stale and make sure one refresh task is running. The task waits a short
debounce so a burst (a branch checkout, 1,000 `didOpen`s) becomes one rebuild (shorter when
only changes on disk are pending: they come in batches already), then:

1. invalidates the changed paths in the shared `FileReader` (on the disk worker),
2. re-runs discovery for the directories of open documents (their stacks only: the index
   needs which sources apply, not snapshots; levels they share are walked once per round) in
   slices of ~15 ms on the disk worker's background lane, so requests go ahead of the
   refresh and wait for one slice at most,
3. hands the round (`RefreshRound`: what became stale, the open documents) to every feature,
   in the order of the feature list: first `refresh` (the runs feature inspects the runs again
   and says which documents' drift changed), then `refreshed`: the diagnostics feature
   publishes what changed (pull: asks the client to pull again), the code lens asks for a
   refresh, the instructions feature sends `rutter/instructionsChanged` and the runs feature
   `rutter/runsChanged`.

The refresher knows no feature: it rebuilds the index and calls the hooks. It also keeps what
was published (`publish`, `clear`), as pushed diagnostics are withdrawn by several features.

Events arriving meanwhile are picked up by the next round of the same task.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import logging
import os
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Final

from lsprotocol import types

from rutter_core.discovery.fsread import FileReader
from rutter_core.discovery.layout import CLAUDE_DIR, PRAYU_DIR, classify
from rutter_core.discovery.walk import SharedLevels
from rutter_lsp.feature import RefreshRound
from rutter_lsp.index.analysis import (
    DirKey,
    DirResult,
    Index,
    OpenDoc,
    build_index,
    discover_dir,
)
from rutter_lsp.index.paths import Folder, directory_of

if TYPE_CHECKING:
    from rutter_lsp.server import RutterServer

logger = logging.getLogger("rutter_lsp")

DEBOUNCE_SECONDS: Final = 0.03
"""How long events gather before a round: a burst of `didOpen`s or edits becomes one rebuild."""
CHANGE_DEBOUNCE_SECONDS: Final = 0.005
"""The same when only changes on disk are pending: a client reports a batch of them in one
`didChangeWatchedFiles`, and each round discovers only what its changes reach, so a change
reported later costs a round over what it reaches rather than every user a longer wait."""
SLICE_SECONDS: Final = 0.015
"""Worker time per background job: what a request may have to wait for during a refresh."""
IDLE_TIMEOUT_SECONDS: Final = 30.0


@dataclass(slots=True)
class _Pending:
    index: bool = False
    all_diagnostics: bool = False
    diagnostics: set[str] = field(default_factory=set)
    changes: dict[str, set[str]] = field(default_factory=dict)
    invalidate: set[str] = field(default_factory=set)
    runs: bool = False
    """The store changed: runs may have been created, refreshed or ended."""
    docs: bool = False
    """Documents were opened or closed: only directories not indexed yet are discovered."""
    agents: bool = False
    """A file only agents read (or their settings) changed: every diagnosed document's agent
    diagnostics again, no rebuild of the index (discovery is unchanged)."""

    def debounce(self) -> float:
        only_disk = not (self.index or self.all_diagnostics or self.docs or self.runs)
        return CHANGE_DEBOUNCE_SECONDS if only_disk else DEBOUNCE_SECONDS

    def empty(self) -> bool:
        return not (
            self.index or self.all_diagnostics or self.diagnostics or self.changes
            or self.invalidate or self.runs or self.docs or self.agents
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class Reach:
    """The directories changed instruction files can reach: their levels and everything below
    (discovery reads a level's files for that directory and the directories under it)."""

    levels: tuple[str, ...]
    """Absolute paths of the levels the changed files belong to."""
    _prefixes: tuple[tuple[str, str], ...] = field(init=False, repr=False, compare=False)

    def reaches(self, folder: Folder, directory: str) -> bool:
        """`directory`: canonical and workspace-relative (as `OpenDoc.directory` is); its path is
        joined here rather than through `Folder.path_of`, as this runs for every open
        document's directory of every change."""
        path = folder.root
        if directory != ".":
            path = path.rstrip(os.sep) + os.sep + directory.replace("/", os.sep)
        return any(path == level or path.startswith(prefix) for level, prefix in self._prefixes)

    def __post_init__(self) -> None:
        prefixes = tuple((level, level.rstrip(os.sep) + os.sep) for level in self.levels)
        object.__setattr__(self, "_prefixes", prefixes)


def level_of(rel: str) -> str:
    """The level a changed path belongs to: the directory holding the first `.prayu` or
    `.claude` on its way (the ignore file: the root), else its instruction file's level. The
    shallowest candidate, so what it reaches never misses a directory."""
    parts = rel.split("/")
    for index, part in enumerate(parts):
        if part in (PRAYU_DIR, CLAUDE_DIR):
            return "/".join(parts[:index]) or "."
    found = classify(rel)
    return found.level if found is not None else directory_of(rel)


def reach(changes: dict[str, set[str]], folders: Iterable[Folder]) -> Reach:
    """What the changed files (workspace ID -> workspace-relative paths) can reach, as paths
    under every served folder of their workspace (a nested workspace's directories are
    compared by path, so an outer workspace walking into them is reached too)."""
    levels: set[str] = set()
    for folder in folders:
        for rel in changes.get(folder.workspace_id, ()):
            levels.add(folder.path_of(level_of(rel)))
    return Reach(tuple(sorted(levels)))


def _invalidate(reader: FileReader, paths: Sequence[str]) -> None:
    for path in paths:
        reader.invalidate(path)


@contextlib.contextmanager
def _collections_paused() -> Iterator[None]:
    """No cyclic garbage collection while a pass builds the next index: everything the pass
    allocates stays alive (it becomes the index), so the collections its allocations would
    trigger (about a tenth of the pass's time) find nothing. The collection that follows the
    index's installation (`Session.replace_index`) covers what was allocated meanwhile."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _stale_jobs(
    docs: Sequence[OpenDoc], previous: Mapping[DirKey, DirResult], reached: Reach | None
) -> tuple[list[tuple[Folder, str]], list[DirResult]]:
    """The directories of `docs` to discover again (all of them without `reached`, else
    those the changes reach and those not indexed yet), and the kept results of the others."""
    jobs = sorted(
        {(doc.folder, doc.directory) for doc in docs}, key=lambda job: (job[0].uri, job[1])
    )
    if reached is None:
        return jobs, []
    stale: list[tuple[Folder, str]] = []
    kept: list[DirResult] = []
    for folder, directory in jobs:
        result = previous.get((folder.workspace_id, directory))
        if result is None or reached.reaches(folder, directory):
            stale.append((folder, directory))
        else:
            kept.append(result)
    return stale, kept


def _discover_slice(
    jobs: Sequence[tuple[Folder, str]], start: int, reader: FileReader, shared: SharedLevels
) -> tuple[list[DirResult], int]:
    """Discovery for `jobs[start:]` until SLICE_SECONDS have passed; returns the results and
    where the next slice starts."""
    deadline = time.perf_counter() + SLICE_SECONDS
    results: list[DirResult] = []
    index = start
    while index < len(jobs):
        folder, directory = jobs[index]
        results.append(discover_dir(folder, directory, reader, shared))
        index += 1
        if time.perf_counter() >= deadline:
            break
    return results, index


class Refresher:
    def __init__(self, server: RutterServer) -> None:
        self._server = server
        self._pending = _Pending()
        self._task: asyncio.Task[None] | None = None
        self._idle: asyncio.Event | None = None
        self._closed = False

    # -- recording events --------------------------------------------------------------------

    def request(
        self,
        *,
        index: bool = False,
        all_diagnostics: bool = False,
        diagnostics: Iterable[str] = (),
        changes: dict[str, set[str]] | None = None,
        invalidate: Iterable[str] = (),
        runs: bool = False,
        docs: bool = False,
        agents: bool = False,
    ) -> None:
        """`index`: discover every open document's directory again (folders or settings
        changed); `docs`: documents were opened or closed, so the index is rebuilt but only
        directories it does not hold yet are discovered (what the disk says was already
        answered, and every change on disk arrives as `changes`)."""
        if self._closed:
            return
        pending = self._pending
        pending.index |= index
        pending.docs |= docs
        pending.runs |= runs
        pending.agents |= agents
        pending.all_diagnostics |= all_diagnostics
        pending.diagnostics.update(diagnostics)
        pending.invalidate.update(invalidate)
        for workspace_id, paths in (changes or {}).items():
            pending.changes.setdefault(workspace_id, set()).update(paths)
        if pending.empty():
            return
        self._idle_event().clear()
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def wait_idle(self, timeout: float = IDLE_TIMEOUT_SECONDS) -> None:
        """Until every recorded event has been handled (bounded: then answer from what is
        known rather than not at all)."""
        try:
            await asyncio.wait_for(self._idle_event().wait(), timeout)
        except TimeoutError:
            logger.warning(
                "refresh still running after %.0f s; answering from the last index", timeout
            )

    def _idle_event(self) -> asyncio.Event:
        if self._idle is None:
            self._idle = asyncio.Event()
            self._idle.set()
        return self._idle

    # -- the refresh task --------------------------------------------------------------------

    async def _run(self) -> None:
        try:
            while not self._pending.empty():
                await asyncio.sleep(self._pending.debounce())
                pending, self._pending = self._pending, _Pending()
                try:
                    await self._apply(pending)
                except Exception:  # keep serving: the next event retries
                    logger.exception("refresh failed")
        finally:
            self._task = None
            self._idle_event().set()

    def close(self) -> None:
        """Stop refreshing (shutdown): the running round is cancelled, waiters released."""
        self._closed = True
        if self._task is not None:
            self._task.cancel()
        self._idle_event().set()

    async def _apply(self, pending: _Pending) -> None:
        server = self._server
        if not server.session.ready.is_set():
            await server.session.ready.wait()
        if pending.invalidate:
            # A file saved moments ago is read once it has settled: the worker waits for that on
            # the event loop, between attempts of the job that met it, so requests go on.
            await server.session.worker.run(
                _invalidate, server.session.reader, sorted(pending.invalidate)
            )
        rebuild = pending.index or pending.all_diagnostics or pending.docs or bool(pending.changes)
        docs = server.open_docs()
        if rebuild:
            reached = (
                None
                if pending.index or pending.all_diagnostics
                else reach(pending.changes, server.session.folders.values())
            )
            server.session.replace_index(await self._rebuild(docs, reached))
        changes = MappingProxyType({ws: frozenset(paths) for ws, paths in pending.changes.items()})
        round = RefreshRound(
            docs=tuple(docs), rebuilt=rebuild, index=pending.index,
            all_diagnostics=pending.all_diagnostics, changes=changes, runs=pending.runs,
            agents=pending.agents, diagnostics=frozenset(pending.diagnostics),
        )  # fmt: skip
        # Features bring what they derive up to date first (run drift), then tell the client,
        # in the order of the feature list (diagnostics before the notifications).
        forced: frozenset[str] = frozenset()
        for feature in server.features:
            forced |= await feature.refresh(round)
        round = dataclasses.replace(round, forced=forced)
        for feature in server.features:
            await feature.refreshed(round)

    async def _rebuild(self, docs: Sequence[OpenDoc], reached: Reach | None = None) -> Index:
        """The index of `docs`: every directory discovered again, or with `reached` (what the
        changed files can reach) only those directories; the others keep their results."""
        server = self._server
        # Which directories to walk is worked out on the worker too: it is a pass over every
        # open document, and the event loop keeps answering meanwhile.
        jobs, results = await server.session.worker.run_background(
            _stale_jobs, docs, server.session.index.dirs, reached
        )
        shared = SharedLevels()  # one pass: the levels directories have in common, walked once
        with _collections_paused():
            start = 0
            while start < len(jobs):
                found, start = await server.session.worker.run_background(
                    _discover_slice, jobs, start, server.session.reader, shared
                )
                results.extend(found)
            return await server.session.worker.run_background(build_index, results, list(docs))

    def publish(self, uri: str, found: list[types.Diagnostic]) -> None:
        server = self._server
        server.session.published[uri] = found
        server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=found)
        )

    def clear(self, uri: str) -> None:
        """Withdraw pushed diagnostics (document closed, folder no longer served)."""
        if self._server.session.published.pop(uri, None) is not None:
            self._server.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
            )
