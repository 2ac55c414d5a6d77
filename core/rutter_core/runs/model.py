"""The documents of runs and their pinned instructions (docs/reference/runs.md), as pydantic models.

Each model's JSON dump (`to_json`) is exactly the wire document every surface prints or returns:
the CLI's `--json`, the language server's results, and later the HTTP API. Field order is the
document's key order; a field that may be null is always present. Fields that only Python
callers use (the snapshot a run was created with, which fields of a changed source differ) are
excluded from the dump.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, TypeGuard, get_args

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, field_serializer

from rutter_core.discovery.snapshot import Snapshot
from rutter_core.kernel.actors import CREATED_BY_PERSON, UPDATED_BY_PERSON
from rutter_core.kernel.errors import RutterError
from rutter_core.workspaces.model import MachineMark

RunStatus = Literal["created", "running", "paused", "completed", "failed", "cancelled"]
RunMode = Literal["ask", "auto", "full"]
DeliveryResult = Literal["passed", "failed"]
RunStatusChange = Literal["running", "paused", "completed", "failed", "cancelled"]
"""A status a run can be moved to: every one but `created`, which only a new run has."""

RUN_STATUSES: Final[tuple[RunStatus, ...]] = get_args(RunStatus)
TERMINAL_STATUSES: Final[frozenset[RunStatus]] = frozenset({"completed", "failed", "cancelled"})
ACTIVE_STATUSES: Final[tuple[RunStatus, ...]] = ("created", "running", "paused")
ALLOWED_TRANSITIONS: Final[dict[RunStatus, frozenset[RunStatus]]] = {
    # A run that never started can still be given up on, or fail to start.
    "created": frozenset({"running", "failed", "cancelled"}),
    "running": frozenset({"paused", "completed", "failed", "cancelled"}),
    # Only a running run completes: resume a paused one first.
    "paused": frozenset({"running", "failed", "cancelled"}),
    "completed": frozenset(),
    "failed": frozenset(),
    "cancelled": frozenset(),
}
"""status -> the statuses `set_run_status` may move it to. Terminal statuses allow none."""

RUN_MODES: Final[tuple[RunMode, ...]] = get_args(RunMode)
DEFAULT_MODE: Final[RunMode] = "ask"
DEFAULT_TARGET: Final = "."
NO_REVISION: Final = ""
"""The expected pinned fingerprint of a run that has no revision yet (JSON, command lines)."""


def is_run_mode(value: str) -> TypeGuard[RunMode]:
    return value in RUN_MODES


def is_run_status(value: str) -> TypeGuard[RunStatus]:
    return value in RUN_STATUSES


def _snapshot_document(snapshot: Snapshot) -> dict[str, Any]:
    return snapshot.to_json()


SnapshotDocument = Annotated[
    Snapshot, PlainSerializer(_snapshot_document, return_type=dict[str, Any])
]
"""A snapshot inside a run document: its own JSON (`project_instruction_snapshot.v1`), which
leaves out optional fields that are not set rather than writing null."""


class RunDocument(BaseModel):
    """Base of the run documents: frozen, no unknown fields, `to_json` is the wire dump."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class CreatedRun(RunDocument):
    """What `create_run` created. `snapshot` is revision 1 (not part of the JSON)."""

    run_id: str
    mission_id: str
    session_id: str
    thread_id: str
    root_node_id: str
    revision: int
    fingerprint: str
    snapshot: Snapshot = Field(exclude=True, repr=False)


class RunRecord(RunDocument):
    """A run as stored. `revision` / `fingerprint` are its latest pinned revision's (None when
    it has none yet), read from the ledger without re-verifying the snapshot."""

    run_id: str
    mission_id: str
    session_id: str
    thread_id: str
    workspace_id: str
    goal: str
    profile: str | None
    mode: RunMode
    target_path: str
    status: RunStatus
    revision: int | None
    fingerprint: str | None
    created_by: str
    created_by_person: str | None = Field(description=CREATED_BY_PERSON)
    updated_by: str
    updated_by_person: str | None = Field(description=UPDATED_BY_PERSON)
    created_at: str
    updated_at: str

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL_STATUSES


MAX_REPORT_SUMMARY_BYTES: Final = 4096
"""A delivery report's summary, in UTF-8 bytes, before and after redaction."""


class DeliveryReport(RunDocument):
    """A report on a run's delivery (`rutter run report`): whether it was checked and `passed` or
    `failed`, what was found, and what it points at. Append-only; the run's newest report that
    passed is a completion record for experience candidates, and a later failed one takes that
    back. The run itself is unchanged by it."""

    report_id: str
    run_id: str
    thread_id: str
    result: DeliveryResult
    summary: str
    """Redacted like every text (`summary_redacted` says whether something was replaced)."""
    summary_redacted: bool
    references: tuple[str, ...]
    """What the report points at (paths, URLs, other identifiers), sorted."""
    created_by: str
    created_by_person: str | None = Field(description=CREATED_BY_PERSON)
    created_at: str


class DeliveryReportList(RunDocument):
    """`rutter run reports RUN --json`: the run's delivery reports, oldest first."""

    run_id: str
    reports: tuple[DeliveryReport, ...]


class RunList(RunDocument):
    """`rutter run list --json`: runs in creation order."""

    runs: list[RunRecord]


class PinnedRevision(RunDocument):
    """One verified revision of a run's pinned instruction snapshot."""

    run_id: str
    revision: int
    fingerprint: str
    confirmed_by: str
    confirmed_by_person: str | None = Field(
        description="who confirmed this revision (null: confirmed before people were recorded)"
    )
    confirmed_at: str
    replaces_fingerprint: str | None
    snapshot: SnapshotDocument = Field(repr=False)


class SnapshotDiff(RunDocument):
    """Pinned → live, per docs/reference/runs.md. `changed_fields` (path → the source fields that
    differ) is for surfaces that explain a change; it is not part of the JSON."""

    from_fingerprint: str | None
    to_fingerprint: str | None
    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[str, ...]
    order_changed: bool
    ignored_changed: bool
    requires_confirmation: bool
    changed_fields: dict[str, tuple[str, ...]] = Field(default_factory=dict, exclude=True)


class LiveFailure(RunDocument):
    """Live discovery failed closed: the run stays on its pinned snapshot. JSON: `{"error":
    <the error document>}` (docs/reference/errors.md)."""

    error: dict[str, Any]

    @classmethod
    def of(cls, error: RutterError) -> LiveFailure:
        return cls(error=error.to_json())

    @property
    def code(self) -> str:
        return str(self.error["code"])

    @property
    def message(self) -> str:
        return str(self.error["message"])

    @property
    def path(self) -> str | None:
        path = self.error.get("path")
        return None if path is None else str(path)


class RunInspection(RunDocument):
    """A run's pinned snapshot against discovery now (`rutter context instructions --run`).

    `live` is a `LiveFailure` when live discovery fails closed: the run stays on its pinned
    snapshot, nothing can be confirmed, so `stale` and `requires_confirmation` are False.
    `pinned` and `revision` are None for a run with no revision yet (imported or legacy);
    then any successful live discovery is stale: confirming it creates revision 1. In the JSON
    `pinned` is the pinned snapshot; `run` (the run as stored) is not part of it.
    """

    run_id: str
    revision: int | None
    pinned: PinnedRevision | None
    live: SnapshotDocument | LiveFailure
    stale: bool
    diff: SnapshotDiff
    run: RunRecord = Field(exclude=True, repr=False)

    @field_serializer("pinned")
    def _pinned_snapshot(self, pinned: PinnedRevision | None) -> dict[str, Any] | None:
        return None if pinned is None else pinned.snapshot.to_json()

    @property
    def pinned_fingerprint(self) -> str | None:
        return None if self.pinned is None else self.pinned.fingerprint

    @property
    def live_snapshot(self) -> Snapshot | None:
        return self.live if isinstance(self.live, Snapshot) else None

    @property
    def live_fingerprint(self) -> str | None:
        return self.live.fingerprint if isinstance(self.live, Snapshot) else None


class ConfirmedRefresh(RunInspection):
    """A confirmed refresh's answer: the inspection as it stands afterwards, and whether a
    revision was appended (False: the run already used the instructions on disk)."""

    refreshed: bool


class FollowedRun(RunRecord):
    """An active run of a served workspace's project, as an editor lists it: `workspace_id`
    is the registration it was made through (on this machine or another), `machine` whose
    that registration is, and `drift_workspace_id` the served registration whose files its
    drift is computed against (the drift diagnostics' too)."""

    machine: MachineMark | None = Field(default=None, exclude_if=lambda value: value is None)
    """Whose registration `workspace_id` is, seen from this machine."""
    drift_workspace_id: str | None = Field(default=None, exclude_if=lambda value: value is None)
    """The served registration whose files the drift was read from: `workspace_id` itself,
    or, for a run made through another registration of the project (another path, another
    machine), the first served registration of the project by ID."""


class ListedRun(FollowedRun):
    """An active run as an editor lists it: the run, whether the disk drifted from what it
    pinned, and the live fingerprint (null when live discovery fails closed, then with the
    error under `live_error`)."""

    stale: bool
    live_error: dict[str, Any] | None = Field(default=None, exclude_if=lambda value: value is None)
    live_fingerprint: str | None


class UnreadableRun(FollowedRun):
    """An active run whose inspection failed (e.g. a tampered revision): nothing of it is shown
    as current (`fingerprint` null, not stale), and `error` says why."""

    stale: Literal[False] = False
    error: dict[str, Any]


class ActiveRuns(RunDocument):
    """`rutter/runs`: the active runs, each with its drift or its failure."""

    runs: list[ListedRun | UnreadableRun]


__all__ = [
    "ACTIVE_STATUSES",
    "ALLOWED_TRANSITIONS",
    "DEFAULT_MODE",
    "DEFAULT_TARGET",
    "NO_REVISION",
    "RUN_MODES",
    "RUN_STATUSES",
    "TERMINAL_STATUSES",
    "ActiveRuns",
    "ConfirmedRefresh",
    "CreatedRun",
    "ListedRun",
    "LiveFailure",
    "PinnedRevision",
    "RunDocument",
    "RunInspection",
    "RunList",
    "RunMode",
    "RunRecord",
    "RunStatus",
    "RunStatusChange",
    "SnapshotDiff",
    "SnapshotDocument",
    "UnreadableRun",
    "is_run_mode",
    "is_run_status",
]
