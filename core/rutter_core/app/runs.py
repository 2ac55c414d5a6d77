"""Operations on runs and their pinned instructions: one params model per operation, and
`RunOperations` (`Rutter(store, reader).runs`).

The params are what a client may send (the language server decodes its requests into them, the
CLI builds them from its options); results are the run documents of `rutter_core.runs.model`.
Types are checked here; what the values may be (a known mode, a fingerprint's form) is the
service's, so every surface gets the same typed errors. Who acts (`actor`), the directory a
surface runs in and the workspaces it serves are the surface's own facts: keyword arguments,
never params a client could set.

`confirm_refresh_command` is how a person confirms a reviewed refresh from a terminal: the CLI
prints it under a drift, and an editor that cannot ask for the confirmation itself names it.
"""

from __future__ import annotations

import shlex
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field, StrictBool, StrictStr

from rutter_core.app.models import Params, allowed
from rutter_core.discovery.targets import typed_target
from rutter_core.kernel.actors import OperatorActor
from rutter_core.kernel.errors import Hint, RutterError, UsageError
from rutter_core.memory.policy import normalize_references
from rutter_core.runs import reports, service
from rutter_core.runs.model import (
    DEFAULT_MODE,
    DEFAULT_TARGET,
    NO_REVISION,
    ActiveRuns,
    ConfirmedRefresh,
    CreatedRun,
    DeliveryReport,
    DeliveryReportList,
    DeliveryResult,
    ListedRun,
    LiveFailure,
    PinnedRevision,
    RunInspection,
    RunList,
    RunMode,
    RunRecord,
    RunStatus,
    RunStatusChange,
    SnapshotDiff,
    UnreadableRun,
)
from rutter_core.runs.textdiff import source_diffs
from rutter_core.workspaces.model import machine_mark
from rutter_core.workspaces.service import (
    find_workspace,
    get_files_here,
    get_workspace,
    infer_workspace,
    project_workspace_ids,
)

if TYPE_CHECKING:
    from rutter_core.app.facade import Rutter

RunId = Annotated[StrictStr, Field(description="the run's ID (run_...)")]
# Checked by the runs service (`invalid_mode`, `invalid_status`); stated in the schemas.
ModeName = Annotated[StrictStr, allowed(RunMode)]
StatusChangeName = Annotated[StrictStr, allowed(RunStatusChange)]
# Checked by the deliveries service (`invalid_result`).
DeliveryResultName = Annotated[StrictStr, allowed(DeliveryResult)]


class CreateRunParams(Params):
    goal: StrictStr = Field(description="what the run should achieve")
    workspace_id: StrictStr | None = Field(
        None, description="default: the registered workspace containing the surface's directory"
    )
    profile: StrictStr | None = Field(None, description="execution profile name (a label)")
    mode: ModeName = Field(DEFAULT_MODE, description="approval mode: ask, auto or full")
    target: StrictStr | None = Field(
        None,
        description="file or directory whose instructions to pin, as typed: relative to the "
        "surface's directory when that is inside the workspace, else workspace-relative, or "
        "absolute inside the workspace root (default: the workspace root)",
    )
    thread_id: StrictStr | None = Field(None, description="continue this thread")


class ListRunsParams(Params):
    workspace_id: StrictStr | None = Field(
        None,
        description="only the runs of this workspace's project, made through any registration "
        "of it (default: every workspace)",
    )
    all: StrictBool = Field(False, description="include completed, failed and cancelled runs")


class ShowRunParams(Params):
    run_id: RunId


class SetRunStatusParams(Params):
    run_id: RunId
    status: StatusChangeName = Field(description="running, paused, completed, failed or cancelled")


_FILES_OF = Field(
    None,
    description="compare with the files of this workspace: a registration of the run's project "
    "(another path, or this machine's location of it); default: the run's own workspace, or "
    "this machine's registration of its project when the run's is another machine's",
)


class InspectRunParams(Params):
    run_id: RunId
    workspace_id: StrictStr | None = _FILES_OF


class ConfirmRefreshParams(Params):
    run_id: RunId
    expected_fingerprint: StrictStr = Field(
        description='the pinned fingerprint you reviewed ("" for a run with no revision yet)'
    )
    expected_live_fingerprint: StrictStr = Field(description="the live fingerprint you reviewed")
    workspace_id: StrictStr | None = _FILES_OF


class ActiveRunsParams(Params):
    workspace_id: StrictStr | None = Field(
        None, description="only this workspace's active runs (default: every served workspace)"
    )


class ReportDeliveryParams(Params):
    run_id: RunId
    result: DeliveryResultName = Field(description="passed or failed")
    summary: StrictStr = Field(
        description="what was checked and found (stored redacted; at most 4 KiB, one person's "
        "readable text)"
    )
    references: tuple[StrictStr, ...] = Field(
        (),
        description="what the report points at: paths, URLs or other identifiers (at most 32; "
        "checked like a memory's references)",
    )


class ListDeliveryReportsParams(Params):
    run_id: RunId


class ReviewedInspection(RunInspection):
    """An inspection with the text of its drift (`rutter context instructions --run --diff`):
    `diff_text` maps each changed, added or removed source path to its unified diff."""

    diff_text: dict[str, str]


class ReviewedRefresh(ConfirmedRefresh):
    """An editor's review of a refresh: the inspection, whether a revision was appended, and
    whether the person confirmed."""

    confirmed: bool

    @classmethod
    def of(cls, inspection: RunInspection, *, refreshed: bool, confirmed: bool) -> ReviewedRefresh:
        return cls(**_fields(inspection, refreshed=refreshed, confirmed=confirmed))


@dataclass(frozen=True, slots=True)
class StatusChange:
    """A run after `set_status` (its JSON is the run's), and the status it had before."""

    run: RunRecord
    previous: RunStatus

    @property
    def changed(self) -> bool:
        return self.previous != self.run.status


def confirm_refresh_command(
    run_id: str,
    pinned: str | None,
    live: str,
    *,
    database_url: str | None = None,
    workspace_id: str | None = None,
) -> str:
    """The shell command (quoted for a POSIX shell) that confirms a refresh of `run_id` from
    `pinned` (None: no revision) to `live`; `database_url` when the store is not the default,
    `workspace_id` when the live instructions were those of another registration's files."""
    words = ["rutter"]
    if database_url:
        words += ["--database-url", database_url]
    words += [
        "context", "instructions", "--run", run_id, "--confirm",
        "--expected-fingerprint", pinned or NO_REVISION,
        "--expected-live-fingerprint", live,
    ]  # fmt: skip
    if workspace_id is not None:
        words += ["--workspace", workspace_id]
    return shlex.join(words)


class RunOperations:
    def __init__(self, rutter: Rutter) -> None:
        self._rutter = rutter

    def create(
        self, params: CreateRunParams, *, actor: OperatorActor, cwd: Path | None = None
    ) -> CreatedRun:
        """Mission, session, thread, root node and revision 1 of the pinned instructions, in
        one transaction. Without `params.workspace_id`, the registered workspace containing
        `cwd` (the surface's directory; docs/reference/workspaces.md); a relative `params.target` is
        resolved against `cwd` when it is inside the workspace (`typed_target`)."""
        store = self._rutter.store
        workspace_id = params.workspace_id
        if workspace_id is None:
            if cwd is None:
                raise UsageError(
                    "workspace_required",
                    "the run's workspace is needed",
                    hint=Hint("choose_workspace"),
                )
            workspace_id = infer_workspace(store, cwd, machine=self._rutter.machine_id).workspace_id
        # Its files are read here (the pinned snapshot): never another machine's location.
        root = get_files_here(store, workspace_id, self._rutter.machine_id).root
        target = (
            DEFAULT_TARGET
            if params.target is None
            else typed_target(params.target, root, None if cwd is None else str(cwd))
        )
        return service.create_run(
            store,
            workspace_id=workspace_id,
            goal=params.goal,
            reader=self._rutter.reader,
            actor=actor,
            profile=params.profile,
            mode=params.mode,
            target=target,
            thread_id=params.thread_id,
        )

    def report(self, params: ReportDeliveryParams, *, actor: OperatorActor) -> DeliveryReport:
        """Append a report on the run's delivery: a passed one is a completion record for the
        experience candidates of the run's thread (until a later failed one)."""
        references = normalize_references(params.references)
        return reports.report_delivery(
            self._rutter.store, params.run_id, result=params.result, summary=params.summary,
            references=references, actor=actor,
        )  # fmt: skip

    def reports(self, params: ListDeliveryReportsParams) -> DeliveryReportList:
        return reports.list_delivery_reports(self._rutter.store, params.run_id)

    def list(self, params: ListRunsParams) -> RunList:
        """Runs in creation order, the active ones unless `all`. An unknown workspace is
        `not_registered`, not an empty list."""
        store = self._rutter.store
        if params.workspace_id is not None:
            get_workspace(store, params.workspace_id)
        runs = service.list_runs(
            store, workspace_id=params.workspace_id, active_only=not params.all
        )
        return RunList(runs=runs)

    def show(self, params: ShowRunParams) -> RunRecord:
        """The run, its latest revision verified (`snapshot_tampered` otherwise)."""
        return service.get_verified_run(self._rutter.store, params.run_id)

    def set_status(self, params: SetRunStatusParams, *, actor: OperatorActor) -> StatusChange:
        store = self._rutter.store
        before = service.get_run(store, params.run_id)
        run = service.set_run_status(store, params.run_id, params.status, actor=actor)
        return StatusChange(run=run, previous=before.status)

    def inspect(self, params: InspectRunParams) -> RunInspection:
        """The run's pinned instructions against the disk now. Read-only."""
        return service.inspect_run(
            self._rutter.store,
            params.run_id,
            reader=self._rutter.reader,
            local=params.workspace_id,
            machine=self._rutter.machine_id,
        )

    def review(self, params: InspectRunParams) -> ReviewedInspection:
        """`inspect`, plus the text of the drift: a unified diff per changed source (pinned →
        live, both redacted) and added or removed sources whole, under `diff_text`."""
        inspection = self.inspect(params)
        return ReviewedInspection(**_fields(inspection, diff_text=source_diffs(inspection)))

    def confirm_refresh(
        self, params: ConfirmRefreshParams, *, actor: OperatorActor
    ) -> ConfirmedRefresh:
        """Pin the live instructions as the next revision, only if both reviewed fingerprints
        are still current (`conflict` otherwise, nothing appended)."""
        inspection, refreshed = service.confirm_refresh(
            self._rutter.store,
            params.run_id,
            reader=self._rutter.reader,
            expected_fingerprint=params.expected_fingerprint,
            expected_live_fingerprint=params.expected_live_fingerprint,
            actor=actor,
            local=params.workspace_id,
            machine=self._rutter.machine_id,
        )
        return ConfirmedRefresh(**_fields(inspection, refreshed=refreshed))

    def active(
        self, params: ActiveRunsParams, *, served: Collection[str]
    ) -> tuple[tuple[RunRecord, str], ...]:
        """The active runs of `params.workspace_id`'s project, else of the `served` workspaces'
        projects, in creation order, each with the registration whose files its drift is read
        from (`followed`): the runs made through any registration of those projects, on any
        machine, as the drift diagnostics follow them."""
        wanted = {params.workspace_id} if params.workspace_id is not None else set(served)
        return self.followed(served=wanted)

    def followed(self, *, served: Collection[str]) -> tuple[tuple[RunRecord, str], ...]:
        """The active runs of the `served` workspaces' projects, in creation order, each with
        the served registration whose files its drift is computed against: its own workspace
        when that is served, else the first served registration of its project by ID (a run
        made through another path, or on another machine)."""
        store = self._rutter.store
        local_of: dict[str, str] = {}
        with store.read() as conn:
            for workspace_id in sorted(served):
                for member in project_workspace_ids(conn, workspace_id):
                    local_of.setdefault(member, workspace_id)
            runs = service.active_runs_through(conn, local_of)
        return tuple(
            (run, run.workspace_id if run.workspace_id in served else local_of[run.workspace_id])
            for run in runs
        )

    def listed(self, run: RunRecord, local: str | None = None) -> ListedRun | UnreadableRun:
        """`run` as an editor lists it, with its drift against `local`'s files (a registration
        of its project; default: its own, or this machine's when that is another machine's),
        whose machine its registration is, and which registration the drift was read from; a
        run that cannot be inspected (e.g. a tampered revision) is listed with its error and
        nothing of it as current."""
        local = local or run.workspace_id
        with self._rutter.store.read() as conn:
            made_through = find_workspace(conn, run.workspace_id)
        where = {
            "machine": machine_mark(
                None if made_through is None else made_through.machine_id,
                self._rutter.machine_id,
            ),
            "drift_workspace_id": local,
        }
        try:
            # `local` named: another machine's registration is refused, never substituted, so
            # the drift shown is always `drift_workspace_id`'s.
            inspection = self.inspect(InspectRunParams(run_id=run.run_id, workspace_id=local))
        except RutterError as error:
            return UnreadableRun(**_fields(run, fingerprint=None, error=error.to_json(), **where))
        failure = inspection.live if isinstance(inspection.live, LiveFailure) else None
        # The run as the inspection read it, not `run`: a refresh committed between the two
        # reads would list the old revision beside the new one's drift.
        return ListedRun(
            **_fields(
                inspection.run,
                stale=inspection.stale,
                live_error=None if failure is None else failure.error,
                live_fingerprint=inspection.live_fingerprint,
                **where,
            )
        )


def _fields(model: RunRecord | RunInspection, **replaced: Any) -> dict[str, Any]:
    """The fields of `model`, with `replaced` ones, as keyword arguments for a model that
    extends its type."""
    fields = {name: getattr(model, name) for name in type(model).model_fields}
    fields.update(replaced)
    return fields


__all__ = [
    "DEFAULT_MODE",
    "DEFAULT_TARGET",
    "NO_REVISION",
    "ActiveRuns",
    "ActiveRunsParams",
    "ConfirmRefreshParams",
    "ConfirmedRefresh",
    "CreateRunParams",
    "CreatedRun",
    "DeliveryReport",
    "DeliveryReportList",
    "InspectRunParams",
    "ListDeliveryReportsParams",
    "ListRunsParams",
    "ListedRun",
    "LiveFailure",
    "PinnedRevision",
    "ReportDeliveryParams",
    "ReviewedInspection",
    "ReviewedRefresh",
    "RunInspection",
    "RunList",
    "RunOperations",
    "RunRecord",
    "SetRunStatusParams",
    "ShowRunParams",
    "SnapshotDiff",
    "StatusChange",
    "confirm_refresh_command",
]
