"""`rutter/effectiveInstructions` and the commands: the snapshot for the file in front of you.

The custom request takes `{"textDocument": {"uri": ...}}` and answers with the contract's
`project_instruction_snapshot.v1` JSON for that file as it is on disk, or
`{"error": {"code", "message", "path"?, "details"?}}` when discovery fails closed or the file
is outside every served folder (`not_registered`): the editor can always say why nothing
applies. Command `rutter.effectiveInstructions` (argument: the URI) is the same for clients
that cannot send custom requests; `rutter.showApplicableFiles` (the code lens's command)
lists the open files an instruction file applies to.

The answer is the one `rutter_core.app.instructions.effective_instructions` gives, built from
the same pieces (`discover_stack`, then `snapshot_of`) with two caches in front, because a
request costs little more than its discovery walk:

- the registration of a served folder's workspace (`WorkspaceCache`), re-read from the store
  when the folders or the store change, and at least every `REVALIDATE_SECONDS` (another
  process may remove or move it);
- the encoded JSON of the last snapshot per target (`EncodedSnapshots`, worker thread only):
  when discovery finds an equal stack (same files, same identities) the snapshot would be the
  same except for `loaded_at`, so the cached text is reused with the new time spliced in.
"""

from __future__ import annotations

import json
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from lsprotocol import types

from rutter_core.discovery.assemble import snapshot_of
from rutter_core.discovery.fsread import FileReader
from rutter_core.discovery.stack import Stack
from rutter_core.discovery.walk import discover_stack
from rutter_core.kernel.clock import now_rfc3339
from rutter_core.kernel.errors import RutterError, UsageError
from rutter_core.store import Store
from rutter_core.workspaces.service import Workspace, get_workspace
from rutter_lsp.dispatch import mapped, store_unavailable
from rutter_lsp.errors import jsonrpc_error
from rutter_lsp.features.hover.hover import status_for
from rutter_lsp.index.paths import path_of_uri
from rutter_lsp.protocol import EncodedResult
from rutter_lsp.settings import plain

if TYPE_CHECKING:
    from rutter_lsp.server import RutterServer

logger = logging.getLogger("rutter_lsp")

EFFECTIVE_INSTRUCTIONS: Final = "rutter/effectiveInstructions"
COMMAND_EFFECTIVE_INSTRUCTIONS: Final = "rutter.effectiveInstructions"
COMMAND_SHOW_APPLICABLE_FILES: Final = "rutter.showApplicableFiles"
MAX_LISTED_FILES: Final = 20
REVALIDATE_SECONDS: Final = 2.0
"""How stale a cached workspace registration may get (changes by other processes)."""
MAX_ENCODED_SNAPSHOTS: Final = 256
_LOADED_AT_MARK: Final = "\x00rutter:loaded_at\x00"
"""Stands for `loaded_at` in a cached encoding; NUL appears in no path and no content."""
_COMPACT: Final = (",", ":")


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


@dataclass(frozen=True, slots=True)
class _Registration:
    store: Store
    workspace: Workspace
    checked: float


class WorkspaceCache:
    """Workspace ID → its registration, as last read from the store (event loop only)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._entries: dict[str, _Registration] = {}
        self.clock = clock

    def clear(self) -> None:
        """Forget everything (served folders or the store changed)."""
        self._entries.clear()

    def get(self, store: Store, workspace_id: str) -> Workspace | None:
        entry = self._entries.get(workspace_id)
        if entry is None or entry.store is not store:
            return None
        if self.clock() - entry.checked > REVALIDATE_SECONDS:
            return None
        return entry.workspace

    def put(self, store: Store, workspace: Workspace, checked: float) -> None:
        self._entries[workspace.workspace_id] = _Registration(store, workspace, checked)


@dataclass(frozen=True, slots=True)
class _Encoded:
    stack: Stack
    head: str
    tail: str
    """The snapshot's JSON is `head + json.dumps(loaded_at) + tail`."""


class EncodedSnapshots:
    """The encoded JSON of recent snapshots, by target (disk worker only)."""

    def __init__(self) -> None:
        self._entries: OrderedDict[tuple[str, str, str], _Encoded] = OrderedDict()

    def encode(self, stack: Stack, reader: FileReader) -> str:
        """The JSON text of the snapshot of `stack`, checked now."""
        key = (stack.workspace_id, stack.workspace_root, stack.target)
        entry = self._entries.get(key)
        if entry is not None and entry.stack == stack:
            self._entries.move_to_end(key)
            return entry.head + json.dumps(now_rfc3339()) + entry.tail
        document = snapshot_of(stack, reader=reader).to_json()
        loaded_at = document["loaded_at"]
        document["loaded_at"] = _LOADED_AT_MARK
        parts = json.dumps(document, separators=_COMPACT).split(json.dumps(_LOADED_AT_MARK))
        if len(parts) != 2:  # cannot happen (no NUL anywhere else); never cache a doubt
            self._entries.pop(key, None)
            document["loaded_at"] = loaded_at
            return json.dumps(document, separators=_COMPACT)
        head, tail = parts
        self._entries[key] = _Encoded(stack, head, tail)
        self._entries.move_to_end(key)
        while len(self._entries) > MAX_ENCODED_SNAPSHOTS:
            self._entries.popitem(last=False)
        return head + json.dumps(loaded_at) + tail


def _lookup(store: Store, workspace_id: str) -> tuple[Workspace | None, dict[str, Any] | None]:
    try:
        return get_workspace(store, workspace_id), None
    except RutterError as error:
        return None, {"error": error.to_json()}


def _snapshot(
    cache: EncodedSnapshots, workspace: Workspace, rel: str, reader: FileReader
) -> EncodedResult | dict[str, Any]:
    try:
        stack = discover_stack(workspace.workspace_id, workspace.root, rel, reader=reader)
    except RutterError as error:
        return {"error": error.to_json()}
    return EncodedResult(cache.encode(stack, reader))


async def effective_for(server: RutterServer, uri: str) -> EncodedResult | dict[str, Any]:
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
        return {"error": store_unavailable().to_json()}
    store = server.store
    workspace = server.workspaces.get(store, located.folder.workspace_id)
    if workspace is None:
        checked = server.workspaces.clock()
        workspace, error = await server.worker.run(_lookup, store, located.folder.workspace_id)
        if workspace is None:
            assert error is not None
            return error
        if server.store is store:
            server.workspaces.put(store, workspace, checked)
    return await server.worker.run(
        _snapshot, server.encoded_snapshots, workspace, located.rel, server.reader
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
    async def effective_instructions_request(params: Any) -> EncodedResult | dict[str, Any]:
        return await mapped(lambda: effective_for(server, _required_uri(params)))

    @server.command(COMMAND_EFFECTIVE_INSTRUCTIONS)
    async def effective_instructions_command(ls: Any, *args: Any) -> EncodedResult | dict[str, Any]:
        return await mapped(lambda: effective_for(server, _required_uri(list(args))))

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
