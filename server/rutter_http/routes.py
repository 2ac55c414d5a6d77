"""Every route of `/api/v1` (docs/reference/surfaces.md: the records' routes, plus a workspace
target's instruction snapshot, a checkpoint node, pins and the answer to pin proposals): what
it reads (its query or its JSON body, derived from the app's params model by `wire`), which
bearer it needs, the app call, and the result model. The OpenAPI document (`openapi`) and
the server (`app`) are both built from this one table.

Who acts is the server's fact: every mutation is recorded as `http_control`; no body can say
otherwise (an `actor` field is unknown, and refused).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal, cast

from pydantic import BaseModel, Field
from pydantic.fields import FieldInfo

from rutter_core.app.assembly import (
    AssembleParams,
    Assembly,
    AuditList,
    AuditParams,
    FollowedReport,
    ReportParams,
)
from rutter_core.app.branches import BranchedRun, ForkParams, ResumeParams, SessionTree, TreeParams
from rutter_core.app.candidates import (
    CandidateList,
    ConfirmCandidateParams,
    ConfirmedCandidate,
    GetCandidateParams,
    IgnoreCandidateParams,
    ListCandidatesParams,
    MemoryCandidate,
)
from rutter_core.app.compaction import Compaction, CompactParams, ResolveCompactionParams
from rutter_core.app.continuity import CheckpointParams, ContinuityNode, ShowNodeParams
from rutter_core.app.history import (
    HistoryHits,
    HistoryPage,
    HistoryReadParams,
    HistorySearchParams,
)
from rutter_core.app.instructions import EffectiveInstructionsParams, Snapshot
from rutter_core.app.memory import (
    CreateMemoryParams,
    DeletedMemory,
    DeleteMemoryParams,
    EditedMemory,
    EditMemoryParams,
    ExportMemoriesParams,
    GetMemoryParams,
    ListMemoriesParams,
    MemoryExport,
    MemoryList,
    MemoryRecord,
    SetMemoryStatusParams,
    StatusName,
)
from rutter_core.app.models import Params
from rutter_core.app.pins import (
    AddPinParams,
    AnsweredProposal,
    AnswerProposalParams,
    EditPinParams,
    ListPinsParams,
    ListProposalsParams,
    Pin,
    PinList,
    ProposalList,
    RemovedPin,
    RemovePinParams,
)
from rutter_core.app.receipts import ReceiptPage, ReceiptReadParams
from rutter_core.app.runs import (
    ConfirmedRefresh,
    ConfirmRefreshParams,
    DeliveryReport,
    DeliveryReportList,
    InspectRunParams,
    ListDeliveryReportsParams,
    ReportDeliveryParams,
    RunInspection,
)
from rutter_core.app.tokens import TokenScope
from rutter_core.kernel.actors import OperatorActor
from rutter_core.kernel.errors import Hint, UsageError
from rutter_http.wire import wire_model

if TYPE_CHECKING:
    from rutter_core.app.facade import Rutter

PREFIX: Final = "/api/v1"
ACTOR: Final[OperatorActor] = "http_control"
"""Who every change made through the HTTP API is recorded as (never taken from input)."""

Scope = TokenScope
Call = Callable[["Rutter", dict[str, Any]], BaseModel]
EXPECTED_VERSION: Final = {"version": "expected_version"}


@dataclass(frozen=True)
class Route:
    method: Literal["GET", "POST", "PATCH", "DELETE"]
    path: str
    """Under `PREFIX`; `{name}` segments are path parameters."""
    operation_id: str
    summary: str
    params: type[Params]
    """The app's params model the wire shape is derived from."""
    result: type[BaseModel]
    call: Call
    """The operation, given the validated values under the params' field names."""
    path_fields: Mapping[str, str] = field(default_factory=dict)
    """Path parameter → params field."""
    drop: tuple[str, ...] = ()
    """Params fields the wire does not carry (besides the path's)."""
    renamed: Mapping[str, str] = field(default_factory=dict)
    extra: Mapping[str, tuple[Any, FieldInfo]] = field(default_factory=dict)
    status: int = 200
    tag: str = ""
    errors: tuple[int, ...] = ()
    """Failure statuses of this route beyond its scope's (e.g. a read that can conflict)."""

    @property
    def scope(self) -> Scope:
        return "read" if self.method == "GET" else "control"

    @property
    def has_body(self) -> bool:
        return self.method != "GET"

    def wire(self) -> type[BaseModel]:
        """The model of the route's query (GET) or JSON body (every other method)."""
        return _wire(self)

    def values(self, path: Mapping[str, str], wire: BaseModel) -> dict[str, Any]:
        """The params' values: the path's and the wire's, under the params' names."""
        back = {wire_name: name for name, wire_name in self.renamed.items()}
        values = {back.get(k, k): v for k, v in wire.model_dump(exclude_unset=True).items()}
        values.update({self.path_fields[k]: v for k, v in path.items()})
        return values


_WIRES: dict[str, type[BaseModel]] = {}


def _wire(route: Route) -> type[BaseModel]:
    found = _WIRES.get(route.operation_id)
    if found is None:
        suffix = "Body" if route.has_body else "Query"
        name = "".join(part.title() for part in route.operation_id.split("_")) + suffix
        found = wire_model(
            name,
            route.params,
            drop=(*route.path_fields.values(), *route.drop),
            renamed=route.renamed,
            extra=route.extra,
        )
        _WIRES[route.operation_id] = found
    return found


def _edit_memory(rutter: Rutter, values: dict[str, Any]) -> EditedMemory:
    """A PATCH edits the memory's text, or (with `status` alone) enables or disables it: one
    change, one version."""
    status = values.pop("status", None)
    if status is None:
        return rutter.memory.edit(EditMemoryParams(**values), actor=ACTOR)
    changes = set(values) - {"id", "version"}
    if changes:
        raise UsageError(
            "one_change",
            "a status change is its own request: send status with expected_version alone",
            hint=Hint("separate_status_change"),
        )
    record = rutter.memory.set_status(SetMemoryStatusParams(**values, status=status), actor=ACTOR)
    return EditedMemory(**record.model_dump(), purged=None)


_STATUS_FIELD: Final[tuple[Any, FieldInfo]] = (
    StatusName | None,
    cast(
        FieldInfo, Field(None, description="'active' or 'disabled' (alone, with expected_version)")
    ),
)


_SERVER_SETTINGS: Final = (
    "summarizer_command", "summarizer_base_url", "summarizer_model", "summarizer_key_env",
)  # fmt: skip
"""Compaction params only the server's environment gives over HTTP."""


def _with_server_command(values: Mapping[str, Any]) -> Any:
    """The compaction params with the server's own summarizer command (from its environment,
    split like a shell would, run without one): over HTTP a request never names a program."""
    import os
    import shlex

    configured = os.environ.get("RUTTER_SUMMARIZER_COMMAND", "")
    try:
        command = tuple(shlex.split(configured))
    except ValueError:
        command = ()
    given = {**values, "summarizer_command": command}
    if "action" in given:
        return ResolveCompactionParams(**given)
    return CompactParams(**given)


ROUTES: Final[tuple[Route, ...]] = (
    # -- memories
    Route(
        "GET", "/memories", "list_memories", "List explicit memories",
        ListMemoriesParams, MemoryList,
        lambda r, v: r.memory.list(ListMemoriesParams(**v)), tag="memories",
    ),
    Route(
        "GET", "/memories/export", "export_memories",
        "Export a scope's memories (context_memory_export.v1)",
        ExportMemoriesParams, MemoryExport,
        lambda r, v: r.memory.export(ExportMemoriesParams(**v)), tag="memories",
    ),
    Route(
        "GET", "/memories/{memory_id}", "get_memory", "One memory",
        GetMemoryParams, MemoryRecord,
        lambda r, v: r.memory.get(GetMemoryParams(**v)),
        path_fields={"memory_id": "id"}, tag="memories",
    ),
    Route(
        "POST", "/memories", "create_memory", "Create a memory (actor http_control)",
        CreateMemoryParams, MemoryRecord,
        lambda r, v: r.memory.create(CreateMemoryParams(**v), actor=ACTOR),
        status=201, tag="memories",
    ),
    Route(
        "PATCH", "/memories/{memory_id}", "edit_memory",
        "Edit a memory, or enable or disable it, at the version last read",
        EditMemoryParams, EditedMemory, _edit_memory,
        path_fields={"memory_id": "id"}, renamed=EXPECTED_VERSION,
        extra={"status": _STATUS_FIELD}, tag="memories",
    ),
    Route(
        "DELETE", "/memories/{memory_id}", "delete_memory",
        "Delete a memory for good (exact ID, current version, explicit body)",
        DeleteMemoryParams, DeletedMemory,
        lambda r, v: r.memory.delete(DeleteMemoryParams(**v), actor=ACTOR),
        path_fields={"memory_id": "id"}, renamed=EXPECTED_VERSION, tag="memories",
    ),
    # -- experience candidates (no agent surface has these: a person reviews them)
    Route(
        "GET", "/memory-candidates", "list_memory_candidates",
        "A workspace's experience candidates (derived now; at most 50 of 200 notes scanned)",
        ListCandidatesParams, CandidateList,
        lambda r, v: r.candidates.list(ListCandidatesParams(**v)), tag="memory-candidates",
    ),
    Route(
        "GET", "/memory-candidates/{candidate_id}", "get_memory_candidate",
        "One experience candidate: pending with its text, or resolved (no text)",
        GetCandidateParams, MemoryCandidate,
        lambda r, v: r.candidates.get(GetCandidateParams(**v)),
        path_fields={"candidate_id": "id"}, tag="memory-candidates", errors=(409,),
    ),
    Route(
        "POST", "/memory-candidates/{candidate_id}/confirm", "confirm_memory_candidate",
        "Save the candidate as project memory and resolve it (confirm must be true)",
        ConfirmCandidateParams, ConfirmedCandidate,
        lambda r, v: r.candidates.confirm(ConfirmCandidateParams(**v), actor=ACTOR),
        path_fields={"candidate_id": "id"}, renamed=EXPECTED_VERSION, tag="memory-candidates",
    ),
    Route(
        "POST", "/memory-candidates/{candidate_id}/reject", "reject_memory_candidate",
        "Resolve the candidate without a memory (ignore)",
        IgnoreCandidateParams, MemoryCandidate,
        lambda r, v: r.candidates.ignore(IgnoreCandidateParams(**v), actor=ACTOR),
        path_fields={"candidate_id": "id"}, renamed=EXPECTED_VERSION, tag="memory-candidates",
    ),
    # -- instructions
    Route(
        "GET", "/workspaces/{workspace_id}/project-instructions", "workspace_instructions",
        "The instruction snapshot of a target in a workspace, as discovered now",
        EffectiveInstructionsParams, Snapshot,
        lambda r, v: r.instructions.effective(EffectiveInstructionsParams(**v)),
        path_fields={"workspace_id": "workspace_id"}, drop=("directory",), tag="instructions",
    ),
    Route(
        "GET", "/runs/{run_id}/project-instructions", "run_instructions",
        "A run's pinned instructions against the disk now (drift)",
        InspectRunParams, RunInspection,
        lambda r, v: r.runs.inspect(InspectRunParams(**v)),
        path_fields={"run_id": "run_id"}, tag="instructions",
    ),
    Route(
        "POST", "/runs/{run_id}/project-instructions/refresh", "refresh_run_instructions",
        "Pin the live instructions as the run's next revision, if both reviewed "
        "fingerprints are current",
        ConfirmRefreshParams, ConfirmedRefresh,
        lambda r, v: r.runs.confirm_refresh(ConfirmRefreshParams(**v), actor=ACTOR),
        path_fields={"run_id": "run_id"}, tag="instructions",
    ),
    # -- continuity
    Route(
        "GET", "/sessions/{session_id}/tree", "session_tree",
        "The session tree (session_tree.v1) with drift markers of now",
        TreeParams, SessionTree,
        lambda r, v: r.branches.tree(TreeParams(**v)),
        path_fields={"session_id": "session_id"}, drop=("run_id",), tag="continuity",
    ),
    Route(
        "POST", "/runs/{run_id}/delivery-reports", "create_delivery_report",
        "Report on a run's delivery: checked, and passed or failed (a passed one is a "
        "completion record for experience candidates)",
        ReportDeliveryParams, DeliveryReport,
        lambda r, v: r.runs.report(ReportDeliveryParams(**v), actor=ACTOR),
        path_fields={"run_id": "run_id"}, status=201, tag="continuity",
    ),
    Route(
        "GET", "/runs/{run_id}/delivery-reports", "list_delivery_reports",
        "The reports on a run's delivery, oldest first",
        ListDeliveryReportsParams, DeliveryReportList,
        lambda r, v: r.runs.reports(ListDeliveryReportsParams(**v)),
        path_fields={"run_id": "run_id"}, tag="continuity",
    ),
    Route(
        "GET", "/continuity-nodes/{node_id}", "continuity_node",
        "A continuity node with its verified snapshot",
        ShowNodeParams, ContinuityNode,
        lambda r, v: r.continuity.node(ShowNodeParams(**v)),
        path_fields={"node_id": "node_id"}, tag="continuity",
    ),
    Route(
        "POST", "/runs/{run_id}/continuity-checkpoints", "create_checkpoint",
        "Append a checkpoint node of the run", CheckpointParams, ContinuityNode,
        lambda r, v: r.continuity.checkpoint(CheckpointParams(**v), actor=ACTOR),
        path_fields={"run_id": "run_id"}, status=201, tag="continuity",
    ),
    Route(
        "POST", "/continuity-nodes/{node_id}/fork", "fork_node",
        "A new mission and run from a stored node (carries no authority)",
        ForkParams, BranchedRun,
        lambda r, v: r.branches.fork(ForkParams(**v), actor=ACTOR),
        path_fields={"node_id": "node_id"}, status=201, tag="continuity",
    ),
    Route(
        "POST", "/continuity-nodes/{node_id}/resume", "resume_node",
        "A new run of the node's mission from a stored node (carries no authority)",
        ResumeParams, BranchedRun,
        lambda r, v: r.branches.resume(ResumeParams(**v), actor=ACTOR),
        path_fields={"node_id": "node_id"}, status=201, tag="continuity",
    ),
    # -- pins
    Route(
        "GET", "/threads/{thread_id}/pins", "list_thread_pins", "A thread's pins",
        ListPinsParams, PinList,
        lambda r, v: r.pins.list(ListPinsParams(**v)),
        path_fields={"thread_id": "thread_id"}, drop=("run_id",), tag="pins",
    ),
    Route(
        "GET", "/runs/{run_id}/pins", "list_run_pins", "The pins a run carries (its thread's)",
        ListPinsParams, PinList,
        lambda r, v: r.pins.list(ListPinsParams(**v)),
        path_fields={"run_id": "run_id"}, drop=("thread_id",), tag="pins",
    ),
    Route(
        "POST", "/threads/{thread_id}/pins", "add_pin", "Pin a requirement to a thread",
        AddPinParams, Pin,
        lambda r, v: r.pins.add(AddPinParams(**v), actor=ACTOR),
        path_fields={"thread_id": "thread_id"}, status=201, tag="pins",
    ),
    Route(
        "PATCH", "/pins/{pin_id}", "edit_pin", "Edit a pin at the version last read",
        EditPinParams, Pin,
        lambda r, v: r.pins.edit(EditPinParams(**v), actor=ACTOR),
        path_fields={"pin_id": "pin_id"}, renamed=EXPECTED_VERSION, tag="pins",
    ),
    Route(
        "DELETE", "/pins/{pin_id}", "remove_pin", "Remove a pin at the version last read",
        RemovePinParams, RemovedPin,
        lambda r, v: r.pins.remove(RemovePinParams(**v), actor=ACTOR),
        path_fields={"pin_id": "pin_id"}, renamed=EXPECTED_VERSION, tag="pins",
    ),
    Route(
        "GET", "/pin-proposals", "list_pin_proposals",
        "Pins agents proposed (pending ones, or all with `all`)",
        ListProposalsParams, ProposalList,
        lambda r, v: r.pins.proposals(ListProposalsParams(**v)), tag="pins",
    ),
    Route(
        "POST", "/pin-proposals/{proposal_id}/answer", "answer_pin_proposal",
        "Answer a proposal: pin its text, discuss, or a custom reply (pinned only with `pin`)",
        AnswerProposalParams, AnsweredProposal,
        lambda r, v: r.pins.answer(AnswerProposalParams(**v), actor=ACTOR),
        path_fields={"proposal_id": "proposal_id"}, tag="pins",
    ),
    # -- history (docs/reference/history.md): reads, whatever bearer
    Route(
        "GET", "/history/search", "history_search",
        "Search memories and the run lineage's notes, messages, receipts, summaries and "
        "checkpoints (substring, case-insensitive); `scopes` is one comma-separated list",
        HistorySearchParams, HistoryHits,
        lambda r, v: r.history.search(HistorySearchParams(**v)), tag="history",
    ),
    Route(
        "GET", "/history/read", "history_read",
        "One page of a hit's text, re-checked: 409 changed since the search, 410 gone",
        HistoryReadParams, HistoryPage,
        lambda r, v: r.history.read(HistoryReadParams(**v)), tag="history",
        errors=(409, 410),
    ),
    # -- compaction and receipts (docs/reference/continuity.md#compaction)
    Route(
        "POST", "/threads/{thread_id}/compactions", "compact_thread",
        "Summarize the thread's older messages, keeping the newest 4 (nothing is deleted); the "
        "same operation_key answers the stored result. A command summarizer is the server's "
        "own (RUTTER_SUMMARIZER_COMMAND), and so are a model summarizer's endpoint, model and "
        "key (RUTTER_SUMMARIZER_OPENAI_* / RUTTER_SUMMARIZER_ANTHROPIC_*): a request never names "
        "a program to run, an address to send to or a variable to read",
        CompactParams, Compaction,
        lambda r, v: r.compaction.compact(_with_server_command(v), actor=ACTOR),
        path_fields={"thread_id": "thread_id"}, drop=_SERVER_SETTINGS, status=201,
        tag="continuity", errors=(502,),
    ),
    Route(
        "POST", "/compactions/{operation_key}/resolve", "resolve_compaction",
        "Abandon or retry a compaction whose result is unknown (pending_verification)",
        ResolveCompactionParams, Compaction,
        lambda r, v: r.compaction.resolve(_with_server_command(v), actor=ACTOR),
        path_fields={"operation_key": "operation_key"}, drop=_SERVER_SETTINGS,
        tag="continuity", errors=(502,),
    ),
    Route(
        "GET", "/receipts/{receipt_id}", "read_receipt",
        "One page of the tool result a receipt stands for, re-checked within its run",
        ReceiptReadParams, ReceiptPage,
        lambda r, v: r.receipts.read(ReceiptReadParams(**v)),
        path_fields={"receipt_id": "receipt_id"}, tag="context",
    ),
    # -- context assembly and its audit (docs/reference/assembly.md)
    Route(
        "POST", "/runs/{run_id}/context/assemble", "assemble_context",
        "What the run's agent is given now, in authority order within the budget; the "
        "assembly is appended to the run's audit (actor http_control)",
        AssembleParams, Assembly,
        lambda r, v: r.assembly.assemble(AssembleParams(**v), actor=ACTOR),
        path_fields={"run_id": "run_id"}, tag="context",
    ),
    Route(
        "GET", "/runs/{run_id}/context/audit", "context_audit",
        "The run's stored assemblies, newest first",
        AuditParams, AuditList,
        lambda r, v: r.assembly.audit(AuditParams(**v)),
        path_fields={"run_id": "run_id"}, tag="context",
    ),
    Route(
        "POST", "/context/assemblies/{assembly_id}/report", "report_context",
        "Record once which delivered sources were followed or ignored (reported_by "
        "http_control)",
        ReportParams, FollowedReport,
        lambda r, v: r.assembly.report(ReportParams(**v), actor=ACTOR),
        path_fields={"assembly_id": "assembly_id"}, tag="context",
    ),
)  # fmt: skip
