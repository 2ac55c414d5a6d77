"""The reviewed refresh in the editor: `rutter.reviewRefresh` `[run_id]`, the drift code
action's command.

It shows the person the diff (a generated review document through `window/showDocument` where
the client can show documents, and always a `window/showMessageRequest` summary with
Confirm/Cancel), and only on Confirm appends the new revision, bound to the two fingerprints
captured when the review was shown. If the disk changed in between, the store refuses
(`conflict`) and the person is told to review again.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from lsprotocol import types

from rutter_core.app.runs import (
    NO_REVISION,
    ConfirmRefreshParams,
    InspectRunParams,
    LiveFailure,
    ReviewedRefresh,
    RunInspection,
    confirm_refresh_command,
)
from rutter_core.kernel.errors import ConflictError, RejectedError, RutterError
from rutter_core.store import resolve_data_home
from rutter_lsp.dispatch import custom_command
from rutter_lsp.features.runs.requests import as_json, confirm, inspect, run_argument
from rutter_lsp.index.paths import uri_of_path

if TYPE_CHECKING:
    from rutter_lsp.features.runs.monitor import RunsMonitor
    from rutter_lsp.server import RutterServer

COMMAND_REVIEW_REFRESH: Final = "rutter.reviewRefresh"
CONFIRM: Final = "Confirm refresh"
CANCEL: Final = "Cancel"
REVIEW_DIRECTORY: Final = "reviews"
MAX_SUMMARY_PATHS: Final = 8


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


async def review_refresh(server: RutterServer, params: InspectRunParams) -> dict[str, Any]:
    """The code action's flow: show the diff, ask, and confirm only what was shown."""
    run_id = params.run_id
    reviewed = await inspect(server, params)
    if isinstance(reviewed.live, LiveFailure):
        failure = reviewed.live
        server.notify_user(
            f"run {run_id} cannot be refreshed: discovery fails closed now "
            f"({failure.code}: {failure.message}); fix the instruction files first",
            types.MessageType.Error,
        )
        return await _answer(server, reviewed, confirmed=False)
    if not reviewed.stale:
        server.notify_user(
            f"run {run_id} already uses the instructions on disk; nothing to refresh",
            types.MessageType.Info,
        )
        return await _answer(server, reviewed, confirmed=False)
    # What the person is shown is what a Confirm binds to.
    expected = reviewed.pinned_fingerprint or NO_REVISION
    expected_live = str(reviewed.live_fingerprint)
    if not server.supports("window.show_message"):
        raise RejectedError(
            "confirmation_unavailable",
            "this editor cannot ask for a confirmation; refresh from the command line: "
            + confirm_refresh_command(
                run_id, expected or None, expected_live, workspace_id=params.workspace_id
            ),
        )
    inspection = await as_json(server, reviewed)
    if server.supports("window.show_document.support"):
        home = resolve_data_home(os.environ)
        path = await server.session.worker.run(write_review, home, inspection)
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
        return await _answer(server, reviewed, confirmed=False)
    request = ConfirmRefreshParams(
        run_id=run_id,
        expected_fingerprint=expected,
        expected_live_fingerprint=expected_live,
        workspace_id=params.workspace_id,
    )
    try:
        confirmed = await confirm(server, request)
    except ConflictError:
        server.notify_user(
            f"run {run_id} was not refreshed: the instructions changed again after the "
            "review was shown (or someone else refreshed the run); review them again",
            types.MessageType.Error,
        )
        raise
    except RutterError as error:
        server.notify_user(
            f"run {run_id} was not refreshed: {error.message}", types.MessageType.Error
        )
        raise
    server.notify_user(
        f"run {run_id} now uses revision {confirmed.revision} of its instructions",
        types.MessageType.Info,
    )
    return await _answer(server, confirmed, refreshed=confirmed.refreshed, confirmed=True)


async def _answer(
    server: RutterServer,
    inspection: RunInspection,
    *,
    confirmed: bool,
    refreshed: bool = False,
) -> dict[str, Any]:
    """The flow's answer: the inspection, whether a revision was appended, whether the person
    confirmed."""
    document = ReviewedRefresh.of(inspection, refreshed=refreshed, confirmed=confirmed)
    return await server.session.worker.run(document.to_json)


def code_actions(
    monitor: RunsMonitor, uri: str, first: Collection[str] = ()
) -> list[types.CodeAction]:
    """One review action per stale run shown on `uri`; the runs in `first` (those of the
    diagnostics the client asked about) come first."""
    actions = []
    drifts = sorted(monitor.runs_for(uri), key=lambda drift: drift.run_id not in first)
    for drift in drifts:
        matching = [
            diagnostic
            for diagnostic in monitor.for_uri(uri)
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
                    arguments=[drift.run_id]
                    if drift.made_through is None
                    else [{"run_id": drift.run_id, "workspace_id": drift.workspace_id}],
                ),
            )
        )
    return actions


def register(server: RutterServer) -> None:
    @custom_command(server, COMMAND_REVIEW_REFRESH, InspectRunParams, command_params=run_argument)
    async def review_command(server: RutterServer, params: InspectRunParams) -> dict[str, Any]:
        return await review_refresh(server, params)
