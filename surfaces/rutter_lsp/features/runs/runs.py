"""Runs in the editor: the run requests, drift diagnostics, and the reviewed refresh.

Requests (params are JSON objects; failures are JSON-RPC errors whose `data` is the typed
error, see `rutter_lsp.errors`):

- `rutter/runs` `{"workspace_id"?}`: `{"runs": [run + {"stale", "live_error"?}]}`, the active
  runs of that workspace, else of every served workspace;
- `rutter/runInstructions` `{"run_id"}`: the inspection (contract section 6);
- `rutter/confirmRefresh` `{"run_id", "expected_fingerprint", "expected_live_fingerprint"}`:
  the inspection after the call plus `"refreshed"`.

The same as commands (`rutter.runs`, `rutter.runInstructions`, `rutter.confirmRefresh`, one
object argument), plus `rutter.reviewRefresh` `[run_id]`, the code action's command: it shows
the person the diff (a generated review document through `window/showDocument` where the
client can show documents, and always a `window/showMessageRequest` summary with
Confirm/Cancel), and only on Confirm appends the new revision, bound to the two fingerprints
captured when the review was shown. If the disk changed in between, the store refuses
(`conflict`) and the person is told to review again.

`RunsMonitor` keeps the drift of the active runs of the served workspaces. It re-inspects
them when the store changes (another process created or refreshed a run: noticed through
`StoreChanges`, polled every `POLL_SECONDS` on the disk worker) and when instruction files
change; the refresher then republishes the drift diagnostics with the others and sends
`rutter/runsChanged` `{"workspace_ids"}` when a run appeared, ended, was refreshed or went
stale, so run lists in editors update without polling.
"""

from __future__ import annotations

import asyncio
import difflib
import logging
import os
import posixpath
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from lsprotocol import types

from rutter_core.app.runs import confirm_refresh_command
from rutter_core.discovery.fsread import FileReader
from rutter_core.discovery.walk import CLAUDE_DIR, PRAYU_DIR
from rutter_core.kernel.errors import ConflictError, RejectedError, RutterError
from rutter_core.runs.service import NO_REVISION, RunRecord, confirm_refresh, inspect_run, list_runs
from rutter_core.store import Store, resolve_data_home
from rutter_core.store.changes import StoreChanges
from rutter_lsp.dispatch import invalid_params, mapped, object_params, on_worker, ready_store
from rutter_lsp.errors import jsonrpc_error
from rutter_lsp.features.runs.drift import DRIFT_CODE, DocumentRef, RunDrift, findings_of, place
from rutter_lsp.index.paths import classify, uri_of_path
from rutter_lsp.settings import plain

if TYPE_CHECKING:
    from rutter_lsp.index.analysis import OpenDoc
    from rutter_lsp.server import RutterServer

logger = logging.getLogger("rutter_lsp")

RUNS: Final = "rutter/runs"
RUNS_CHANGED: Final = "rutter/runsChanged"
"""Notification `{"workspace_ids"}`: runs were created, ended or refreshed, or went stale."""
RUN_INSTRUCTIONS: Final = "rutter/runInstructions"
CONFIRM_REFRESH: Final = "rutter/confirmRefresh"
COMMAND_RUNS: Final = "rutter.runs"
COMMAND_RUN_INSTRUCTIONS: Final = "rutter.runInstructions"
COMMAND_CONFIRM_REFRESH: Final = "rutter.confirmRefresh"
COMMAND_REVIEW_REFRESH: Final = "rutter.reviewRefresh"
ACTOR: Final = "lsp"
POLL_SECONDS: Final = 0.5
MAX_MONITORED_RUNS: Final = 100
"""Active runs whose drift is shown (the newest); more are listed but not diagnosed."""
CONFIRM: Final = "Confirm refresh"
CANCEL: Final = "Cancel"
REVIEW_DIRECTORY: Final = "reviews"
MAX_SUMMARY_PATHS: Final = 8


# -- worker jobs (pure over the store and the disk) -------------------------------------------


def _active_runs(store: Store, workspace_ids: Sequence[str] | None) -> list[RunRecord]:
    runs = list_runs(store, active_only=True)
    if workspace_ids is not None:
        wanted = set(workspace_ids)
        runs = [run for run in runs if run.workspace_id in wanted]
    return runs


def _drift_of(store: Store, run: RunRecord, reader: FileReader) -> RunDrift | None:
    try:
        inspection = inspect_run(store, run.run_id, reader=reader).to_json()
    except RutterError as error:  # e.g. a tampered revision: shown in rutter/runs
        logger.warning("cannot inspect run %s: %s", run.run_id, error.message)
        return None
    return findings_of(inspection, run.workspace_id, run.target_path)


def _listing_entry(store: Store, run: RunRecord, reader: FileReader) -> dict[str, Any]:
    entry = run.to_json()
    try:
        inspection = inspect_run(store, run.run_id, reader=reader).to_json()
    except RutterError as error:  # e.g. a tampered revision: show nothing of it as current
        entry["stale"] = False
        entry["fingerprint"] = None
        entry["error"] = error.to_json()
        return entry
    entry["stale"] = bool(inspection["stale"])
    live = inspection.get("live")
    if isinstance(live, dict) and isinstance(live.get("error"), dict):
        entry["live_error"] = live["error"]
    entry["live_fingerprint"] = live.get("fingerprint") if isinstance(live, dict) else None
    return entry


def _confirm(
    store: Store, run_id: str, expected: str, expected_live: str, reader: FileReader
) -> dict[str, Any]:
    inspection, refreshed = confirm_refresh(
        store,
        run_id,
        reader=reader,
        expected_fingerprint=expected,
        expected_live_fingerprint=expected_live,
        actor=ACTOR,
    )
    return {**inspection.to_json(), "refreshed": refreshed}


# -- review documents ------------------------------------------------------------------------


def review_text(inspection: Mapping[str, Any]) -> str:
    """The review a person reads before confirming: what changed, file by file."""
    run_id = inspection["run_id"]
    revision = inspection.get("revision")
    diff = inspection.get("diff") or {}
    pinned = inspection.get("pinned") or {}
    live = inspection.get("live") or {}
    next_revision = 1 if revision is None else revision + 1
    lines = [
        f"# Review: refresh run {run_id} to revision {next_revision}",
        "",
        f"Pinned revision: {revision if revision is not None else 'none'} "
        f"(fingerprint `{diff.get('from_fingerprint')}`)",
        f"Instructions on disk now: fingerprint `{diff.get('to_fingerprint')}`",
        "",
        "Nothing changes until you confirm. If the files change again before you do, the "
        "refresh is refused and you review again.",
        "",
    ]
    for title, key in (("Added", "added"), ("Removed", "removed"), ("Changed", "changed")):
        paths = diff.get(key) or []
        if paths:
            lines.append(f"## {title}")
            lines.extend(f"- `{path}`" for path in paths)
            lines.append("")
    if diff.get("order_changed"):
        lines += ["The order of the instruction files changed.", ""]
    if diff.get("ignored_changed"):
        lines += ["The ignored entries changed.", ""]
    pinned_sources = {s["path"]: s for s in pinned.get("sources", [])}
    live_sources = {s["path"]: s for s in live.get("sources", [])}
    for path in [*diff.get("changed", []), *diff.get("added", []), *diff.get("removed", [])]:
        before = str(pinned_sources.get(path, {}).get("content", ""))
        after = str(live_sources.get(path, {}).get("content", ""))
        delta = difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=f"pinned/{path}",
            tofile=f"disk/{path}",
        )
        body = "".join(line if line.endswith("\n") else line + "\n" for line in delta)
        lines += [f"### {path}", "", "```diff", body.rstrip("\n"), "```", ""]
    return "\n".join(lines)


def review_summary(inspection: Mapping[str, Any]) -> str:
    """The review in one message (clients that cannot show documents get only this)."""
    diff = inspection.get("diff") or {}
    revision = inspection.get("revision")
    parts = []
    for key in ("added", "removed", "changed"):
        paths = list(diff.get(key) or [])
        if paths:
            shown = ", ".join(paths[:MAX_SUMMARY_PATHS])
            more = len(paths) - MAX_SUMMARY_PATHS
            parts.append(f"{key}: {shown}" + (f" and {more} more" if more > 0 else ""))
    if diff.get("order_changed"):
        parts.append("order changed")
    if diff.get("ignored_changed"):
        parts.append("ignored entries changed")
    next_revision = 1 if revision is None else revision + 1
    return (
        f"rutter: refresh run {inspection['run_id']} to the instructions on disk "
        f"(revision {next_revision})? " + "; ".join(parts or ["no file-level change"])
    )


def write_review(home: Path, inspection: Mapping[str, Any]) -> Path:
    """Write the review document (private to the user) and return its path."""
    directory = home / REVIEW_DIRECTORY
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    revision = inspection.get("revision")
    name = f"{inspection['run_id']}-revision-{revision if revision is not None else 0}.md"
    path = directory / name
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(review_text(inspection))
    return path


# -- the monitor -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Watch:
    store: Store
    changes: StoreChanges


class RunsMonitor:
    """Drift of the active runs of the served workspaces (event loop only)."""

    def __init__(self, server: RutterServer) -> None:
        self._server = server
        self.drifts: tuple[RunDrift, ...] = ()
        self.placed: dict[str, list[types.Diagnostic]] = {}
        self._watch: _Watch | None = None
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._poll())

    def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None
        watch, self._watch = self._watch, None
        if watch is not None:
            watch.changes.close()

    async def _poll(self) -> None:
        server = self._server
        while True:
            await asyncio.sleep(POLL_SECONDS)
            store = server.store
            if store is None or not server.folders:
                continue
            watch = self._watch
            if watch is None or watch.store is not store:
                if watch is not None:
                    await server.worker.run(watch.changes.close)
                watch = self._watch = _Watch(store, StoreChanges(store))
            try:
                changed = await server.worker.run(watch.changes.poll)
            except Exception as error:  # the store went away; the next tick retries
                logger.debug("store change poll failed: %s", error)
                continue
            if changed:
                server.refresher.request(runs=True)

    async def reinspect(self, changed: Mapping[str, set[str]] | None = None) -> list[str]:
        """Inspect the active runs of the served workspaces again; returns the workspaces
        whose runs changed (created, ended, refreshed, went stale or back).

        `changed`: the instruction paths that changed on disk, by workspace; only runs whose
        target those paths can reach are inspected again, the others keep their drift. None
        (the store or the settings changed): every run is inspected again.
        """
        server = self._server
        store = server.store
        before = self.drifts
        known = {drift.run_id: drift for drift in before}
        drifts: tuple[RunDrift, ...] = ()
        if store is not None:
            workspace_ids = sorted({folder.workspace_id for folder in server.folders.values()})
            try:
                active = await server.worker.run_background(_active_runs, store, workspace_ids)
                found: list[RunDrift | None] = []
                for run in active[-MAX_MONITORED_RUNS:]:  # the newest (oldest first)
                    kept = known.get(run.run_id)
                    if kept is not None and changed is not None and not reaches(changed, run):
                        found.append(kept)
                        continue
                    # One background job per run: requests go first.
                    found.append(
                        await server.worker.run_background(_drift_of, store, run, server.reader)
                    )
                drifts = tuple(drift for drift in found if drift is not None)
            except RutterError as error:
                logger.warning("cannot read runs: %s", error.message)
            except Exception:  # a bug here must not stop the instruction diagnostics
                logger.exception("cannot inspect the active runs")
        self.drifts = drifts
        return changed_workspaces(before, drifts)

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


def reaches(changed: Mapping[str, set[str]], run: RunRecord) -> bool:
    """Whether a change of any of `changed` (by workspace) can change `run`'s instructions."""
    target = run.target_path
    for rel in changed.get(run.workspace_id, ()):
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


# -- handlers --------------------------------------------------------------------------------


def _string(params: Mapping[str, Any], key: str) -> str:
    value = params.get(key)
    if not isinstance(value, str) or not value:
        raise invalid_params(f"{key!r} is required and must be a non-empty string")
    return value


async def runs_request(server: RutterServer, params: Any) -> dict[str, Any]:
    data = object_params(params)
    store = await ready_store(server)
    workspace_id = data.get("workspace_id")
    if workspace_id is not None and not isinstance(workspace_id, str):
        raise invalid_params("'workspace_id' must be a string")
    ids = (
        [workspace_id]
        if workspace_id is not None
        else sorted({folder.workspace_id for folder in server.folders.values()})
    )
    active = await on_worker(server, lambda: _active_runs(store, ids))
    # One job per run: other requests go between them on the worker.
    listed = [  # `_listing_entry` reports a run's own failure in its entry
        await server.worker.run(_listing_entry, store, run, server.reader) for run in active
    ]
    return {"runs": listed}


async def run_instructions_request(server: RutterServer, params: Any) -> dict[str, Any]:
    run_id = _string(object_params(params), "run_id")
    store = await ready_store(server)
    return await on_worker(
        server, lambda: inspect_run(store, run_id, reader=server.reader).to_json()
    )


async def confirm_request(server: RutterServer, params: Any) -> dict[str, Any]:
    data = object_params(params)
    run_id = _string(data, "run_id")
    expected = data.get("expected_fingerprint")
    if not isinstance(expected, str):
        raise invalid_params(
            "'expected_fingerprint' is required: the pinned fingerprint you reviewed "
            '("" for a run with no revision yet)'
        )
    expected_live = _string(data, "expected_live_fingerprint")
    try:
        return await _confirmed(server, run_id, expected, expected_live)
    except RutterError as error:
        raise jsonrpc_error(error) from error


async def _confirmed(
    server: RutterServer, run_id: str, expected: str, expected_live: str
) -> dict[str, Any]:
    """Confirm on the disk worker; typed failures are raised as they are."""
    store = await ready_store(server)
    result = await server.worker.run(
        _confirm, store, run_id, expected, expected_live, server.reader
    )
    if result.get("refreshed"):
        server.refresher.request(runs=True)
    return result


async def review_refresh(server: RutterServer, run_id: str) -> dict[str, Any]:
    """The code action's flow: show the diff, ask, and confirm only what was shown."""
    inspection = await run_instructions_request(server, {"run_id": run_id})
    live = inspection.get("live")
    if isinstance(live, dict) and isinstance(live.get("error"), dict):
        error = live["error"]
        server.notify_user(
            f"run {run_id} cannot be refreshed: discovery fails closed now "
            f"({error.get('code')}: {error.get('message')}); fix the instruction files first",
            types.MessageType.Error,
        )
        return {**inspection, "refreshed": False, "confirmed": False}
    if not inspection.get("stale"):
        server.notify_user(
            f"run {run_id} already uses the instructions on disk; nothing to refresh",
            types.MessageType.Info,
        )
        return {**inspection, "refreshed": False, "confirmed": False}
    diff = inspection["diff"]
    expected = diff.get("from_fingerprint") or NO_REVISION
    expected_live = str(diff["to_fingerprint"])
    if not server.supports("window.show_message"):
        raise jsonrpc_error(
            RejectedError(
                "confirmation_unavailable",
                "this editor cannot ask for a confirmation; refresh from the command line: "
                + confirm_refresh_command(run_id, expected or None, expected_live),
            )
        )
    if server.supports("window.show_document.support"):
        home = resolve_data_home(os.environ)
        path = await server.worker.run(write_review, home, inspection)
        await server.window_show_document_async(
            types.ShowDocumentParams(uri=uri_of_path(str(path)), take_focus=True)
        )
    answer = await server.window_show_message_request_async(
        types.ShowMessageRequestParams(
            type=types.MessageType.Warning,
            message=review_summary(inspection),
            actions=[types.MessageActionItem(title=CONFIRM), types.MessageActionItem(CANCEL)],
        )
    )
    if answer is None or answer.title != CONFIRM:
        return {**inspection, "refreshed": False, "confirmed": False}
    try:
        result = await _confirmed(server, run_id, expected, expected_live)
    except ConflictError as error:
        server.notify_user(
            f"run {run_id} was not refreshed: the instructions changed again after the "
            "review was shown (or someone else refreshed the run); review them again",
            types.MessageType.Error,
        )
        raise jsonrpc_error(error) from error
    except RutterError as error:
        server.notify_user(
            f"run {run_id} was not refreshed: {error.message}", types.MessageType.Error
        )
        raise jsonrpc_error(error) from error
    revision = result.get("revision")
    server.notify_user(
        f"run {run_id} now uses revision {revision} of its instructions", types.MessageType.Info
    )
    return {**result, "confirmed": True}


def code_actions(
    server: RutterServer, uri: str, first: Collection[str] = ()
) -> list[types.CodeAction]:
    """One review action per stale run shown on `uri`; the runs in `first` (those of the
    diagnostics the client asked about) come first."""
    actions = []
    drifts = sorted(server.runs.runs_for(uri), key=lambda drift: drift.run_id not in first)
    for drift in drifts:
        matching = [
            diagnostic
            for diagnostic in server.runs.for_uri(uri)
            if isinstance(diagnostic.data, dict) and diagnostic.data.get("run_id") == drift.run_id
        ]
        actions.append(
            types.CodeAction(
                title=f"Review and confirm refresh for run {drift.run_id}",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=matching,
                is_preferred=True,
                command=types.Command(
                    title=f"Review and confirm refresh for run {drift.run_id}",
                    command=COMMAND_REVIEW_REFRESH,
                    arguments=[drift.run_id],
                ),
            )
        )
    return actions


def register(server: RutterServer) -> None:
    @server.feature(RUNS)
    async def runs(params: Any) -> dict[str, Any]:
        return await mapped(lambda: runs_request(server, params))

    @server.feature(RUN_INSTRUCTIONS)
    async def run_instructions(params: Any) -> dict[str, Any]:
        return await mapped(lambda: run_instructions_request(server, params))

    @server.feature(CONFIRM_REFRESH)
    async def confirm(params: Any) -> dict[str, Any]:
        return await mapped(lambda: confirm_request(server, params))

    @server.command(COMMAND_RUNS)
    async def runs_command(ls: Any, *args: Any) -> dict[str, Any]:
        return await mapped(lambda: runs_request(server, list(args)))

    @server.command(COMMAND_RUN_INSTRUCTIONS)
    async def run_instructions_command(ls: Any, *args: Any) -> dict[str, Any]:
        return await mapped(lambda: run_instructions_request(server, _run_argument(args)))

    @server.command(COMMAND_CONFIRM_REFRESH)
    async def confirm_command(ls: Any, *args: Any) -> dict[str, Any]:
        return await mapped(lambda: confirm_request(server, list(args)))

    @server.command(COMMAND_REVIEW_REFRESH)
    async def review_command(ls: Any, *args: Any) -> dict[str, Any]:
        return await mapped(lambda: review_refresh(server, _string(_run_argument(args), "run_id")))

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    async def code_action(params: types.CodeActionParams) -> list[types.CodeAction] | None:
        await server.ready.wait()
        await server.refresher.wait_idle()
        wanted = [
            diagnostic for diagnostic in params.context.diagnostics if diagnostic.code == DRIFT_CODE
        ]
        only = params.context.only
        if only and not any(str(kind).startswith("quickfix") for kind in only):
            return None
        ids = {str(d.data.get("run_id")) for d in wanted if isinstance(d.data, dict)}
        return code_actions(server, params.text_document.uri, ids) or None


def _run_argument(args: Sequence[Any]) -> dict[str, Any]:
    """`[run_id]` or `[{"run_id": ...}]`."""
    values = [plain(arg) for arg in args]
    if len(values) == 1 and isinstance(values[0], str):
        return {"run_id": values[0]}
    return object_params(values)
