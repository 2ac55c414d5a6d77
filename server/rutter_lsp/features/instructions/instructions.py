"""`rutter/effectiveInstructions` and the commands: the snapshot for the file in front of you.

The custom request takes `{"textDocument": {"uri": ...}}` and answers with the
`project_instruction_snapshot.v1` JSON (docs/reference/discovery.md) for that file as it is on
disk. When there is none it fails like every custom request (`rutter_lsp.dispatch`): a JSON-RPC
error whose `data` is the error document (`code`, `message`, `path`?, `details`?, `hint`?), when
discovery fails closed or the file is outside every served folder (`not_registered`), so the editor
can always say why nothing applies. With `"profile"` (`codex`, `claude`, `gemini`, `copilot`,
`cursor` or `all`) it answers instead with what that agent would load for the file
(docs/reference/profiles.md: `{"agent", "sources": [{"path", "why", "truncation"}]}`, or
`{"profiles": [...]}` for `all`). Command `rutter.effectiveInstructions` (arguments: the URI, and
optionally the profile) is the same for clients that cannot send custom requests;
`rutter.showApplicableFiles` (the code lens's command) lists the open files an instruction file
applies to.

The answer is the app's `instructions.effective`, taken step by step (`workspace`, `stack`,
`snapshot`) with two caches between the steps, because a request costs little more than its
discovery walk:

- the registration of a served folder's workspace (the session's `WorkspaceCache`, see
  `rutter_lsp.registrations`), re-read from the store when the folders or the store change,
  and at least every `REVALIDATE_SECONDS` (another process may remove or move it);
- the encoded JSON of the last snapshot per target (`EncodedSnapshots`, the feature's own,
  worker thread only):
  when discovery finds an equal stack (same files, same identities) the snapshot would be the
  same except for `loaded_at`, so the cached text is reused with the new time spliced in.
"""

from __future__ import annotations

import json
import logging
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from lsprotocol import types
from pydantic import Field

from rutter_core.app.facade import Rutter
from rutter_core.app.instructions import Snapshot, Stack, Workspace
from rutter_core.app.models import Params
from rutter_core.app.profiles import AgentChoice
from rutter_core.kernel.clock import now_rfc3339
from rutter_core.kernel.errors import NotFoundError
from rutter_lsp.dispatch import custom_command, custom_request, store_unavailable
from rutter_lsp.feature import LanguageFeature, RefreshRound
from rutter_lsp.index.paths import path_of_uri
from rutter_lsp.presentation import COMMAND_SHOW_APPLICABLE_FILES, status_for
from rutter_lsp.protocol import EncodedResult
from rutter_lsp.registrations import REVALIDATE_SECONDS as REGISTRATION_MAX_AGE
from rutter_lsp.settings import plain

if TYPE_CHECKING:
    from rutter_lsp.server import RutterServer

logger = logging.getLogger("rutter_lsp")

EFFECTIVE_INSTRUCTIONS: Final = "rutter/effectiveInstructions"
INSTRUCTIONS_CHANGED: Final = "rutter/instructionsChanged"
"""Notification `{"workspace_id", "paths"}`: instruction files of a served workspace changed on
disk (sent once per refresh round, after the diagnostics)."""
COMMAND_EFFECTIVE_INSTRUCTIONS: Final = "rutter.effectiveInstructions"
MAX_LISTED_FILES: Final = 20
REVALIDATE_SECONDS: Final = REGISTRATION_MAX_AGE
"""How old a served workspace's registration may be before a request reads it again."""
"""How stale a cached workspace registration may get (changes by other processes)."""
MAX_ENCODED_SNAPSHOTS: Final = 256
_LOADED_AT_MARK: Final = "\x00rutter:loaded_at\x00"
"""Stands for `loaded_at` in a cached encoding; NUL appears in no path and no content."""
_COMPACT: Final = (",", ":")


class TextDocument(Params):
    uri: str


class DocumentParams(Params):
    """`{"textDocument": {"uri"}}`: the file a request is about."""

    text_document: TextDocument = Field(alias="textDocument")


class EffectiveParams(DocumentParams):
    """`rutter/effectiveInstructions`: the file, and optionally an agent profile (`codex`,
    `claude`, `gemini`, `copilot`, `cursor`, `all`); without one the default answer."""

    profile: AgentChoice | None = None


def document_argument(args: Sequence[Any]) -> Any:
    """A command's arguments, `[uri]`, as the request's params; anything else is left for the
    params model to refuse."""
    values = [plain(arg) for arg in args]
    if len(values) == 1 and isinstance(values[0], str):
        return {"textDocument": {"uri": values[0]}}
    return values


def effective_argument(args: Sequence[Any]) -> Any:
    """The command's arguments: `[uri]`, or `[uri, profile]`."""
    values = [plain(arg) for arg in args]
    if len(values) == 2 and all(isinstance(value, str) for value in values):
        return {"textDocument": {"uri": values[0]}, "profile": values[1]}
    return document_argument(args)


def lens_argument(args: Sequence[Any]) -> Any:
    """The code lens's arguments, `[uri, files]`: the files it counted are for clients that
    show them; the command lists them afresh."""
    return document_argument(args[:1])


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

    def encode(self, stack: Stack, snapshot: Callable[[Stack], Snapshot]) -> str:
        """The JSON text of the snapshot of `stack`, checked now; `snapshot` builds it when
        the cached one is of another stack."""
        key = (stack.workspace_id, stack.workspace_root, stack.target)
        entry = self._entries.get(key)
        if entry is not None and entry.stack == stack:
            self._entries.move_to_end(key)
            return entry.head + json.dumps(now_rfc3339()) + entry.tail
        document = snapshot(stack).to_json()
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


def not_served(uri: str) -> NotFoundError:
    path = path_of_uri(uri)
    where = path if path is not None else uri
    return NotFoundError(
        "not_registered",
        f"{where} is not inside a workspace folder that rutter serves; open its project folder "
        "as a workspace folder (it is registered on open), or register it with "
        "`rutter workspace register ID ROOT`",
        path=where,
    )


def _encoded(rutter: Rutter, cache: EncodedSnapshots, workspace: Workspace, rel: str) -> str:
    """The worker's job: discovery's walk, then the snapshot's JSON (from `cache` when the walk
    found what it found last time)."""
    operations = rutter.instructions
    return cache.encode(operations.stack(workspace, rel), operations.snapshot)


async def profile_for(server: RutterServer, uri: str, agent: AgentChoice) -> dict[str, Any]:
    """What `agent` would load for the file at `uri` (docs/reference/profiles.md)."""
    rutter, workspace, rel = await _located(server, uri)
    views = await server.session.worker.run(rutter.profiles.view_in, workspace, rel, agent)
    return views.to_json()


async def _located(server: RutterServer, uri: str) -> tuple[Rutter, Workspace, str]:
    """The facade, the served workspace holding `uri` and its workspace-relative path."""
    await server.session.ready.wait()
    located = server.session.locate_uri(uri)
    if located is None:
        raise not_served(uri)
    rutter = server.session.app
    if rutter is None:
        raise store_unavailable()
    store = rutter.store
    workspace_id = located.folder.workspace_id
    workspace = server.session.workspaces.get(store, workspace_id)
    if workspace is None:
        checked = server.session.workspaces.clock()
        workspace = await server.session.worker.run(rutter.instructions.workspace, workspace_id)
        if server.session.store is store:
            server.session.workspaces.put(store, workspace, checked)
    return rutter, workspace, located.rel


async def effective_for(
    server: RutterServer, snapshots: EncodedSnapshots, uri: str
) -> EncodedResult:
    """The snapshot of the file at `uri`, encoded; a typed error when there is none."""
    rutter, workspace, rel = await _located(server, uri)
    text = await server.session.worker.run(_encoded, rutter, snapshots, workspace, rel)
    return EncodedResult(text)


def register(server: RutterServer, snapshots: EncodedSnapshots) -> None:
    @custom_request(
        server,
        EFFECTIVE_INSTRUCTIONS,
        EffectiveParams,
        command=COMMAND_EFFECTIVE_INSTRUCTIONS,
        command_params=effective_argument,
    )
    async def effective_instructions(
        server: RutterServer, params: EffectiveParams
    ) -> EncodedResult | dict[str, Any]:
        if params.profile is not None:
            return await profile_for(server, params.text_document.uri, params.profile)
        return await effective_for(server, snapshots, params.text_document.uri)

    @custom_command(
        server, COMMAND_SHOW_APPLICABLE_FILES, DocumentParams, command_params=lens_argument
    )
    async def show_applicable_files(server: RutterServer, params: DocumentParams) -> dict[str, Any]:
        uri = params.text_document.uri
        status = await status_for(server, uri)
        if status is None:
            return {"uri": uri, "files": []}
        files = list(status.applies_to)
        names = []
        for file_uri in files[:MAX_LISTED_FILES]:
            located = server.session.locate_uri(file_uri)
            names.append(located.rel if located else file_uri)
        more = len(files) - len(names)
        listing = ", ".join(names) + (f" and {more} more" if more > 0 else "")
        server.notify_user(
            f"{status.file.rel} applies to {len(files)} open file(s)"
            + (f": {listing}" if files else ""),
            types.MessageType.Info,
        )
        return {"uri": uri, "files": files}


class Instructions(LanguageFeature):
    def setup(self) -> None:
        self.snapshots = EncodedSnapshots()
        """Encoded answers of `rutter/effectiveInstructions` (used on the worker only)."""
        register(self.server, self.snapshots)

    async def refreshed(self, round: RefreshRound) -> None:
        for workspace_id, paths in sorted(round.changes.items()):
            self.server.protocol.notify(
                INSTRUCTIONS_CHANGED, {"workspace_id": workspace_id, "paths": sorted(paths)}
            )
