"""Thread pins and pin proposals in the editor: a thin adapter over the app facade
(`server.session.app.pins`).

Requests (params: one JSON object decoded into the app's params models by
`rutter_lsp.dispatch.custom_request`, unknown fields refused; results: the CLI's `--json`
documents; failures: JSON-RPC errors whose `data` is the typed error):

- `rutter/pin/list` `{"thread_id"}` or `{"run_id"}` → `{"thread_id", "run_id", "pins",
  "count", "total_chars", "limits"}`
- `rutter/pin/add` `{"thread_id", "text"}` → the pin (version 1)
- `rutter/pin/edit` `{"pin_id", "version", "text"}` → the pin (version + 1)
- `rutter/pin/remove` `{"pin_id", "version"}` → `{"pin_id", "thread_id", "version", "removed"}`
- `rutter/pin/proposals` `{"workspace_id"?, "thread_id"?, "all"?}` → `{"proposals", "has_more"}`
- `rutter/pin/answer` `{"proposal_id", "choice", "text"?, "pin"?}` → `{"proposal", "pin"}`

Each has the command twin `rutter.pin.<name>`. The actor is always "lsp" (an operator), set
here. The notification `rutter/pinProposalsChanged` `{"workspace_ids"}` (see `watch`) tells the
client when the pending proposals of a served workspace changed (one arrived or was answered),
whichever process made the change.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar

from rutter_core.app.pins import (
    AddPinParams,
    AnswerProposalParams,
    EditPinParams,
    ListPinsParams,
    ListProposalsParams,
    PinOperations,
    PinParams,
    RemovePinParams,
)
from rutter_lsp.dispatch import ACTOR, worker_request
from rutter_lsp.feature import LanguageFeature
from rutter_lsp.features.pins.watch import PIN_PROPOSALS_CHANGED, ProposalWatch

if TYPE_CHECKING:
    from rutter_core.app.facade import Rutter
    from rutter_lsp.server import RutterServer

P = TypeVar("P", bound=PinParams)

PREFIX: Final = "rutter/pin/"
COMMAND_PREFIX: Final = "rutter.pin."


class Document(Protocol):
    def to_json(self) -> dict[str, Any]: ...


def _operation(
    name: str, model: type[P], call: Callable[[PinOperations, P], Document]
) -> Callable[[RutterServer], None]:
    def register(server: RutterServer) -> None:
        @worker_request(server, PREFIX + name, model, command=COMMAND_PREFIX + name)
        def handle(app: Rutter, params: P) -> dict[str, Any]:
            return call(app.pins, params).to_json()

    return register


OPERATIONS: Final = (
    _operation("list", ListPinsParams, lambda ops, p: ops.list(p)),
    _operation("add", AddPinParams, lambda ops, p: ops.add(p, actor=ACTOR)),
    _operation("edit", EditPinParams, lambda ops, p: ops.edit(p, actor=ACTOR)),
    _operation("remove", RemovePinParams, lambda ops, p: ops.remove(p, actor=ACTOR)),
    _operation("proposals", ListProposalsParams, lambda ops, p: ops.proposals(p)),
    _operation("answer", AnswerProposalParams, lambda ops, p: ops.answer(p, actor=ACTOR)),
)


class Pins(LanguageFeature):
    """Each request `rutter/pin/*` and its command twin `rutter.pin.*`; the watch of pending
    proposals (`ProposalWatch`, owned here) follows the session's store watch."""

    def setup(self) -> None:
        self.proposals = ProposalWatch(self.server)
        self.server.session.store_watch.subscribe(self.proposals.store_changed)
        for operation in OPERATIONS:
            operation(self.server)


__all__ = ["PIN_PROPOSALS_CHANGED", "Pins", "ProposalWatch"]
