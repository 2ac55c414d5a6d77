"""Fork and resume (docs/reference/continuity.md): which nodes can be branched from, what a node
pins, and the answer's document.

A fork or resume starts a new run from a stored node: its line begins with a branch marker
(`fork` or `resume`) whose parent is that node, and its revision 1 is the instruction snapshot
the node pins: a checkpoint's `instructions` (run, revision, fingerprint), or revision 1 of the
run a root or branch marker starts. The run is created by `runs.service.create_pinned_run`
(runs use continuity, not the reverse); the app layer reads the node here, the revision from the
runs' ledger, and hands both over in one write transaction.

Projected nodes (decision notes shown in a session tree) are for browsing: asked to branch from
one, rutter refuses (`rejected`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from pydantic import Field
from sqlalchemy.engine import Connection

from rutter_core.continuity import repo
from rutter_core.continuity.checkpoints import read_node, tampered
from rutter_core.continuity.model import ContinuityDocument
from rutter_core.continuity.nodes import BranchKind
from rutter_core.continuity.policy import NOTE_ID
from rutter_core.continuity.snapshot import INHERITS, Authority, ContinuityNode, Inherited
from rutter_core.discovery.fingerprint import text_sha256
from rutter_core.kernel.errors import ConflictError, Hint, RejectedError


@dataclass(frozen=True, slots=True)
class PinnedRef:
    """The pinned revision a node names: `fingerprint` is None for a root or branch marker
    (it pins its run's revision 1, whatever that is)."""

    run_id: str
    revision: int
    fingerprint: str | None


class BranchedRun(ContinuityDocument):
    """The answer of `session fork` and `session resume`: the new run, its branch marker, the
    revision it pinned, and what it holds of authority: nothing."""

    kind: BranchKind
    run_id: str
    mission_id: str
    session_id: str
    thread_id: str
    node_id: str
    """The branch marker: the first node of the new run."""
    parent_node_id: str
    """The node branched from."""
    source_run_id: str
    revision: int
    """Always 1: the new run's first pinned revision."""
    fingerprint: str
    """The pinned snapshot's fingerprint: the one the source node pins."""
    status: str
    mode: str
    """Always the default `ask`: a mode that waives approvals is never carried over."""
    profile: str | None
    """Always null: execution profiles are never carried over."""
    inherits: tuple[Inherited, ...] = INHERITS
    """Exactly what the new run's assembled context is given of the node: see `inherited`."""
    not_inherited: tuple[Inherited, ...] = ()
    """What the new run is not given: a fork's pins (pin them again on the new thread)."""
    operation_key: str | None = None
    authority: Authority = Field(default_factory=Authority)


def inherited(
    node: ContinuityNode, kind: BranchKind
) -> tuple[tuple[Inherited, ...], tuple[Inherited, ...]]:
    """What a run branched from `node` is given (and, for a fork, what it is not): the
    workspace and pinned instructions always; the checkpoint's summary and messages when it
    carries them, and its memory references; the task's pins for a resume only."""
    given: list[Inherited] = ["workspace", "pinned_instructions"]
    snapshot = node.snapshot
    if snapshot is not None:
        if snapshot.compaction_summary is not None:
            given.append("compaction_summary")
        if snapshot.messages.items:
            given.append("messages")
        given.append("memory_references")
    if kind == "resume":
        return (*given, "pins"), ()
    return tuple(given), ("pins",)


def branchable_node(conn: Connection, node_id: str) -> ContinuityNode:
    """The stored node to fork or resume from, verified, in the caller's transaction: a
    projected node is `rejected`, an unknown one `not_found`, a tampered one
    `snapshot_tampered`."""
    refuse_projected(conn, node_id)
    return read_node(conn, node_id)


def refuse_projected(conn: Connection, node_id: str) -> None:
    """`rejected` when `node_id` names a node that session trees project (a decision note)."""
    if not isinstance(node_id, str) or NOTE_ID.fullmatch(node_id) is None:
        return
    note = repo.find_note(conn, node_id)
    if note is not None and note.kind == "decision":
        raise RejectedError(
            "rejected",
            f"{node_id} is a projected node (a decision note shown in the session tree): it "
            "records no state, so it cannot be forked, resumed or compared; choose a stored "
            "node (a checkpoint, a root or a branch marker)",
            details={"node_id": node_id, "projected": True, "kind": note.kind},
            hint=Hint("choose_stored_node"),
        )


def branch_origin(conn: Connection, run_id: str) -> tuple[BranchKind, ContinuityNode] | None:
    """How the run began when it was branched: the kind of its branch marker (`fork` or
    `resume`) and the node it was branched from, verified; None for a run that began a
    thread of its own."""
    marker = repo.run_start_node(conn, run_id, ("fork", "resume"))
    if marker is None or marker.parent_node_id is None:
        return None
    kind: BranchKind = "fork" if marker.kind == "fork" else "resume"
    return kind, read_node(conn, marker.parent_node_id)


def branch_request_digest(node_id: str, kind: BranchKind, goal: str | None) -> str:
    return text_sha256(json.dumps({"node_id": node_id, "kind": kind, "goal": goal}))


def keyed_branch(
    conn: Connection, operation_key: str, node_id: str, kind: BranchKind, goal: str | None
) -> repo.BranchOperation | None:
    """The resume or fork already made under `operation_key` (None: none yet); the key used
    for another request is `operation_key_conflict`."""
    found = repo.find_branch_operation(conn, operation_key)
    if found is None:
        return None
    if found.request_sha256 != branch_request_digest(node_id, kind, goal):
        raise ConflictError(
            "operation_key_conflict",
            f"operation key {operation_key} was used for another {found.kind} (of node "
            f"{found.node_id}, run {found.run_id}); use a new key for a new request",
            details={"operation_key": operation_key, "run_id": found.run_id},
        )
    return found


def record_keyed_branch(
    conn: Connection, operation_key: str, *, node_id: str, kind: BranchKind, goal: str | None,
    run_id: str, marker_node_id: str, actor: str, now: str,
) -> None:  # fmt: skip
    repo.insert_branch_operation(
        conn,
        repo.BranchOperation(
            operation_key,
            kind,
            node_id,
            branch_request_digest(node_id, kind, goal),
            run_id,
            marker_node_id,
        ),
        actor=actor,
        now=now,
    )


def pinned_of(node: ContinuityNode) -> PinnedRef:
    """The revision `node` pins: a checkpoint's, or revision 1 of the run a root or a branch
    marker starts."""
    if node.snapshot is None:
        return PinnedRef(run_id=node.run_id, revision=1, fingerprint=None)
    pinned = node.snapshot.instructions
    return PinnedRef(run_id=pinned.run_id, revision=pinned.revision, fingerprint=pinned.fingerprint)


def require_pinned_match(node: ContinuityNode, ref: PinnedRef, ledger_fingerprint: str) -> None:
    """The ledger's revision must be the one the checkpoint recorded: both are append-only, so
    a difference means the store was rewritten (`snapshot_tampered`)."""
    if ref.run_id != node.run_id:
        raise tampered(node.node_id, "the snapshot names another run's pinned instructions")
    if ref.fingerprint is not None and ref.fingerprint != ledger_fingerprint:
        raise tampered(
            node.node_id, "the snapshot names another pinned fingerprint than the run's ledger"
        )


__all__ = [
    "BranchedRun",
    "PinnedRef",
    "branch_origin",
    "branch_request_digest",
    "branchable_node",
    "inherited",
    "keyed_branch",
    "pinned_of",
    "record_keyed_branch",
    "refuse_projected",
    "require_pinned_match",
]
