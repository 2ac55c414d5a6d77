"""Explicit user/project memory in the editor: a thin adapter over the app facade
(`server.session.app.memory`).

Requests (params: one JSON object, decoded into the app's params models by
`rutter_lsp.dispatch.custom_request`; results: the CLI's `--json` documents; failures are
JSON-RPC errors whose `data` is the typed error `{"code", "message", "path"?, "details"?,
"hint"?}`, mapped once in `rutter_lsp.errors`: conflict -32801, not found and rejected -32803,
usage -32602):

- `rutter/memory/list` `{"scope"?, "workspace_id"?, "uri"?, "all"?, "limit"?}` →
  `{"items": [context_memory.v1], "has_more"}`
- `rutter/memory/get` `{"id"}` → `context_memory.v1`
- `rutter/memory/create` `{"scope", "workspace_id"?, "uri"?, "title", "content",
  "references"?, "retention"?, "redact_sensitive"?}` → `context_memory.v1` (version 1)
- `rutter/memory/edit` `{"id", "version", "title"?, "content"?, "references"?, "retention"?,
  "redact_sensitive"?}` → `context_memory.v1` (version + 1) plus `purged` (did the replaced
  text leave the store's files; null when no text was replaced)
- `rutter/memory/setStatus` `{"id", "version", "status": "active" | "disabled"}` → record
- `rutter/memory/delete` `{"id", "version"}` → `{"id", "version", "deleted": true,
  "recoverable": false, "purged"}` once the person chose "Delete permanently" in the
  `window/showMessageRequest` the server sends first, else `{"id", "version",
  "deleted": false, "cancelled": true}`. A client that cannot show message requests gets
  the error `confirmation_unavailable` and nothing is deleted.
- `rutter/memory/export` `{"scope", "workspace_id"?, "uri"?, "all"?}` →
  `context_memory_export.v1`
- `rutter/memory/candidates`, `.../candidate`, `.../confirmCandidate`, `.../ignoreCandidate`:
  experience candidates (`rutter_lsp.features.memory.candidates`)

Project scope names its workspace with `workspace_id`, or with `uri` (a document or folder
URI inside a served workspace folder), or, with neither, the only served folder. Without a
scope, `list` shows user memory plus that workspace's project memory when one is named (by
`workspace_id` or `uri`), else every memory. Commands `rutter.memory.list|get|create|edit|
setStatus|delete|export` take the same object as their one argument (`get` also a bare ID).
The actor is always "lsp": set here, never read from params; unknown fields (`actor`, a
misspelt `retention`, ...) are refused as `invalid_params`, and so is a value of the wrong type.
`uri` is this surface's own field: it is turned into `workspace_id` here. Store work runs on
the disk worker.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar

from lsprotocol import types
from pydantic import StrictStr

from rutter_core.app.memory import (
    CreateMemoryParams,
    DeleteMemoryParams,
    EditMemoryParams,
    ExportMemoriesParams,
    GetMemoryParams,
    ListMemoriesParams,
    MemoryOperations,
    MemoryParams,
    SetMemoryStatusParams,
)
from rutter_core.app.models import Result
from rutter_core.kernel.errors import RejectedError, UsageError
from rutter_lsp.dispatch import ACTOR, Handler, custom_request, on_worker, ready_app
from rutter_lsp.settings import plain

if TYPE_CHECKING:
    from rutter_lsp.server import RutterServer

logger = logging.getLogger("rutter_lsp")

LIST: Final = "rutter/memory/list"
GET: Final = "rutter/memory/get"
CREATE: Final = "rutter/memory/create"
EDIT: Final = "rutter/memory/edit"
SET_STATUS: Final = "rutter/memory/setStatus"
DELETE: Final = "rutter/memory/delete"
EXPORT: Final = "rutter/memory/export"
COMMANDS: Final = {
    LIST: "rutter.memory.list",
    GET: "rutter.memory.get",
    CREATE: "rutter.memory.create",
    EDIT: "rutter.memory.edit",
    SET_STATUS: "rutter.memory.setStatus",
    DELETE: "rutter.memory.delete",
    EXPORT: "rutter.memory.export",
}
DELETE_PERMANENTLY: Final = "Delete permanently"
CANCEL: Final = "Cancel"

P = TypeVar("P", bound=MemoryParams)


# -- params: the app's, plus `uri` where a workspace can be named -------------------------------


class ListRequest(ListMemoriesParams):
    uri: StrictStr | None = None
    """A document or folder URI inside a served workspace folder: names the workspace."""


class CreateRequest(CreateMemoryParams):
    uri: StrictStr | None = None


class ExportRequest(ExportMemoriesParams):
    uri: StrictStr | None = None


class CancelledDelete(Result):
    """The answer when the person did not choose "Delete permanently": nothing was deleted."""

    id: str
    version: int
    deleted: Literal[False] = False
    cancelled: Literal[True] = True


def _workspace(
    server: RutterServer, workspace_id: str | None, uri: str | None, scope: str | None
) -> str | None:
    """The workspace the params name: `workspace_id`, else `uri`'s folder, else (project
    scope only) the only served folder."""
    if workspace_id is not None:
        return workspace_id
    if uri is not None:
        located = server.session.locate_uri(uri)
        if located is not None:
            return located.folder.workspace_id
        for folder in server.session.folders.values():
            if folder.uri.rstrip("/") == uri.rstrip("/"):
                return folder.workspace_id
        if scope == "project":
            raise UsageError(
                "workspace_required",
                f"{uri} is not inside a workspace folder rutter serves; pass "
                "'workspace_id', or open its project folder as a workspace folder",
            )
        return None
    if scope == "project":
        folders = {folder.workspace_id for folder in server.session.folders.values()}
        if len(folders) == 1:
            return folders.pop()
        raise UsageError(
            "workspace_required",
            "project memory needs a workspace: pass 'workspace_id' or a 'uri' inside a "
            f"served folder ({len(folders)} workspace folders are served)",
        )
    return None


def workspace_named(server: RutterServer, workspace_id: str | None, uri: str | None) -> str:
    """The one workspace the params name, as project scope finds it (experience candidates)."""
    found = _workspace(server, workspace_id, uri, "project")
    assert found is not None  # project scope names one or refuses
    return found


def _located(
    server: RutterServer, request: ListRequest | CreateRequest | ExportRequest, model: type[P]
) -> P:
    """`request` as the app's params: its `uri` turned into the `workspace_id` it names."""
    workspace_id = _workspace(server, request.workspace_id, request.uri, request.scope)
    fields = request.model_dump(exclude={"uri", "workspace_id"})
    return model.model_validate({**fields, "workspace_id": workspace_id})


async def _memory(server: RutterServer) -> MemoryOperations:
    """The memory operations, once the store is open."""
    return (await ready_app(server)).memory


# -- the requests ---------------------------------------------------------------------------------


async def list_request(server: RutterServer, request: ListRequest) -> dict[str, Any]:
    memory = await _memory(server)
    params = _located(server, request, ListMemoriesParams)
    return (await on_worker(server, lambda: memory.list(params))).to_json()


async def get_request(server: RutterServer, params: GetMemoryParams) -> dict[str, Any]:
    memory = await _memory(server)
    return (await on_worker(server, lambda: memory.get(params))).to_json()


async def create_request(server: RutterServer, request: CreateRequest) -> dict[str, Any]:
    memory = await _memory(server)
    params = _located(server, request, CreateMemoryParams)
    return (await on_worker(server, lambda: memory.create(params, actor=ACTOR))).to_json()


async def edit_request(server: RutterServer, params: EditMemoryParams) -> dict[str, Any]:
    memory = await _memory(server)
    edited = await on_worker(server, lambda: memory.edit(params, actor=ACTOR))
    if edited.purged is False:
        logger.warning(
            "memory %s edited; a long reader delayed the WAL checkpoint (done at the next one)",
            params.id,
        )
    return edited.to_json()


async def set_status_request(server: RutterServer, params: SetMemoryStatusParams) -> dict[str, Any]:
    memory = await _memory(server)
    return (await on_worker(server, lambda: memory.set_status(params, actor=ACTOR))).to_json()


async def delete_request(server: RutterServer, params: DeleteMemoryParams) -> dict[str, Any]:
    """Ask the person first; only "Delete permanently" deletes, at exactly `version`."""
    memory = await _memory(server)
    # Missing or stale: say so now rather than ask about something that cannot be deleted.
    record = await on_worker(server, lambda: memory.delete_preview(params))
    if not server.supports("window.show_message"):
        raise RejectedError(
            "confirmation_unavailable",
            "this editor cannot ask for a confirmation (window/showMessageRequest), so "
            "nothing was deleted; delete from the command line: rutter context memory "
            f"delete {params.id} --version {params.version}",
            details={"id": params.id, "version": params.version},
        )
    answer = await server.window_show_message_request_async(
        types.ShowMessageRequestParams(
            type=types.MessageType.Warning,
            message=f'rutter: delete the {record.scope} memory "{record.title}" ({params.id}, '
            f"version {params.version}) permanently? It cannot be recovered.",
            actions=[
                types.MessageActionItem(title=DELETE_PERMANENTLY),
                types.MessageActionItem(title=CANCEL),
            ],
        )
    )
    if answer is None or answer.title != DELETE_PERMANENTLY:
        return CancelledDelete(id=params.id, version=params.version).to_json()
    deleted = await on_worker(server, lambda: memory.delete(params, actor=ACTOR))
    if not deleted.purged:
        logger.warning(
            "memory %s deleted; a long reader delayed the WAL checkpoint (done at the next one)",
            params.id,
        )
    return deleted.to_json()


async def export_request(server: RutterServer, request: ExportRequest) -> dict[str, Any]:
    memory = await _memory(server)
    params = _located(server, request, ExportMemoriesParams)
    return (await on_worker(server, lambda: memory.export(params))).to_json()


def _command_params(args: Sequence[Any]) -> Any:
    """A command's arguments as a request's params (`get` and `delete` palettes may pass a
    bare ID first)."""
    values = [plain(arg) for arg in args]
    if len(values) == 1 and isinstance(values[0], str):
        return {"id": values[0]}
    return values


def register(server: RutterServer) -> None:
    """Each request `rutter/memory/*` and its command twin `rutter.memory.*`."""
    _register(server, LIST, ListRequest, list_request)
    _register(server, GET, GetMemoryParams, get_request)
    _register(server, CREATE, CreateRequest, create_request)
    _register(server, EDIT, EditMemoryParams, edit_request)
    _register(server, SET_STATUS, SetMemoryStatusParams, set_status_request)
    _register(server, DELETE, DeleteMemoryParams, delete_request)
    _register(server, EXPORT, ExportRequest, export_request)
    from rutter_lsp.features.memory.candidates import register as register_candidates

    register_candidates(server)


def _register(server: RutterServer, method: str, model: type[P], handler: Handler[P]) -> None:
    custom_request(server, method, model, command=COMMANDS[method], command_params=_command_params)(
        handler
    )
