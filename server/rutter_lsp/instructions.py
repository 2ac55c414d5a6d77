"""`rutter/effectiveInstructions` and the commands: the snapshot for the file in front of you.

The custom request takes `{"textDocument": {"uri": ...}}` and answers with the contract's
`project_instruction_snapshot.v1` JSON for that file as it is on disk, or
`{"error": {"code", "message", "path"?, "details"?}}` when discovery fails closed or the file
is outside every served folder (`not_registered`): the editor can always say why nothing
applies. Command `rutter.effectiveInstructions` (argument: the URI) is the same for clients
that cannot send custom requests; `rutter.showApplicableFiles` (the code lens's command)
lists the open files an instruction file applies to.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Final

from lsprotocol import types

from rutter_core.errors import RutterError, UsageError
from rutter_core.fsread import FileReader
from rutter_core.instructions import effective_instructions
from rutter_core.store import Store
from rutter_lsp.errors import jsonrpc_error
from rutter_lsp.hover import status_for
from rutter_lsp.paths import path_of_uri
from rutter_lsp.settings import plain

if TYPE_CHECKING:
    from rutter_lsp.server import RutterServer

logger = logging.getLogger("rutter_lsp")

EFFECTIVE_INSTRUCTIONS: Final = "rutter/effectiveInstructions"
COMMAND_EFFECTIVE_INSTRUCTIONS: Final = "rutter.effectiveInstructions"
COMMAND_SHOW_APPLICABLE_FILES: Final = "rutter.showApplicableFiles"
MAX_LISTED_FILES: Final = 20


def uri_argument(value: Any) -> str | None:
    """The document URI in `{"textDocument": {"uri"}}`, `{"uri"}`, a bare string, or the first
    element of an argument list; params arrive as dicts or as pygls namedtuples."""
    data = plain(value)
    if isinstance(data, str):
        return data
    if isinstance(data, list):
        return uri_argument(data[0]) if data else None
    if isinstance(data, dict):
        document = data.get("textDocument")
        if isinstance(document, dict) and isinstance(document.get("uri"), str):
            return str(document["uri"])
        if isinstance(data.get("uri"), str):
            return str(data["uri"])
    return None


def _snapshot(store: Store, workspace_id: str, rel: str, reader: FileReader) -> dict[str, Any]:
    try:
        return effective_instructions(store, workspace_id, rel, reader=reader).to_json()
    except RutterError as error:
        return {"error": error.to_json()}


async def effective_for(server: RutterServer, uri: str) -> dict[str, Any]:
    await server.ready.wait()
    located = server.locate_uri(uri)
    if located is None:
        path = path_of_uri(uri)
        where = path if path is not None else uri
        return {
            "error": {
                "code": "not_registered",
                "message": f"{where} is not inside a workspace folder that rutter serves; open "
                "its project folder as a workspace folder (it is registered on open), or "
                "register it with `rutter workspace register ID ROOT`",
                "path": where,
            }
        }
    if server.store is None:
        return {
            "error": {
                "code": "store_unavailable",
                "message": "the rutter store could not be opened; see the server log and "
                "check rutter.databaseUrl / RUTTER_DATABASE_URL / RUTTER_HOME",
            }
        }
    return await server.worker.run(
        _snapshot, server.store, located.folder.workspace_id, located.rel, server.reader
    )


def _required_uri(value: Any) -> str:
    uri = uri_argument(value)
    if uri is None:
        raise jsonrpc_error(
            UsageError(
                "invalid_params",
                'expected {"textDocument": {"uri": "file:///..."}} (or the URI as the '
                "command's argument)",
            )
        )
    return uri


def register(server: RutterServer) -> None:
    # Command handlers take pygls' conventional `ls` first (the server, injected by name);
    # the client's arguments follow.

    @server.feature(EFFECTIVE_INSTRUCTIONS)
    async def effective_instructions_request(params: Any) -> dict[str, Any]:
        return await effective_for(server, _required_uri(params))

    @server.command(COMMAND_EFFECTIVE_INSTRUCTIONS)
    async def effective_instructions_command(ls: Any, *args: Any) -> dict[str, Any]:
        return await effective_for(server, _required_uri(list(args)))

    @server.command(COMMAND_SHOW_APPLICABLE_FILES)
    async def show_applicable_files(ls: Any, *args: Any) -> dict[str, Any]:
        uri = _required_uri(list(args))
        status = await status_for(server, uri)
        if status is None:
            return {"uri": uri, "files": []}
        files = list(status.applies_to)
        names = []
        for file_uri in files[:MAX_LISTED_FILES]:
            located = server.locate_uri(file_uri)
            names.append(located.rel if located else file_uri)
        more = len(files) - len(names)
        listing = ", ".join(names) + (f" and {more} more" if more > 0 else "")
        server.notify_user(
            f"{status.file.rel} applies to {len(files)} open file(s)"
            + (f": {listing}" if files else ""),
            types.MessageType.Info,
        )
        return {"uri": uri, "files": files}
