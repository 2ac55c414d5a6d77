"""Runs in the editor: the run requests, drift diagnostics, and the reviewed refresh.

- `requests`: `rutter/runs`, `rutter/runInstructions`, `rutter/confirmRefresh` and their
  command twins, over the app's run operations;
- `review`: `rutter.reviewRefresh`, the drift code action's command: the person sees the diff
  and confirms, or nothing changes;
- `monitor`: `RunsMonitor`, the drift of the active runs of the served workspaces, which the
  refresher publishes as diagnostics (`drift`) and announces with `rutter/runsChanged`.

This module registers them and keeps the names the server imports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from rutter_lsp.features.runs import requests, review
from rutter_lsp.features.runs.drift import DRIFT_CODE
from rutter_lsp.features.runs.monitor import RUNS_CHANGED, RunsMonitor
from rutter_lsp.features.runs.requests import CONFIRM_REFRESH, RUN_INSTRUCTIONS, RUNS
from rutter_lsp.features.runs.review import code_actions

if TYPE_CHECKING:
    from rutter_lsp.server import RutterServer

__all__ = [
    "CONFIRM_REFRESH",
    "RUNS",
    "RUNS_CHANGED",
    "RUN_INSTRUCTIONS",
    "RunsMonitor",
    "register",
]


def register(server: RutterServer) -> None:
    server.session.store_watch.subscribe(server.runs.store_changed)
    requests.register(server)
    review.register(server)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    async def code_action(params: types.CodeActionParams) -> list[types.CodeAction] | None:
        await server.session.ready.wait()
        await server.refresher.wait_idle()
        wanted = [
            diagnostic for diagnostic in params.context.diagnostics if diagnostic.code == DRIFT_CODE
        ]
        only = params.context.only
        if only and not any(str(kind).startswith("quickfix") for kind in only):
            return None
        ids = {str(d.data.get("run_id")) for d in wanted if isinstance(d.data, dict)}
        return code_actions(server, params.text_document.uri, ids) or None
