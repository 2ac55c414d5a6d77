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

Each has the command twin `rutter.session.<name>` taking the same object as its one argument.
The actor of forks and resumes is always "lsp": set here, never read from params. Store, disk
and git work runs on the disk worker.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar

from rutter_core.app.branches import (
    BranchOperations,
    CompareParams,
    ForkParams,
    ResumeParams,
    TreeParams,
)
from rutter_core.app.continuity import ContinuityParams
from rutter_lsp.dispatch import ACTOR, custom_request, on_worker, ready_app

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


OPERATIONS: Final = (
    _operation("fork", ForkParams, lambda ops, p: ops.fork(p, actor=ACTOR)),
    _operation("resume", ResumeParams, lambda ops, p: ops.resume(p, actor=ACTOR)),
    _operation("tree", TreeParams, lambda ops, p: ops.tree(p)),
    _operation("compare", CompareParams, lambda ops, p: ops.compare(p)),
)


def register(server: RutterServer) -> None:
    """Each request `rutter/session/{fork,resume,tree,compare}` and its command twin."""
    for operation in OPERATIONS:
        operation(server)
