"""Experience candidates in the editor: a thin adapter over the app facade
(`server.session.app.candidates`), part of the memory feature.

Requests (params: one JSON object decoded into the app's params models; results: the CLI's
`--json` documents; failures: the typed error as JSON-RPC `data`, mapped in `rutter_lsp.errors`):

- `rutter/memory/candidates` `{"workspace_id"?, "uri"?}` → `{"workspace_id", "items":
  [context_memory_candidate.v1], "scanned", "truncated"}`
- `rutter/memory/candidate` `{"id", "workspace_id"?}` → one candidate (pending: with its exact
  text; resolved: no text)
- `rutter/memory/confirmCandidate` `{"id", "version", "fingerprint", "source_version",
  "confirm": true, "redact_sensitive"?, "workspace_id"?}` → `{"candidate", "memory"}`
- `rutter/memory/ignoreCandidate` `{"id", "version", "workspace_id"?}` → the candidate

The workspace of the list is `workspace_id`, else `uri`'s served folder, else the only served
folder. The client sends `confirm: true` only from the person's own action (VS Code's "Confirm
and Save to Project"). The actor is always "lsp". No agent surface has these requests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, TypeVar

from pydantic import StrictStr

from rutter_core.app.candidates import (
    CandidateOperations,
    CandidateParams,
    ConfirmCandidateParams,
    GetCandidateParams,
    IgnoreCandidateParams,
    ListCandidatesParams,
)
from rutter_lsp.dispatch import ACTOR, Handler, custom_request, on_worker, ready_app

if TYPE_CHECKING:
    from rutter_lsp.server import RutterServer

LIST: Final = "rutter/memory/candidates"
GET: Final = "rutter/memory/candidate"
CONFIRM: Final = "rutter/memory/confirmCandidate"
IGNORE: Final = "rutter/memory/ignoreCandidate"

P = TypeVar("P", bound=CandidateParams)


class ListCandidatesRequest(CandidateParams):
    workspace_id: StrictStr | None = None
    uri: StrictStr | None = None
    """A document or folder URI inside a served workspace folder: names the workspace."""


async def _candidates(server: RutterServer) -> CandidateOperations:
    return (await ready_app(server)).candidates


async def list_request(server: RutterServer, request: ListCandidatesRequest) -> dict[str, Any]:
    from rutter_lsp.features.memory.memory import workspace_named

    candidates = await _candidates(server)
    workspace_id = workspace_named(server, request.workspace_id, request.uri)
    params = ListCandidatesParams(workspace_id=workspace_id)
    return (await on_worker(server, lambda: candidates.list(params))).to_json()


async def get_request(server: RutterServer, params: GetCandidateParams) -> dict[str, Any]:
    candidates = await _candidates(server)
    return (await on_worker(server, lambda: candidates.get(params))).to_json()


async def confirm_request(server: RutterServer, params: ConfirmCandidateParams) -> dict[str, Any]:
    candidates = await _candidates(server)
    return (await on_worker(server, lambda: candidates.confirm(params, actor=ACTOR))).to_json()


async def ignore_request(server: RutterServer, params: IgnoreCandidateParams) -> dict[str, Any]:
    candidates = await _candidates(server)
    return (await on_worker(server, lambda: candidates.ignore(params, actor=ACTOR))).to_json()


def register(server: RutterServer) -> None:
    """Each request `rutter/memory/*Candidate*`."""
    _register(server, LIST, ListCandidatesRequest, list_request)
    _register(server, GET, GetCandidateParams, get_request)
    _register(server, CONFIRM, ConfirmCandidateParams, confirm_request)
    _register(server, IGNORE, IgnoreCandidateParams, ignore_request)


def _register(server: RutterServer, method: str, model: type[P], handler: Handler[P]) -> None:
    custom_request(server, method, model)(handler)
