"""Runs in the editor: the run requests, drift diagnostics, and the reviewed refresh.

- `requests`: `rutter/runs`, `rutter/runInstructions`, `rutter/confirmRefresh` and their
  command twins, over the app's run operations;
- `review`: `rutter.reviewRefresh`, the drift code action's command: the person sees the diff
  and confirms, or nothing changes;
- `monitor`: `RunsMonitor`, the drift of the active runs of the served workspaces, which the
  feature adds to the documents' diagnostics (`drift`) and announces with `rutter/runsChanged`
  once per refresh round.

`Runs` is the feature: it owns the monitor and installs the handlers.
"""

from __future__ import annotations

from lsprotocol import types

from rutter_lsp.feature import LanguageFeature, RefreshRound
from rutter_lsp.features.runs import requests, review
from rutter_lsp.features.runs.drift import DRIFT_CODE
from rutter_lsp.features.runs.monitor import RUNS_CHANGED, RunsMonitor
from rutter_lsp.features.runs.requests import CONFIRM_REFRESH, RUN_INSTRUCTIONS, RUNS
from rutter_lsp.features.runs.review import code_actions

__all__ = ["CONFIRM_REFRESH", "RUNS", "RUNS_CHANGED", "RUN_INSTRUCTIONS", "Runs", "RunsMonitor"]


class Runs(LanguageFeature):
    monitor: RunsMonitor
    """Drift of the active runs of the served workspaces."""
    _changed: list[str]
    """The workspaces whose runs changed in this refresh round (announced in `refreshed`)."""

    def setup(self) -> None:
        server = self.server
        self.monitor = monitor = RunsMonitor(server)
        self._changed = []
        server.session.store_watch.subscribe(monitor.store_changed)
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
                diagnostic
                for diagnostic in params.context.diagnostics
                if diagnostic.code == DRIFT_CODE
            ]
            only = params.context.only
            if only and not any(str(kind).startswith("quickfix") for kind in only):
                return None
            ids = {str(d.data.get("run_id")) for d in wanted if isinstance(d.data, dict)}
            return code_actions(monitor, params.text_document.uri, ids) or None

    async def refresh(self, round: RefreshRound) -> frozenset[str]:
        """Inspect the runs again (all of them when the store or the settings changed, else
        those the changed files can reach); the documents whose drift changed."""
        if round.runs or round.all_diagnostics:
            self._changed = await self.monitor.reinspect()
        elif round.changes:
            self._changed = await self.monitor.reinspect(round.changes)
        else:
            self._changed = []
        if round.rebuilt or round.runs:
            return frozenset(self.monitor.replace(round.docs))
        return frozenset()

    async def refreshed(self, round: RefreshRound) -> None:
        if self._changed:
            self.server.protocol.notify(RUNS_CHANGED, {"workspace_ids": self._changed})
            self._changed = []

    def diagnostics_for(self, uri: str) -> list[types.Diagnostic]:
        return self.monitor.for_uri(uri)

    def shutdown(self) -> None:
        self.monitor.close()
