"""Explicit user/project memory in the editor: a thin adapter over `rutter_core.memory.service`.

Requests (params: one JSON object; results: the CLI's `--json` documents; failures are
JSON-RPC errors whose `data` is the typed error `{"code", "message", "path"?, "details"?}`,
mapped once in `rutter_lsp.errors`: conflict -32801, not found and rejected -32803, usage
-32602):

- `rutter/memory/list` `{"scope"?, "workspace_id"?, "uri"?, "all"?, "limit"?}` →
  `{"items": [context_memory.v1], "has_more"}`
- `rutter/memory/get` `{"id"}` → `context_memory.v1`
- `rutter/memory/create` `{"scope", "workspace_id"?, "uri"?, "title", "content",
  "references"?, "retention"?, "redact_sensitive"?}` → `context_memory.v1` (version 1)
- `rutter/memory/edit` `{"id", "version", "title"?, "content"?, "references"?, "retention"?,
  "redact_sensitive"?}` → `context_memory.v1` (version + 1)
- `rutter/memory/setStatus` `{"id", "version", "status": "active" | "disabled"}` → record
- `rutter/memory/delete` `{"id", "version"}` → `{"id", "version", "deleted": true,
  "recoverable": false, "purged"}` once the person chose "Delete permanently" in the
  `window/showMessageRequest` the server sends first, else `{"id", "version",
  "deleted": false, "cancelled": true}`. A client that cannot show message requests gets
  the error `confirmation_unavailable` and nothing is deleted.
- `rutter/memory/export` `{"scope", "workspace_id"?, "uri"?, "all"?}` →
  `context_memory_export.v1`

Project scope names its workspace with `workspace_id`, or with `uri` (a document or folder
URI inside a served workspace folder), or, with neither, the only served folder. Without a
scope, `list` shows user memory plus that workspace's project memory when one is named (by
`workspace_id` or `uri`), else every memory. Commands `rutter.memory.list|get|create|edit|
setStatus|delete|export` take the same object as their one argument (`get` also a bare ID).
The actor is always "lsp": set here, never read from params; unknown fields (`actor`, a
misspelt `retention`, ...) are refused as `invalid_params`. Store work runs on the disk worker.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeVar

from lsprotocol import types

from rutter_core.kernel.errors import RejectedError, UsageError
from rutter_core.memory.service import (
    DEFAULT_LIST_LIMIT,
    create_memory,
    delete_memory,
    edit_memory,
    export_memories,
    get_memory,
    list_memories,
    set_memory_status,
)
from rutter_lsp.dispatch import invalid_params, mapped, object_params, on_worker, ready_store
from rutter_lsp.errors import jsonrpc_error
from rutter_lsp.settings import plain

if TYPE_CHECKING:
    from rutter_lsp.server import RutterServer

logger = logging.getLogger("rutter_lsp")

T = TypeVar("T")

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
ACTOR: Final = "lsp"
DELETE_PERMANENTLY: Final = "Delete permanently"
CANCEL: Final = "Cancel"


# -- params ---------------------------------------------------------------------------------------


def _only(params: Mapping[str, Any], *allowed: str) -> dict[str, Any]:
    """Refuse unknown fields: a misspelt `retention` would silently keep a memory forever,
    and `actor` / `created_by` are never taken from a client."""
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise invalid_params(
            f"unknown field(s) {', '.join(map(repr, unknown))}; expected {', '.join(allowed)}"
        )
    return dict(params)


def _optional(params: Mapping[str, Any], key: str, kind: type[T], what: str) -> T | None:
    value = params.get(key)
    if value is None:
        return None
    # bool is an int in Python; a JSON `true` is never a version or a limit.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise invalid_params(f"{key!r} must be {what}")
    return value


def _required(params: Mapping[str, Any], key: str, kind: type[T], what: str) -> T:
    value = _optional(params, key, kind, what)
    if value is None:
        raise invalid_params(f"{key!r} is required and must be {what}")
    return value


def _flag(params: Mapping[str, Any], key: str) -> bool:
    return bool(_optional(params, key, bool, "true or false"))


def _references(params: Mapping[str, Any]) -> list[str] | None:
    value = params.get("references")
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise invalid_params("'references' must be a list of strings")
    return list(value)


def _workspace(server: RutterServer, params: Mapping[str, Any], scope: str | None) -> str | None:
    """The workspace the params name: `workspace_id`, else `uri`'s folder, else (project
    scope only) the only served folder."""
    workspace_id = _optional(params, "workspace_id", str, "a workspace ID")
    if workspace_id is not None:
        return workspace_id
    uri = _optional(params, "uri", str, "a document or folder URI")
    if uri is not None:
        located = server.locate_uri(uri)
        if located is not None:
            return located.folder.workspace_id
        for folder in server.folders.values():
            if folder.uri.rstrip("/") == uri.rstrip("/"):
                return folder.workspace_id
        if scope == "project":
            raise jsonrpc_error(
                UsageError(
                    "workspace_required",
                    f"{uri} is not inside a workspace folder rutter serves; pass "
                    "'workspace_id', or open its project folder as a workspace folder",
                )
            )
        return None
    if scope == "project":
        folders = {folder.workspace_id for folder in server.folders.values()}
        if len(folders) == 1:
            return folders.pop()
        raise jsonrpc_error(
            UsageError(
                "workspace_required",
                "project memory needs a workspace: pass 'workspace_id' or a 'uri' inside a "
                f"served folder ({len(folders)} workspace folders are served)",
            )
        )
    return None


# -- the requests ---------------------------------------------------------------------------------


async def list_request(server: RutterServer, params: Any) -> dict[str, Any]:
    data = _only(object_params(params), "scope", "workspace_id", "uri", "all", "limit")
    scope = _optional(data, "scope", str, "'user' or 'project'")
    limit = _optional(data, "limit", int, "a whole number")
    include_inactive = _flag(data, "all")
    store = await ready_store(server)
    workspace_id = _workspace(server, data, scope)
    found = await on_worker(
        server,
        lambda: list_memories(
            store,
            scope=scope,
            workspace_id=workspace_id,
            include_inactive=include_inactive,
            limit=DEFAULT_LIST_LIMIT if limit is None else limit,
        ),
    )
    return found.to_json()


async def get_request(server: RutterServer, params: Any) -> dict[str, Any]:
    data = _only(object_params(params), "id")
    memory_id = _required(data, "id", str, "a memory ID")
    store = await ready_store(server)
    record = await on_worker(server, lambda: get_memory(store, memory_id))
    return record.to_json()


async def create_request(server: RutterServer, params: Any) -> dict[str, Any]:
    data = _only(
        object_params(params),
        *("scope", "workspace_id", "uri", "title", "content", "references", "retention"),
        "redact_sensitive",
    )
    scope = _required(data, "scope", str, "'user' or 'project'")
    title = _required(data, "title", str, "text")
    content = _required(data, "content", str, "text")
    references = _references(data) or []
    retention = _optional(data, "retention", str, "a duration (720h, 30d) or an RFC 3339 time")
    redact_sensitive = _flag(data, "redact_sensitive")
    store = await ready_store(server)
    workspace_id = _workspace(server, data, scope)
    record = await on_worker(
        server,
        lambda: create_memory(
            store,
            scope=scope,
            workspace_id=workspace_id,
            title=title,
            content=content,
            references=references,
            retention=retention,
            redact_sensitive=redact_sensitive,
            actor=ACTOR,
        ),
    )
    return record.to_json()


async def edit_request(server: RutterServer, params: Any) -> dict[str, Any]:
    data = _only(
        object_params(params),
        *("id", "version", "title", "content", "references", "retention", "redact_sensitive"),
    )
    memory_id = _required(data, "id", str, "a memory ID")
    version = _required(data, "version", int, "the version you last read")
    title = _optional(data, "title", str, "text")
    content = _optional(data, "content", str, "text")
    references = _references(data)
    retention = _optional(
        data, "retention", str, "a duration (720h, 30d), an RFC 3339 time or 'none'"
    )
    redact_sensitive = _flag(data, "redact_sensitive")
    store = await ready_store(server)
    record = await on_worker(
        server,
        lambda: edit_memory(
            store,
            memory_id,
            version=version,
            title=title,
            content=content,
            references=references,
            retention=retention,
            redact_sensitive=redact_sensitive,
            actor=ACTOR,
        ),
    )
    return record.to_json()


async def set_status_request(server: RutterServer, params: Any) -> dict[str, Any]:
    data = _only(object_params(params), "id", "version", "status")
    memory_id = _required(data, "id", str, "a memory ID")
    version = _required(data, "version", int, "the version you last read")
    status = _required(data, "status", str, "'active' or 'disabled'")
    store = await ready_store(server)
    record = await on_worker(
        server,
        lambda: set_memory_status(store, memory_id, version=version, status=status, actor=ACTOR),
    )
    return record.to_json()


async def delete_request(server: RutterServer, params: Any) -> dict[str, Any]:
    """Ask the person first; only "Delete permanently" deletes, at exactly `version`."""
    data = _only(object_params(params), "id", "version")
    memory_id = _required(data, "id", str, "a memory ID")
    version = _required(data, "version", int, "the version you last read")
    store = await ready_store(server)
    # Missing or stale: say so now rather than ask about something that cannot be deleted.
    record = await on_worker(server, lambda: get_memory(store, memory_id, version=version))
    if not server.supports("window.show_message"):
        raise jsonrpc_error(
            RejectedError(
                "confirmation_unavailable",
                "this editor cannot ask for a confirmation (window/showMessageRequest), so "
                "nothing was deleted; delete from the command line: rutter context memory "
                f"delete {memory_id} --version {version}",
                details={"id": memory_id, "version": version},
            )
        )
    answer = await server.window_show_message_request_async(
        types.ShowMessageRequestParams(
            type=types.MessageType.Warning,
            message=f'rutter: delete the {record.scope} memory "{record.title}" ({memory_id}, '
            f"version {version}) permanently? It cannot be recovered.",
            actions=[
                types.MessageActionItem(title=DELETE_PERMANENTLY),
                types.MessageActionItem(title=CANCEL),
            ],
        )
    )
    if answer is None or answer.title != DELETE_PERMANENTLY:
        return {"id": memory_id, "version": version, "deleted": False, "cancelled": True}
    deleted = await on_worker(
        server, lambda: delete_memory(store, memory_id, version=version, actor=ACTOR)
    )
    if not deleted.purged:
        logger.warning(
            "memory %s deleted; a long reader delayed the WAL checkpoint (done at the next one)",
            memory_id,
        )
    return deleted.to_json()


async def export_request(server: RutterServer, params: Any) -> dict[str, Any]:
    data = _only(object_params(params), "scope", "workspace_id", "uri", "all")
    scope = _required(data, "scope", str, "'user' or 'project'")
    include_inactive = _flag(data, "all")
    store = await ready_store(server)
    workspace_id = _workspace(server, data, scope)
    exported = await on_worker(
        server,
        lambda: export_memories(
            store, scope=scope, workspace_id=workspace_id, include_inactive=include_inactive
        ),
    )
    return exported.to_json()


def _command_params(args: Sequence[Any]) -> Any:
    """A command's arguments as a request's params (`get` and `delete` palettes may pass a
    bare ID first)."""
    values = [plain(arg) for arg in args]
    if len(values) == 1 and isinstance(values[0], str):
        return {"id": values[0]}
    return values


def register(server: RutterServer) -> None:
    handlers: dict[str, Callable[[RutterServer, Any], Awaitable[dict[str, Any]]]] = {
        LIST: list_request,
        GET: get_request,
        CREATE: create_request,
        EDIT: edit_request,
        SET_STATUS: set_status_request,
        DELETE: delete_request,
        EXPORT: export_request,
    }
    for method, handler in handlers.items():
        _register(server, method, handler)


def _register(
    server: RutterServer,
    method: str,
    handler: Callable[[RutterServer, Any], Awaitable[dict[str, Any]]],
) -> None:
    """The request `method` and its command twin (`COMMANDS[method]`)."""

    @server.feature(method)
    async def request(params: Any) -> dict[str, Any]:
        return await mapped(lambda: handler(server, params))

    # Command handlers take pygls' conventional `ls` first (the server, injected by name);
    # the client's arguments follow.
    @server.command(COMMANDS[method])
    async def command(ls: Any, *args: Any) -> dict[str, Any]:
        return await mapped(lambda: handler(server, _command_params(args)))
