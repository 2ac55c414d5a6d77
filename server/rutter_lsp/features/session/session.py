"""Session continuity in the editor: a thin adapter over the app facade
(`server.session.app.continuity`).

Requests (params: one JSON object, decoded into the app's params models by
`rutter_lsp.dispatch.custom_request`, unknown fields refused; results: the CLI's `--json`
documents; failures are JSON-RPC errors whose `data` is the typed error, mapped once in
`rutter_lsp.errors`):

- `rutter/session/addMessage` `{"thread_id", "role", "text", "external_id"?}` → the stored
  message plus `created`
- `rutter/session/messages` `{"thread_id", "limit"?, "before_seq"?}` → `{"thread_id",
  "messages", "has_more"}`
- `rutter/session/addNote` `{"thread_id", "kind", "text"}` → the note (version 1)
- `rutter/session/notes` `{"thread_id", "all"?}` → `{"thread_id", "notes"}`
- `rutter/session/editNote` `{"note_id", "version", "text"}` → the note (version + 1)
- `rutter/session/supersedeNote` `{"note_id", "version", "text"?}` → `{"note",
  "replacement"}`
- `rutter/session/checkpoint` `{"run_id", "title", "summary"?}` → the node with its
  `continuity_snapshot.v1` under `snapshot`
- `rutter/session/node` `{"node_id"}` → the node, verified

Each has the command twin `rutter.session.<name>` taking the same object as its one argument.
The actor of notes and checkpoints and the source of messages are always "lsp": set here,
never read from params (a `source` or `actor` field is refused as an unknown field). Store
work runs on the disk worker.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar

from rutter_core.app.continuity import (
    AddMessageParams,
    AddNoteParams,
    CheckpointParams,
    ContinuityOperations,
    ContinuityParams,
    EditNoteParams,
    ListMessagesParams,
    ListNotesParams,
    ShowNodeParams,
    SupersedeNoteParams,
)
from rutter_lsp.dispatch import ACTOR, custom_request, on_worker, ready_app

if TYPE_CHECKING:
    from rutter_lsp.server import RutterServer

P = TypeVar("P", bound=ContinuityParams)


class Document(Protocol):
    """What every continuity operation answers with: a model with its wire document."""

    def to_json(self) -> dict[str, Any]: ...


PREFIX: Final = "rutter/session/"
COMMAND_PREFIX: Final = "rutter.session."


async def _continuity(server: RutterServer) -> ContinuityOperations:
    """The continuity operations, once the store is open."""
    return (await ready_app(server)).continuity


def _operation(
    name: str,
    model: type[P],
    call: Callable[[ContinuityOperations, P], Document],
    *,
    writes: bool = False,
) -> Callable[[RutterServer], None]:
    """Register request `rutter/session/<name>` and command `rutter.session.<name>`, which run
    `call` on the disk worker and answer with its document (after a write, the sessions
    monitor checks at once: `rutter/sessionsChanged`)."""

    def register(server: RutterServer) -> None:
        @custom_request(server, PREFIX + name, model, command=COMMAND_PREFIX + name)
        async def handle(server: RutterServer, params: P) -> dict[str, Any]:
            continuity = await _continuity(server)
            result = await on_worker(server, lambda: call(continuity, params).to_json())
            if writes:
                # Continuity changed here: the store watch ticks now rather than at its next poll.
                server.session.store_watch.wake()
            return result

    return register


OPERATIONS: Final = (
    _operation(
        "addMessage", AddMessageParams, lambda ops, p: ops.add_message(p, source=ACTOR), writes=True
    ),
    _operation("messages", ListMessagesParams, lambda ops, p: ops.messages(p)),
    _operation("addNote", AddNoteParams, lambda ops, p: ops.add_note(p, actor=ACTOR), writes=True),
    _operation("notes", ListNotesParams, lambda ops, p: ops.notes(p)),
    _operation(
        "editNote", EditNoteParams, lambda ops, p: ops.edit_note(p, actor=ACTOR), writes=True
    ),
    _operation(
        "supersedeNote",
        SupersedeNoteParams,
        lambda ops, p: ops.supersede_note(p, actor=ACTOR),
        writes=True,
    ),
    _operation(
        "checkpoint", CheckpointParams, lambda ops, p: ops.checkpoint(p, actor=ACTOR), writes=True
    ),
    _operation("node", ShowNodeParams, lambda ops, p: ops.node(p)),
)


def register(server: RutterServer) -> None:
    """Each request `rutter/session/*` and its command twin `rutter.session.*`."""
    for operation in OPERATIONS:
        operation(server)
