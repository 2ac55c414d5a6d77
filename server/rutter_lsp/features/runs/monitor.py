"""`RunsMonitor`: the drift of the active runs of the served workspaces' projects, kept for the
editor.

A run made through another registration of a served workspace's project (another path on this
machine, or another machine sharing the store) is followed too, its drift computed against the
files of the served registration (`RunOperations.followed` says which) and shown there.

It re-inspects them when the store changes (another process created or refreshed a run:
noticed through the session's `StoreWatch`, which calls `store_changed`) and when
instruction files change; the refresher then republishes the drift diagnostics with the others
and sends `rutter/runsChanged` `{"workspace_ids"}` when a run appeared, ended, was refreshed or
went stale, so run lists in editors update without polling.
"""

from __future__ import annotations

import logging
import posixpath
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from lsprotocol import types

from rutter_core.app.runs import InspectRunParams, RunOperations, RunRecord
from rutter_core.discovery.layout import CLAUDE_DIR, PRAYU_DIR
from rutter_core.kernel.errors import RutterError
from rutter_core.store.changes import StoreChanges
from rutter_lsp.features.runs.drift import DocumentRef, RunDrift, findings_of, place
from rutter_lsp.index.paths import classify

if TYPE_CHECKING:
    from rutter_core.app.facade import Rutter
    from rutter_lsp.index.analysis import OpenDoc
    from rutter_lsp.server import RutterServer

logger = logging.getLogger("rutter_lsp")

RUNS_CHANGED: Final = "rutter/runsChanged"
"""Notification `{"workspace_ids"}`: runs were created, ended or refreshed, or went stale."""
MAX_MONITORED_RUNS: Final = 100
"""Active runs whose drift is shown (the newest); more are listed but not diagnosed."""


Followed = tuple[RunRecord, str]
"""An active run and the served workspace whose files its drift is computed against."""


def _drift_of(runs: RunOperations, run: RunRecord, local: str) -> RunDrift | None:
    """One run's drift against `local`'s files (a job for the disk worker)."""
    own = local == run.workspace_id
    params = InspectRunParams(run_id=run.run_id, workspace_id=None if own else local)
    try:
        inspection = runs.inspect(params).to_json()
    except RutterError as error:  # e.g. a tampered revision: shown in rutter/runs
        logger.warning("cannot inspect run %s: %s", run.run_id, error.message)
        return None
    return findings_of(
        inspection, local, run.target_path, made_through=None if own else run.workspace_id
    )


class RunsMonitor:
    """Drift of the active runs of the served workspaces (event loop only)."""

    def __init__(self, server: RutterServer) -> None:
        self._server = server
        self.drifts: tuple[RunDrift, ...] = ()
        self.placed: dict[str, list[types.Diagnostic]] = {}
        self._active: tuple[object, frozenset[str], tuple[Followed, ...]] | None = None
        """The active runs as last read: (app, served workspaces, runs). Only a commit, a new
        store or a new served set changes them: a change on disk reuses them unless the store
        was committed to since they were read (`_commits`)."""
        self._commits: tuple[object, StoreChanges] | None = None
        """The store's change feed as of the last read of the active runs: a run the CLI
        created just before a file changed is seen at once, not at the store watch's next
        tick (which is when the cache would otherwise learn of it)."""

    async def store_changed(self, changed: bool) -> None:
        """A tick of the session's store watch: after a commit, inspect the runs again."""
        if changed:
            # The folders feature, subscribed before, follows a workspace moved to a served
            # folder first (docs/reference/workspaces.md).
            self._server.refresher.request(runs=True)

    async def reinspect(self, changed: Mapping[str, Collection[str]] | None = None) -> list[str]:
        """Inspect the active runs of the served workspaces again; returns the workspaces
        whose runs changed (created, ended, refreshed, went stale or back).

        `changed`: the instruction paths that changed on disk, by workspace; only runs whose
        target those paths can reach are inspected again, the others keep their drift. None
        (the store or the settings changed): every run is inspected again.
        """
        server = self._server
        app = server.session.app
        before = self.drifts
        known = {drift.run_id: drift for drift in before}
        drifts: tuple[RunDrift, ...] = ()
        if app is not None:
            runs = app.runs
            served = frozenset(folder.workspace_id for folder in server.session.folders.values())
            try:
                cached = self._active
                if (
                    changed is not None
                    and cached is not None
                    and cached[0] is app
                    and cached[1] == served
                    and not await self._committed_since(app)
                ):
                    active = cached[2]
                else:
                    self._active = None  # not kept if the read fails
                    await self._committed_since(app)  # the feed's mark, before the read
                    active = await server.session.worker.run_background(
                        runs.followed, served=served
                    )
                    self._active = (app, served, active)
                found: list[RunDrift | None] = []
                for run, local in active[-MAX_MONITORED_RUNS:]:  # the newest (oldest first)
                    kept = known.get(run.run_id)
                    if (
                        kept is not None
                        and kept.workspace_id == local
                        and changed is not None
                        and not reaches(changed, run, local)
                    ):
                        found.append(kept)
                        continue
                    # One background job per run: requests go first.
                    found.append(
                        await server.session.worker.run_background(_drift_of, runs, run, local)
                    )
                drifts = tuple(drift for drift in found if drift is not None)
            except RutterError as error:
                logger.warning("cannot read runs: %s", error.message)
            except Exception:  # a bug here must not stop the instruction diagnostics
                logger.exception("cannot inspect the active runs")
        self.drifts = drifts
        return changed_workspaces(before, drifts)

    async def _committed_since(self, app: Rutter) -> bool:
        """Whether anyone committed to `app`'s store since the previous call (True the first
        time, or on a new store)."""
        commits = self._commits
        if commits is None or commits[0] is not app:
            if commits is not None:
                await self._server.session.worker.run_background(commits[1].close)
            commits = self._commits = (app, StoreChanges(app.store))
        return await self._server.session.worker.run_background(commits[1].poll)

    def close(self) -> None:
        """Let go of the change feed's connection (the server is shutting down)."""
        commits, self._commits = self._commits, None
        if commits is not None:
            commits[1].close()

    def replace(self, docs: Sequence[OpenDoc]) -> set[str]:
        """Place the drift on the open documents; returns the URIs whose drift changed."""
        server = self._server
        wanted = {(drift.workspace_id, path) for drift in self.drifts for path in _paths(drift)}
        refs: dict[tuple[str, str], DocumentRef] = {}
        for doc in docs:
            key = (doc.folder.workspace_id, doc.rel)
            if key in wanted:
                refs[key] = DocumentRef(
                    doc.uri,
                    doc.folder.workspace_id,
                    doc.rel,
                    server.buffer(doc.uri) or "",
                )
        placed = place(self.drifts, refs, server.position_encoding)
        changed = {
            uri for uri in set(placed) | set(self.placed) if placed.get(uri) != self.placed.get(uri)
        }
        self.placed = placed
        return changed

    def for_uri(self, uri: str) -> list[types.Diagnostic]:
        return self.placed.get(uri, [])

    def runs_for(self, uri: str) -> list[RunDrift]:
        """The stale runs whose drift is shown on `uri`."""
        ids = {
            diagnostic.data["run_id"]
            for diagnostic in self.placed.get(uri, [])
            if isinstance(diagnostic.data, dict)
        }
        return [drift for drift in self.drifts if drift.run_id in ids]


def level_of_change(rel: str) -> str:
    """The directory below which a change of `rel` can change what discovery delivers.

    An instruction file's level (its scope); for anything else the watchers report (a
    directory inside `.prayu` or a `.claude` directory, created or deleted), the level that
    holds it; conservatively the parent directory otherwise.
    """
    file = classify(rel)
    if file is not None:
        return file.level
    parts = rel.split("/")
    for index, part in enumerate(parts):
        if part in (PRAYU_DIR, CLAUDE_DIR):
            return "/".join(parts[:index]) or "."
    return posixpath.dirname(rel) or "."


def reaches(
    changed: Mapping[str, Collection[str]], run: RunRecord, local: str | None = None
) -> bool:
    """Whether a change of any of `changed` (by workspace) can change `run`'s instructions as
    discovered in `local`'s files (default: its own workspace's)."""
    target = run.target_path
    for rel in changed.get(local or run.workspace_id, ()):
        level = level_of_change(rel)
        if level in (".", target) or target.startswith(level + "/"):
            return True
    return False


def changed_workspaces(before: Sequence[RunDrift], after: Sequence[RunDrift]) -> list[str]:
    """Workspaces whose set of active runs, or a run's revision or staleness, differs."""

    def signatures(drifts: Sequence[RunDrift]) -> dict[str, set[tuple[Any, ...]]]:
        found: dict[str, set[tuple[Any, ...]]] = {}
        for drift in drifts:
            found.setdefault(drift.workspace_id, set()).add(
                (drift.run_id, drift.revision, drift.stale, drift.live_error)
            )
        return found

    old, new = signatures(before), signatures(after)
    return sorted(key for key in set(old) | set(new) if old.get(key) != new.get(key))


def _paths(drift: RunDrift) -> set[str]:
    return {drift.target, *drift.stack, *(finding.path for finding in drift.findings)}
