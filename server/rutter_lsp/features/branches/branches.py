"""Fork, resume, the session tree and comparing nodes in the editor: a thin adapter over the
app facade (`server.session.app.branches`).

Requests (params: one JSON object, decoded into the app's params models by
`rutter_lsp.dispatch.custom_request`, unknown fields refused; results: the CLI's `--json`
documents; failures are JSON-RPC errors whose `data` is the typed error, mapped once in
`rutter_lsp.errors`):

- `rutter/session/fork` `{"node_id", "goal"}` → the new run, its branch marker, the pinned
  revision and the all-false `authority`
- `rutter/session/resume` `{"node_id"}` → the same, on the node's mission
- `rutter/session/tree` `{"session_id"}` or `{"run_id"}` → `session_tree.v1`
- `rutter/session/compare` `{"node_a", "node_b"}` → both nodes side by side, memory changes
  from A to B

Fork and resume ask the person first: the node is read and checked (an unknown, projected or
tampered node fails before anything is asked), then a `window/showMessageRequest` (Info) says
what the new run takes from the node and what it does not (`confirmation.py`), with the actions
`Fork` (or `Resume`) and `Cancel`. Only that action writes; Cancel or a dismissed message
answers `{"node_id": <the node>, "cancelled": true}` and nothing is written. A client without
the `window.showMessage` capability gets the error `confirmation_unavailable` (and the CLI
command that does it).

Each has the command twin `rutter.session.<name>` taking the same object as its one argument.
The actor of forks and resumes is always "lsp": set here, never read from params. Store, disk
and git work runs on the disk worker.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar

from lsprotocol import types

from rutter_core.app.branches import (
    BranchOperations,
    CompareParams,
    ForkParams,
    ResumeParams,
    TreeParams,
)
from rutter_core.app.continuity import ContinuityParams
from rutter_core.kernel.errors import RejectedError
from rutter_lsp.dispatch import ACTOR, custom_request, on_worker, ready_app
from rutter_lsp.features.branches.confirmation import CANCEL, CancelledBranch, question

if TYPE_CHECKING:
    from rutter_lsp.server import RutterServer

P = TypeVar("P", bound=ContinuityParams)

PREFIX: Final = "rutter/session/"
COMMAND_PREFIX: Final = "rutter.session."


class Document(Protocol):
    def to_json(self) -> dict[str, Any]: ...


def _operation(
    name: str, model: type[P], call: Callable[[BranchOperations, P], Document]
) -> Callable[[RutterServer], None]:
    """Register request `rutter/session/<name>` and command `rutter.session.<name>`, which run
    `call` on the disk worker and answer with its document."""

    def register(server: RutterServer) -> None:
        @custom_request(server, PREFIX + name, model, command=COMMAND_PREFIX + name)
        async def handle(server: RutterServer, params: P) -> dict[str, Any]:
            branches = (await ready_app(server)).branches
            return await on_worker(server, lambda: call(branches, params).to_json())

    return register


def _confirmed(
    name: str, model: type[P], call: Callable[[BranchOperations, P], Document]
) -> Callable[[RutterServer], None]:
    """Like `_operation`, for fork and resume: the person is asked first."""

    def register(server: RutterServer) -> None:
        @custom_request(server, PREFIX + name, model, command=COMMAND_PREFIX + name)
        async def handle(server: RutterServer, params: P) -> dict[str, Any]:
            branches = (await ready_app(server)).branches
            assert isinstance(params, ForkParams | ResumeParams)
            node_id = params.node_id
            source = await on_worker(server, lambda: branches.branch_source(params))
            if not server.supports("window.show_message"):
                raise RejectedError(
                    "confirmation_unavailable",
                    f"this editor cannot ask for a confirmation (window/showMessageRequest), so "
                    f"nothing was created; {name} from the command line: rutter session {name} "
                    f"{node_id}" + (" --goal GOAL" if name == "fork" else ""),
                    details={"node_id": node_id},
                )
            asked = question(name, source)
            answer = await server.window_show_message_request_async(
                types.ShowMessageRequestParams(
                    type=types.MessageType.Info,
                    message=asked.message,
                    actions=[
                        types.MessageActionItem(title=asked.action),
                        types.MessageActionItem(title=CANCEL),
                    ],
                )
            )
            if answer is None or answer.title != asked.action:
                return CancelledBranch(node_id=node_id).to_json()
            result = await on_worker(server, lambda: call(branches, params).to_json())
            # Continuity changed here: the store watch ticks now rather than at its next poll.
            server.session.store_watch.wake()
            return result

    return register


OPERATIONS: Final = (
    _confirmed("fork", ForkParams, lambda ops, p: ops.fork(p, actor=ACTOR)),
    _confirmed("resume", ResumeParams, lambda ops, p: ops.resume(p, actor=ACTOR)),
    _operation("tree", TreeParams, lambda ops, p: ops.tree(p)),
    _operation("compare", CompareParams, lambda ops, p: ops.compare(p)),
)


def register(server: RutterServer) -> None:
    """Each request `rutter/session/{fork,resume,tree,compare}` and its command twin."""
    for operation in OPERATIONS:
        operation(server)
