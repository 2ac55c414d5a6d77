"""The run requests of the language server, and their command twins.

Params are decoded by the dispatch into the app's models (unknown fields refused); failures are
typed errors the dispatch maps to JSON-RPC errors whose `data` is the error document:

- `rutter/runs` (`rutter.runs`) `{"workspace_id"?}`: `{"runs": [run + {"stale",
  "live_fingerprint", "live_error"?, "machine", "drift_workspace_id"}]}`, the active runs of
  that workspace's project, else of every served workspace's project, made through any of
  their registrations on any machine (`workspace_id`: the one it was made through; `machine`:
  whose that is; `drift_workspace_id`: the served registration its drift is read from, as
  the drift diagnostics read it);
- `rutter/runInstructions` (`rutter.runInstructions`, also `[run_id]`) `{"run_id"}`: the
  inspection (docs/reference/runs.md);
- `rutter/confirmRefresh` (`rutter.confirmRefresh`) `{"run_id", "expected_fingerprint",
  "expected_live_fingerprint"}`: the inspection after the call plus `"refreshed"`;
- `rutter/createRun` (`rutter.run.create`) `{"goal", "workspace_id"?, "profile"?, "mode"?,
  "target"?, "thread_id"?}`: what `rutter run create --json` prints. The server has no
  directory of its own: without `workspace_id` it is `workspace_required`, and a relative
  `target` is workspace-relative;
- `rutter/setRunStatus` (`rutter.run.setStatus`) `{"run_id", "status"}`: the run after the
  call, as `rutter run status --json` prints it.

Creating a run and moving its status announce `rutter/runsChanged` (through the refresher, as
the store watcher would a change made by the CLI).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from rutter_core.app.runs import (
    ActiveRuns,
    ActiveRunsParams,
    ConfirmedRefresh,
    ConfirmRefreshParams,
    CreateRunParams,
    InspectRunParams,
    RunInspection,
    RunOperations,
    SetRunStatusParams,
)
from rutter_lsp.dispatch import ACTOR, custom_request, object_params, ready_app
from rutter_lsp.settings import plain

if TYPE_CHECKING:
    from rutter_lsp.server import RutterServer

RUNS: Final = "rutter/runs"
RUN_INSTRUCTIONS: Final = "rutter/runInstructions"
CONFIRM_REFRESH: Final = "rutter/confirmRefresh"
CREATE_RUN: Final = "rutter/createRun"
SET_RUN_STATUS: Final = "rutter/setRunStatus"
COMMAND_RUNS: Final = "rutter.runs"
COMMAND_RUN_INSTRUCTIONS: Final = "rutter.runInstructions"
COMMAND_CONFIRM_REFRESH: Final = "rutter.confirmRefresh"
# Not `rutter.createRun`: VS Code's language client registers the server's commands as editor
# commands, and the extension's own "Create Run" command has that name.
COMMAND_CREATE_RUN: Final = "rutter.run.create"
COMMAND_SET_RUN_STATUS: Final = "rutter.run.setStatus"


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
    listed = [await server.session.worker.run(runs.listed, run, local) for run, local in active]
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


async def create_run(server: RutterServer, params: CreateRunParams) -> dict[str, Any]:
    runs = await run_operations(server)
    created = await server.session.worker.run(runs.create, params, actor=ACTOR)
    server.refresher.request(runs=True)
    return created.to_json()


async def set_run_status(server: RutterServer, params: SetRunStatusParams) -> dict[str, Any]:
    runs = await run_operations(server)
    change = await server.session.worker.run(runs.set_status, params, actor=ACTOR)
    if change.changed:
        server.refresher.request(runs=True)
    return change.run.to_json()


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

    @custom_request(server, CREATE_RUN, CreateRunParams, command=COMMAND_CREATE_RUN)
    async def create(server: RutterServer, params: CreateRunParams) -> dict[str, Any]:
        return await create_run(server, params)

    @custom_request(server, SET_RUN_STATUS, SetRunStatusParams, command=COMMAND_SET_RUN_STATUS)
    async def set_status(server: RutterServer, params: SetRunStatusParams) -> dict[str, Any]:
        return await set_run_status(server, params)
