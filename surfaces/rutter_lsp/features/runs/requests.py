"""The run requests of the language server, and their command twins.

Params are decoded by the dispatch into the app's models (unknown fields refused); failures are
typed errors the dispatch maps to JSON-RPC errors whose `data` is the error document:

- `rutter/runs` (`rutter.runs`) `{"workspace_id"?}`: `{"runs": [run + {"stale",
  "live_fingerprint", "live_error"?}]}`, the active runs of that workspace, else of every served
  workspace;
- `rutter/runInstructions` (`rutter.runInstructions`, also `[run_id]`) `{"run_id"}`: the
  inspection (contract section 6);
- `rutter/confirmRefresh` (`rutter.confirmRefresh`) `{"run_id", "expected_fingerprint",
  "expected_live_fingerprint"}`: the inspection after the call plus `"refreshed"`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from rutter_core.app.runs import (
    ActiveRuns,
    ActiveRunsParams,
    ConfirmedRefresh,
    ConfirmRefreshParams,
    InspectRunParams,
    RunInspection,
    RunOperations,
)
from rutter_lsp.dispatch import ACTOR, custom_request, object_params, ready_app
from rutter_lsp.settings import plain

if TYPE_CHECKING:
    from rutter_lsp.server import RutterServer

RUNS: Final = "rutter/runs"
RUN_INSTRUCTIONS: Final = "rutter/runInstructions"
CONFIRM_REFRESH: Final = "rutter/confirmRefresh"
COMMAND_RUNS: Final = "rutter.runs"
COMMAND_RUN_INSTRUCTIONS: Final = "rutter.runInstructions"
COMMAND_CONFIRM_REFRESH: Final = "rutter.confirmRefresh"


async def run_operations(server: RutterServer) -> RunOperations:
    """The runs of the server's store, once `initialized` has opened it."""
    return (await ready_app(server)).runs


def run_argument(args: Sequence[Any]) -> dict[str, Any]:
    """A command's `[run_id]` or `[{"run_id": ...}]` as params."""
    values = [plain(arg) for arg in args]
    if len(values) == 1 and isinstance(values[0], str):
        return {"run_id": values[0]}
    return object_params(values)


async def active_runs(server: RutterServer, params: ActiveRunsParams) -> dict[str, Any]:
    runs = await run_operations(server)
    served = {folder.workspace_id for folder in server.session.folders.values()}
    active = await server.session.worker.run(runs.active, params, served=served)
    # One job per run: other requests go between them on the worker. A run's own failure is
    # reported in its entry.
    listed = [await server.session.worker.run(runs.listed, run) for run in active]
    return ActiveRuns(runs=listed).to_json()


async def as_json(server: RutterServer, document: RunInspection) -> dict[str, Any]:
    """`document`'s JSON, made on the disk worker: an inspection holds two snapshots with
    their contents, too much to serialize on the event loop."""
    return await server.session.worker.run(document.to_json)


async def inspect(server: RutterServer, params: InspectRunParams) -> RunInspection:
    runs = await run_operations(server)
    return await server.session.worker.run(runs.inspect, params)


async def confirm(server: RutterServer, params: ConfirmRefreshParams) -> ConfirmedRefresh:
    """Confirm on the disk worker; when a revision was appended, the drift is shown again."""
    runs = await run_operations(server)
    result = await server.session.worker.run(runs.confirm_refresh, params, actor=ACTOR)
    if result.refreshed:
        server.refresher.request(runs=True)
    return result


def register(server: RutterServer) -> None:
    @custom_request(server, RUNS, ActiveRunsParams, command=COMMAND_RUNS)
    async def runs(server: RutterServer, params: ActiveRunsParams) -> dict[str, Any]:
        return await active_runs(server, params)

    @custom_request(
        server,
        RUN_INSTRUCTIONS,
        InspectRunParams,
        command=COMMAND_RUN_INSTRUCTIONS,
        command_params=run_argument,
    )
    async def run_instructions(server: RutterServer, params: InspectRunParams) -> dict[str, Any]:
        return await as_json(server, await inspect(server, params))

    @custom_request(server, CONFIRM_REFRESH, ConfirmRefreshParams, command=COMMAND_CONFIRM_REFRESH)
    async def confirm_refresh(server: RutterServer, params: ConfirmRefreshParams) -> dict[str, Any]:
        return await as_json(server, await confirm(server, params))
