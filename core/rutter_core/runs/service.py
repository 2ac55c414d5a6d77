"""Runs and their pinned instruction snapshots (contract section 6).

A Run works on a Mission, in a Session, as part of a Thread. `create_run` creates all of them
in one write transaction together with the run's root continuity node and revision 1 of its
pinned instruction snapshot: from then on the run uses exactly those instructions, whatever
happens on disk. `inspect_run` compares the pinned snapshot with a fresh discovery (the
"live" one) and `confirm_refresh` appends the live snapshot as the next revision, but only
when the caller names both fingerprints it reviewed and both are still current.

Revisions live in an append-only table. Every read of one re-checks it against itself (the
stored fingerprint against the stored snapshot, each source's content against its
`content_sha256`): a row edited behind rutter's back is refused, never used.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeGuard

from pydantic import ValidationError
from sqlalchemy import and_, func, insert, select, update
from sqlalchemy.engine import Connection, Row
from sqlalchemy.sql import Select

from rutter_core.discovery.fingerprint import canonical_json
from rutter_core.discovery.fsread import FileReader
from rutter_core.discovery.redaction import redact
from rutter_core.discovery.snapshot import (
    SOURCE_FINGERPRINT_EXCLUDES,
    Snapshot,
    Source,
    snapshot_fingerprint,
)
from rutter_core.discovery.walk import discover, normalize_target
from rutter_core.kernel.actors import OPERATOR_ACTORS, is_operator_actor
from rutter_core.kernel.clock import now_rfc3339
from rutter_core.kernel.errors import (
    ConflictError,
    NotFoundError,
    RejectedError,
    RutterError,
    StoreError,
)
from rutter_core.kernel.ids import new_id
from rutter_core.store import Store
from rutter_core.store.schema import (
    continuity_nodes,
    missions,
    run_instruction_snapshots,
    runs,
    sessions,
    threads,
)
from rutter_core.store.schema import workspaces as workspaces_table
from rutter_core.workspaces.service import Workspace, get_workspace

RunStatus = Literal["created", "running", "paused", "completed", "failed", "cancelled"]
RunMode = Literal["ask", "auto", "full"]

RUN_STATUSES: Final[tuple[RunStatus, ...]] = (
    "created",
    "running",
    "paused",
    "completed",
    "failed",
    "cancelled",
)
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

RUN_MODES: Final[tuple[RunMode, ...]] = ("ask", "auto", "full")
DEFAULT_MODE: Final[RunMode] = "ask"
DEFAULT_TARGET: Final = "."
ROOT_NODE_KIND: Final = "root"
MAX_GOAL_CHARS: Final = 4096
PROFILE_NAME_PATTERN: Final = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
FINGERPRINT_PATTERN: Final = re.compile(r"[0-9a-f]{64}")
NO_REVISION: Final = ""
"""The expected pinned fingerprint of a run that has no revision yet (JSON, command lines)."""
# Bidirectional controls reorder what a person reads (Trojan Source): refused in goals.
_BIDI_CONTROLS: Final = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
# Fields of a source that describe where it sits in the stack rather than what it says; a
# difference only there is reported as `order_changed`, not as `changed`.
_POSITION_FIELDS: Final = frozenset({"ordinal", "precedence"})


# -- records ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CreatedRun:
    """What `create_run` created. `snapshot` is revision 1 (not part of the JSON)."""

    run_id: str
    mission_id: str
    session_id: str
    thread_id: str
    root_node_id: str
    revision: int
    fingerprint: str
    snapshot: Snapshot = field(repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "mission_id": self.mission_id,
            "session_id": self.session_id,
            "thread_id": self.thread_id,
            "root_node_id": self.root_node_id,
            "revision": self.revision,
            "fingerprint": self.fingerprint,
        }


@dataclass(frozen=True, slots=True)
class RunRecord:
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
    updated_by: str
    created_at: str
    updated_at: str

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL_STATUSES

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "mission_id": self.mission_id,
            "session_id": self.session_id,
            "thread_id": self.thread_id,
            "workspace_id": self.workspace_id,
            "goal": self.goal,
            "profile": self.profile,
            "mode": self.mode,
            "target_path": self.target_path,
            "status": self.status,
            "revision": self.revision,
            "fingerprint": self.fingerprint,
            "created_by": self.created_by,
            "updated_by": self.updated_by,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }


@dataclass(frozen=True, slots=True)
class PinnedRevision:
    """One verified revision of a run's pinned instruction snapshot."""

    run_id: str
    revision: int
    snapshot: Snapshot = field(repr=False)
    fingerprint: str
    confirmed_by: str
    confirmed_at: str
    replaces_fingerprint: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "revision": self.revision,
            "fingerprint": self.fingerprint,
            "confirmed_by": self.confirmed_by,
            "confirmed_at": self.confirmed_at,
            "replaces_fingerprint": self.replaces_fingerprint,
            "snapshot": self.snapshot.to_json(),
        }


@dataclass(frozen=True, slots=True)
class SnapshotDiff:
    """Pinned → live, per contract section 6. `changed_fields` (path → the source fields that
    differ) is for surfaces that explain a change; it is not part of the JSON."""

    from_fingerprint: str | None
    to_fingerprint: str | None
    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[str, ...]
    order_changed: bool
    ignored_changed: bool
    requires_confirmation: bool
    changed_fields: dict[str, tuple[str, ...]] = field(default_factory=dict, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "from_fingerprint": self.from_fingerprint,
            "to_fingerprint": self.to_fingerprint,
            "added": list(self.added),
            "removed": list(self.removed),
            "changed": list(self.changed),
            "order_changed": self.order_changed,
            "ignored_changed": self.ignored_changed,
            "requires_confirmation": self.requires_confirmation,
        }


@dataclass(frozen=True, slots=True)
class RunInspection:
    """A run's pinned snapshot against discovery now.

    `live` is the error when live discovery fails closed: the run stays on its pinned
    snapshot, nothing can be confirmed, so `stale` and `requires_confirmation` are False.
    `pinned` and `revision` are None for a run with no revision yet (imported or legacy);
    then any successful live discovery is stale: confirming it creates revision 1.
    """

    run: RunRecord
    pinned: PinnedRevision | None
    live: Snapshot | RutterError
    stale: bool
    diff: SnapshotDiff

    @property
    def run_id(self) -> str:
        return self.run.run_id

    @property
    def revision(self) -> int | None:
        return None if self.pinned is None else self.pinned.revision

    @property
    def pinned_fingerprint(self) -> str | None:
        return None if self.pinned is None else self.pinned.fingerprint

    @property
    def live_fingerprint(self) -> str | None:
        return self.live.fingerprint if isinstance(self.live, Snapshot) else None

    def to_json(self) -> dict[str, Any]:
        live: dict[str, Any]
        if isinstance(self.live, Snapshot):
            live = self.live.to_json()
        else:
            live = {"error": self.live.to_json()}
        return {
            "run_id": self.run.run_id,
            "revision": self.revision,
            "pinned": None if self.pinned is None else self.pinned.snapshot.to_json(),
            "live": live,
            "stale": self.stale,
            "diff": self.diff.to_json(),
        }


# -- validation -------------------------------------------------------------------------------


def _require_operator(actor: str) -> None:
    if not is_operator_actor(actor):
        raise RejectedError(
            "actor_not_allowed",
            f"actor {actor!r} may not create or change runs; only the operator's surfaces "
            f"({', '.join(OPERATOR_ACTORS)}) may",
            details={"actor": actor, "allowed": list(OPERATOR_ACTORS)},
        )


def validate_goal(goal: str) -> str:
    """The goal as stored: stripped, non-empty, bounded, no control characters, no secrets."""
    text = goal.strip()
    if not text:
        raise RejectedError("invalid_goal", "the goal is empty; say what the run should achieve")
    if len(text) > MAX_GOAL_CHARS:
        raise RejectedError(
            "invalid_goal",
            f"the goal has {len(text)} characters, more than the limit of {MAX_GOAL_CHARS}; "
            "shorten it and keep details in the instruction files",
            details={"limit": MAX_GOAL_CHARS, "length": len(text)},
        )
    for offset, char in enumerate(text):
        control = unicodedata.category(char) == "Cc" and char not in "\n\t"
        if control or char in _BIDI_CONTROLS:
            raise RejectedError(
                "invalid_goal",
                f"the goal contains the control character U+{ord(char):04X} at offset "
                f"{offset}; use plain text (newlines and tabs are fine)",
                details={"offset": offset},
            )
    found = redact(text)
    if found.redacted:
        kinds = ", ".join(kind for kind, _count in found.counts())
        raise RejectedError(
            "secret_in_goal",
            f"the goal contains what looks like a secret ({kinds}); goals are stored in plain "
            "text, so remove it and refer to the secret by name",
            details={"kinds": [kind for kind, _count in found.counts()]},
        )
    return text


def _is_mode(value: str) -> TypeGuard[RunMode]:
    return value in RUN_MODES


def _is_status(value: str) -> TypeGuard[RunStatus]:
    return value in RUN_STATUSES


def validate_mode(mode: str) -> RunMode:
    if not _is_mode(mode):
        raise RejectedError(
            "invalid_mode",
            f"invalid mode {mode!r}; use one of {', '.join(RUN_MODES)}",
            details={"mode": mode, "allowed": list(RUN_MODES)},
        )
    return mode


def validate_profile(profile: str | None) -> str | None:
    if profile is not None and PROFILE_NAME_PATTERN.fullmatch(profile) is None:
        raise RejectedError(
            "invalid_profile",
            f"invalid profile name {profile!r}: use 1-64 characters of a-z, 0-9, '.', '_' "
            "and '-', starting with a letter or digit",
            details={"profile": profile},
        )
    return profile


def _validate_fingerprint(value: str, *, option: str) -> None:
    if FINGERPRINT_PATTERN.fullmatch(value) is None:
        raise RejectedError(
            "invalid_fingerprint",
            f"{option} {value!r} is not a fingerprint (64 lowercase hex digits); copy it from "
            "`rutter context instructions --run RUN`",
            details={"option": option, "value": value},
        )


# -- reading ----------------------------------------------------------------------------------


def _run_query() -> Select[Any]:
    """Runs with their mission's goal and their latest revision's number and fingerprint.

    The latest revision is a correlated MAX per run: an index lookup on the ledger's
    UNIQUE (run_id, revision), so reading one run does not aggregate every run's revisions.
    """
    ledger = run_instruction_snapshots
    pinned = ledger.alias("pinned")
    latest = (
        select(func.max(ledger.c.revision))
        .where(ledger.c.run_id == runs.c.run_id)
        .correlate(runs)
        .scalar_subquery()
    )
    return (
        select(
            runs,
            missions.c.goal,
            pinned.c.revision.label("latest_revision"),
            pinned.c.fingerprint.label("latest_fingerprint"),
        )
        .join(missions, missions.c.mission_id == runs.c.mission_id)
        .outerjoin(pinned, and_(pinned.c.run_id == runs.c.run_id, pinned.c.revision == latest))
    )


_RUN_QUERY: Final = _run_query()
"""Built once: statements are immutable, `.where()` derives new ones."""


def _record(row: Row[Any]) -> RunRecord:
    mode, status = str(row.mode), str(row.status)
    if not _is_mode(mode) or not _is_status(status):  # the table's CHECKs make this impossible
        raise StoreError(
            "invalid_run_row", f"run {row.run_id} has mode {mode!r}, status {status!r}"
        )
    return RunRecord(
        run_id=str(row.run_id),
        mission_id=str(row.mission_id),
        session_id=str(row.session_id),
        thread_id=str(row.thread_id),
        workspace_id=str(row.workspace_id),
        goal=str(row.goal),
        profile=None if row.profile is None else str(row.profile),
        mode=mode,
        target_path=str(row.target_path),
        status=status,
        revision=None if row.latest_revision is None else int(row.latest_revision),
        fingerprint=None if row.latest_fingerprint is None else str(row.latest_fingerprint),
        created_by=str(row.created_by),
        updated_by=str(row.updated_by),
        created_at=str(row.created_at),
        updated_at=str(row.updated_at),
    )


def _run_not_found(run_id: str) -> NotFoundError:
    return NotFoundError(
        "run_not_found",
        f"no run {run_id!r}; see `rutter run list --all` for the runs in the store",
        details={"run_id": run_id},
    )


def _load_run(conn: Connection, run_id: str) -> RunRecord:
    row = conn.execute(_RUN_QUERY.where(runs.c.run_id == run_id)).first()
    if row is None:
        raise _run_not_found(run_id)
    return _record(row)


def get_run(store: Store, run_id: str) -> RunRecord:
    with store.read() as conn:
        return _load_run(conn, run_id)


def get_verified_run(store: Store, run_id: str) -> RunRecord:
    """The run, once the latest revision its `revision` and `fingerprint` name has passed the
    integrity check (`snapshot_tampered` otherwise): for surfaces that show those to people."""
    with store.read() as conn:
        run = _load_run(conn, run_id)
        _latest(conn, run)  # the same read snapshot as `run`: the very revision it names
        return run


def list_runs(
    store: Store, *, workspace_id: str | None = None, active_only: bool = False
) -> list[RunRecord]:
    """Runs in creation order; `active_only` leaves out completed, failed and cancelled ones."""
    query = _RUN_QUERY.order_by(runs.c.created_at, runs.c.run_id)
    if workspace_id is not None:
        query = query.where(runs.c.workspace_id == workspace_id)
    if active_only:
        query = query.where(runs.c.status.in_(ACTIVE_STATUSES))
    with store.read() as conn:
        return [_record(row) for row in conn.execute(query)]


def _tampered(run_id: str, revision: int, reason: str) -> StoreError:
    return StoreError(
        "snapshot_tampered",
        f"revision {revision} of run {run_id}'s pinned instructions fails its integrity check "
        f"({reason}): the store was changed outside rutter. rutter will not use this "
        "revision; restore the store from a backup",
        details={"run_id": run_id, "revision": revision, "reason": reason},
    )


def _verified(row: Row[Any], run: RunRecord) -> PinnedRevision:
    """The revision in `row`, after checking that it is consistent with itself and its run."""
    run_id, revision = run.run_id, int(row.revision)
    try:
        document = json.loads(row.snapshot_json)
        snapshot = Snapshot.model_validate(document)
        # Hashed here too: JSON escapes can decode to lone surrogates, which no UTF-8
        # encoder (the digest's, the canonical form's) accepts.
        recomputed = snapshot_fingerprint(snapshot.to_json())
        digests = [hashlib.sha256(s.content.encode("utf-8")).hexdigest() for s in snapshot.sources]
    except (ValueError, ValidationError, RecursionError) as exc:
        # ValidationError, UnicodeEncodeError and rfc8785's CanonicalizationError are
        # ValueErrors; named for the reader. RecursionError: JSON nested beyond the decoder.
        raise _tampered(run_id, revision, "the stored snapshot is not a valid snapshot") from exc
    stored = str(row.fingerprint)
    if snapshot.fingerprint != stored:
        raise _tampered(run_id, revision, "the snapshot names another fingerprint than its row")
    if recomputed != stored:
        raise _tampered(run_id, revision, "the snapshot does not hash to its fingerprint")
    for source, digest in zip(snapshot.sources, digests, strict=True):
        if digest != source.content_sha256:
            raise _tampered(
                run_id, revision, f"the content of {source.path} does not match its sha256"
            )
    if snapshot.workspace_id != run.workspace_id or snapshot.target_path != run.target_path:
        raise _tampered(run_id, revision, "the snapshot belongs to another workspace or target")
    replaces = row.replaces_fingerprint
    return PinnedRevision(
        run_id=run_id,
        revision=revision,
        snapshot=snapshot,
        fingerprint=stored,
        confirmed_by=str(row.confirmed_by),
        confirmed_at=str(row.confirmed_at),
        replaces_fingerprint=None if replaces is None else str(replaces),
    )


def _revision_row(conn: Connection, run_id: str, revision: int | None) -> Row[Any] | None:
    table = run_instruction_snapshots
    query = select(table).where(table.c.run_id == run_id)
    if revision is None:
        query = query.order_by(table.c.revision.desc()).limit(1)
    else:
        query = query.where(table.c.revision == revision)
    return conn.execute(query).first()


def _latest(conn: Connection, run: RunRecord) -> PinnedRevision | None:
    row = _revision_row(conn, run.run_id, None)
    return None if row is None else _verified(row, run)


def latest_revision(store: Store, run_id: str) -> PinnedRevision | None:
    """The run's newest revision, verified; None when it has none yet."""
    with store.read() as conn:
        return _latest(conn, _load_run(conn, run_id))


def read_revision(store: Store, run_id: str, revision: int) -> PinnedRevision:
    """One revision of the run, verified (`revision_not_found` when there is no such one)."""
    with store.read() as conn:
        run = _load_run(conn, run_id)
        row = _revision_row(conn, run_id, revision)
    if row is None:
        raise NotFoundError(
            "revision_not_found",
            f"run {run_id} has no revision {revision}"
            + (f"; its latest is {run.revision}" if run.revision else "; it has none yet"),
            details={"run_id": run_id, "revision": revision, "latest": run.revision},
        )
    return _verified(row, run)


# -- creating ---------------------------------------------------------------------------------


def _current_workspace(conn: Connection, workspace: Workspace) -> None:
    """Refuse when the workspace was removed or re-registered since discovery read it."""
    row = conn.execute(
        select(workspaces_table.c.root).where(
            workspaces_table.c.workspace_id == workspace.workspace_id
        )
    ).first()
    if row is None or str(row.root) != workspace.root:
        raise ConflictError(
            "conflict",
            f"workspace {workspace.workspace_id!r} was removed or re-registered while the run "
            "was being created; nothing was created, try again",
            details={"workspace_id": workspace.workspace_id},
        )


def _usable_thread(conn: Connection, thread_id: str, workspace_id: str) -> None:
    row = conn.execute(select(threads).where(threads.c.thread_id == thread_id)).first()
    if row is None:
        raise NotFoundError(
            "thread_not_found",
            f"no thread {thread_id!r}; leave out --thread to start a new one, or take a "
            "thread_id from `rutter run list --all`",
            details={"thread_id": thread_id},
        )
    if str(row.workspace_id) != workspace_id:
        raise RejectedError(
            "thread_in_other_workspace",
            f"thread {thread_id} belongs to workspace {row.workspace_id!r}, not "
            f"{workspace_id!r}; a run continues a thread of its own workspace only",
            details={"thread_id": thread_id, "workspace_id": str(row.workspace_id)},
        )
    if str(row.status) != "active":
        raise RejectedError(
            "thread_archived",
            f"thread {thread_id} is {row.status}; start a new thread instead",
            details={"thread_id": thread_id, "status": str(row.status)},
        )


def _snapshot_text(snapshot: Snapshot) -> str:
    # Canonical JSON: the stored text is a function of the snapshot alone.
    return canonical_json(snapshot.to_json()).decode("utf-8")


def _append_revision(
    conn: Connection,
    run_id: str,
    revision: int,
    snapshot: Snapshot,
    *,
    replaces: str | None,
    actor: str,
    now: str,
) -> None:
    conn.execute(
        insert(run_instruction_snapshots).values(
            run_id=run_id,
            revision=revision,
            snapshot_json=_snapshot_text(snapshot),
            fingerprint=snapshot.fingerprint,
            confirmed_by=actor,
            confirmed_at=now,
            replaces_fingerprint=replaces,
        )
    )


@dataclass(frozen=True, slots=True)
class _NewRun:
    run_id: str
    mission_id: str
    session_id: str
    thread_id: str
    root_node_id: str


def _insert_run(
    conn: Connection,
    *,
    workspace_id: str,
    goal: str,
    profile: str | None,
    mode: RunMode,
    target_path: str,
    thread_id: str | None,
    actor: str,
    now: str,
) -> _NewRun:
    """Mission, thread (unless given), session, run and root node: in foreign-key order."""
    stamps = {"created_by": actor, "created_at": now, "updated_at": now}
    if thread_id is None:
        thread_id = new_id("thr")
        conn.execute(
            insert(threads).values(
                thread_id=thread_id, workspace_id=workspace_id, status="active", **stamps
            )
        )
    else:
        _usable_thread(conn, thread_id, workspace_id)
    mission_id, session_id = new_id("msn"), new_id("ses")
    run_id, root_node_id = new_id("run"), new_id("node")
    conn.execute(
        insert(missions).values(
            mission_id=mission_id, workspace_id=workspace_id, goal=goal, status="active", **stamps
        )
    )
    conn.execute(
        insert(sessions).values(
            session_id=session_id,
            workspace_id=workspace_id,
            thread_id=thread_id,
            status="active",
            **stamps,
        )
    )
    conn.execute(
        insert(runs).values(
            run_id=run_id,
            workspace_id=workspace_id,
            mission_id=mission_id,
            session_id=session_id,
            thread_id=thread_id,
            profile=profile,
            mode=mode,
            target_path=target_path,
            status="created",
            updated_by=actor,
            **stamps,
        )
    )
    conn.execute(
        insert(continuity_nodes).values(
            node_id=root_node_id,
            run_id=run_id,
            session_id=session_id,
            thread_id=thread_id,
            parent_node_id=None,
            kind=ROOT_NODE_KIND,
            created_by=actor,
            created_at=now,
        )
    )
    return _NewRun(run_id, mission_id, session_id, thread_id, root_node_id)


def create_run(
    store: Store,
    *,
    workspace_id: str,
    goal: str,
    reader: FileReader,
    actor: str,
    profile: str | None = None,
    mode: str = DEFAULT_MODE,
    target: str = DEFAULT_TARGET,
    thread_id: str | None = None,
) -> CreatedRun:
    """Create a run with its mission, session, thread (unless `thread_id` names an active
    one of the workspace), root continuity node and revision 1 of its pinned instructions for
    `target`, in one write transaction. Discovery failing closed raises its error and creates
    nothing.
    """
    _require_operator(actor)
    goal = validate_goal(goal)
    checked_mode = validate_mode(mode)
    profile = validate_profile(profile)
    workspace = get_workspace(store, workspace_id)
    # Discovery reads files: done before taking the write lock, then bound to the workspace
    # row as it was read (re-checked under the lock).
    snapshot = discover(workspace.workspace_id, workspace.root, target, reader=reader)
    now = now_rfc3339()
    with store.write() as conn:
        _current_workspace(conn, workspace)
        created = _insert_run(
            conn,
            workspace_id=workspace.workspace_id,
            goal=goal,
            profile=profile,
            mode=checked_mode,
            target_path=snapshot.target_path,
            thread_id=thread_id,
            actor=actor,
            now=now,
        )
        _append_revision(conn, created.run_id, 1, snapshot, replaces=None, actor=actor, now=now)
    return CreatedRun(
        run_id=created.run_id,
        mission_id=created.mission_id,
        session_id=created.session_id,
        thread_id=created.thread_id,
        root_node_id=created.root_node_id,
        revision=1,
        fingerprint=snapshot.fingerprint,
        snapshot=snapshot,
    )


def import_run(
    store: Store,
    *,
    workspace_id: str,
    goal: str,
    actor: str,
    profile: str | None = None,
    mode: str = DEFAULT_MODE,
    target: str = DEFAULT_TARGET,
    thread_id: str | None = None,
) -> RunRecord:
    """Record a run that has no pinned instructions (one brought in from elsewhere).

    Everything `create_run` creates except revision 1: the run can be inspected read-only,
    and its first confirmed refresh pins revision 1.
    """
    _require_operator(actor)
    goal = validate_goal(goal)
    checked_mode = validate_mode(mode)
    profile = validate_profile(profile)
    target_path = normalize_target(target)
    workspace = get_workspace(store, workspace_id)
    with store.write() as conn:
        _current_workspace(conn, workspace)
        created = _insert_run(
            conn,
            workspace_id=workspace.workspace_id,
            goal=goal,
            profile=profile,
            mode=checked_mode,
            target_path=target_path,
            thread_id=thread_id,
            actor=actor,
            now=now_rfc3339(),
        )
        return _load_run(conn, created.run_id)


# -- status -----------------------------------------------------------------------------------


def _terminal(run: RunRecord, action: str) -> RejectedError:
    return RejectedError(
        "run_terminal",
        f"run {run.run_id} is {run.status}, which is final: it cannot {action}; create a new "
        "run instead",
        details={"run_id": run.run_id, "status": run.status},
    )


def set_run_status(store: Store, run_id: str, status: str, *, actor: str) -> RunRecord:
    """Move the run to `status` per `ALLOWED_TRANSITIONS`.

    Asking for the status the run already has changes nothing (and succeeds), so a retried
    request is harmless. When the run ends, its mission and session are closed with it.
    """
    _require_operator(actor)
    targets = [s for s in RUN_STATUSES if s != "created"]
    if status not in targets:
        raise RejectedError(
            "invalid_status",
            f"invalid run status {status!r}; use one of {', '.join(targets)}",
            details={"status": status, "allowed": targets},
        )
    with store.write() as conn:
        run = _load_run(conn, run_id)
        if run.status == status:
            return run
        if run.is_terminal:
            raise _terminal(run, f"become {status}")
        allowed = ALLOWED_TRANSITIONS[run.status]
        if status not in allowed:
            raise RejectedError(
                "invalid_transition",
                f"run {run_id} is {run.status} and cannot become {status}; from {run.status} "
                f"it can become {', '.join(sorted(allowed))}",
                details={"run_id": run_id, "from": run.status, "to": status,
                         "allowed": sorted(allowed)},
            )  # fmt: skip
        now = now_rfc3339()
        conn.execute(
            update(runs)
            .where(runs.c.run_id == run_id)
            .values(status=status, updated_by=actor, updated_at=now)
        )
        if status in TERMINAL_STATUSES:
            conn.execute(
                update(missions)
                .where(missions.c.mission_id == run.mission_id)
                .values(status="closed", updated_at=now)
            )
            conn.execute(
                update(sessions)
                .where(sessions.c.session_id == run.session_id)
                .values(status="closed", updated_at=now)
            )
        return _load_run(conn, run_id)


# -- drift ------------------------------------------------------------------------------------


def _compared(source: Source) -> dict[str, Any]:
    body = source.model_dump(mode="json", exclude_none=True)
    return {
        key: value
        for key, value in body.items()
        if key not in SOURCE_FINGERPRINT_EXCLUDES and key not in _POSITION_FIELDS
    }


def diff_snapshots(pinned: Snapshot | None, live: Snapshot | None) -> SnapshotDiff:
    """What changed from `pinned` (None: the run has no revision, compared as an empty
    snapshot) to `live` (None: live discovery failed, so there is nothing to compare and the
    diff is empty).

    - `added` / `removed`: source paths only in `live` / only in `pinned`, each in its order.
    - `changed`: paths in both whose fingerprinted fields differ (content digest, kind, size,
      redactions, ...), apart from their position (`ordinal`, `precedence`).
    - `order_changed`: the paths in both appear in another relative order.
    - `ignored_changed`: the ignored entries differ.
    - `requires_confirmation`: `live` exists and its fingerprint is not the pinned one (with
      no pinned snapshot, any live one).
    """
    from_fingerprint = None if pinned is None else pinned.fingerprint
    if live is None:
        return SnapshotDiff(
            from_fingerprint=from_fingerprint,
            to_fingerprint=None,
            added=(),
            removed=(),
            changed=(),
            order_changed=False,
            ignored_changed=False,
            requires_confirmation=False,
        )
    old = list(pinned.sources) if pinned is not None else []
    new = list(live.sources)
    old_by_path = {source.path: source for source in old}
    new_by_path = {source.path: source for source in new}
    added = tuple(source.path for source in new if source.path not in old_by_path)
    removed = tuple(source.path for source in old if source.path not in new_by_path)
    changed_fields: dict[str, tuple[str, ...]] = {}
    for source in new:
        before = old_by_path.get(source.path)
        if before is None:
            continue
        was, now = _compared(before), _compared(source)
        fields = tuple(
            sorted(key for key in was.keys() | now.keys() if was.get(key) != now.get(key))
        )
        if fields:
            changed_fields[source.path] = fields
    common_old = [source.path for source in old if source.path in new_by_path]
    common_new = [source.path for source in new if source.path in old_by_path]
    old_ignored = (
        [entry.model_dump(exclude_none=True) for entry in pinned.ignored] if pinned else []
    )
    new_ignored = [entry.model_dump(exclude_none=True) for entry in live.ignored]
    return SnapshotDiff(
        from_fingerprint=from_fingerprint,
        to_fingerprint=live.fingerprint,
        added=added,
        removed=removed,
        changed=tuple(changed_fields),
        order_changed=common_old != common_new,
        ignored_changed=old_ignored != new_ignored,
        requires_confirmation=live.fingerprint != from_fingerprint,
        changed_fields=changed_fields,
    )


def _inspection(
    run: RunRecord, pinned: PinnedRevision | None, live: Snapshot | RutterError
) -> RunInspection:
    live_snapshot = live if isinstance(live, Snapshot) else None
    diff = diff_snapshots(None if pinned is None else pinned.snapshot, live_snapshot)
    return RunInspection(
        run=run, pinned=pinned, live=live, stale=diff.requires_confirmation, diff=diff
    )


def _discover_live(
    workspace_id: str, root: str, target: str, reader: FileReader
) -> Snapshot | RutterError:
    try:
        return discover(workspace_id, root, target, reader=reader)
    except RutterError as error:  # fails closed: reported, never delivered
        return error


def _workspace_root(conn: Connection, workspace_id: str) -> str:
    row = conn.execute(
        select(workspaces_table.c.root).where(workspaces_table.c.workspace_id == workspace_id)
    ).one()  # runs reference their workspace: it cannot be gone
    return str(row.root)


def inspect_run(store: Store, run_id: str, *, reader: FileReader) -> RunInspection:
    """The run's latest pinned revision (verified) against discovery now. Read-only."""
    with store.read() as conn:
        run = _load_run(conn, run_id)
        pinned = _latest(conn, run)
        root = _workspace_root(conn, run.workspace_id)
    live = _discover_live(run.workspace_id, root, run.target_path, reader)
    return _inspection(run, pinned, live)


def confirm_refresh(
    store: Store,
    run_id: str,
    *,
    reader: FileReader,
    expected_fingerprint: str | None,
    expected_live_fingerprint: str,
    actor: str,
) -> tuple[RunInspection, bool]:
    """Pin the live instructions as the run's next revision, bound to what was reviewed.

    `expected_fingerprint` is the pinned fingerprint the caller reviewed (`NO_REVISION` or
    None: the run had no revision), `expected_live_fingerprint` the live one. Inside one
    write transaction (BEGIN IMMEDIATE on SQLite) discovery runs again; unless the run's
    latest revision still has `expected_fingerprint` and discovery still yields
    `expected_live_fingerprint`, it fails with `conflict` (details: `current_fingerprint`,
    `live_fingerprint`) and appends nothing. When live equals pinned nothing is appended.
    Returns the inspection as it stands
    afterwards and whether a revision was appended. Terminal runs are `run_terminal`.
    """
    _require_operator(actor)
    if expected_fingerprint == NO_REVISION:
        expected_fingerprint = None
    if expected_fingerprint is not None:
        _validate_fingerprint(expected_fingerprint, option="expected fingerprint")
    _validate_fingerprint(expected_live_fingerprint, option="expected live fingerprint")
    with store.write() as conn:
        run = _load_run(conn, run_id)
        if run.is_terminal:
            raise _terminal(run, "take new instructions")
        pinned = _latest(conn, run)
        current = None if pinned is None else pinned.fingerprint
        root = _workspace_root(conn, run.workspace_id)
        # Under the write lock: no other confirmation can interleave between this discovery
        # and the append, so the appended snapshot is exactly the one checked.
        live = _discover_live(run.workspace_id, root, run.target_path, reader)
        live_fingerprint = live.fingerprint if isinstance(live, Snapshot) else None
        if current != expected_fingerprint or live_fingerprint != expected_live_fingerprint:
            raise _refresh_conflict(run, current, live, expected_fingerprint)
        assert isinstance(live, Snapshot)  # its fingerprint matched a valid one
        if live.fingerprint == current:
            return _inspection(run, pinned, live), False
        now = now_rfc3339()
        revision = 1 if pinned is None else pinned.revision + 1
        _append_revision(conn, run_id, revision, live, replaces=current, actor=actor, now=now)
        conn.execute(
            update(runs).where(runs.c.run_id == run_id).values(updated_by=actor, updated_at=now)
        )
        refreshed_run = _load_run(conn, run_id)
        appended = PinnedRevision(
            run_id=run_id,
            revision=revision,
            snapshot=live,
            fingerprint=live.fingerprint,
            confirmed_by=actor,
            confirmed_at=now,
            replaces_fingerprint=current,
        )
    return _inspection(refreshed_run, appended, live), True


def _refresh_conflict(
    run: RunRecord,
    current: str | None,
    live: Snapshot | RutterError,
    expected_fingerprint: str | None,
) -> ConflictError:
    details: dict[str, Any] = {
        "run_id": run.run_id,
        "current_fingerprint": current,
        "live_fingerprint": live.fingerprint if isinstance(live, Snapshot) else None,
    }
    if current != expected_fingerprint:
        why = (
            f"the run's pinned instructions are now {_short(current)} (revision {run.revision}), "
            f"not the {_short(expected_fingerprint)} you reviewed"
        )
    elif isinstance(live, RutterError):
        details["live_error"] = live.to_json()
        why = f"discovery now fails closed ({live.code}: {live.message})"
    else:
        why = (
            "the files on disk changed again since you reviewed them (live is now "
            f"{_short(live.fingerprint)})"
        )
    return ConflictError(
        "conflict",
        f"not refreshed: {why}; nothing was appended. Review again with "
        f"`rutter context instructions --run {run.run_id}` and confirm what it shows",
        details=details,
    )


def _short(fingerprint: str | None) -> str:
    return "no revision" if fingerprint is None else fingerprint[:12] + "…"


def count_runs(conn: Connection, workspace_id: str) -> int:
    """How many runs (any status) belong to `workspace_id`, in the caller's transaction: runs
    are kept for good, so a workspace that has some cannot be removed."""
    return int(
        conn.execute(
            select(func.count()).select_from(runs).where(runs.c.workspace_id == workspace_id)
        ).scalar_one()
    )
