"""Checkpoints: immutable nodes holding a `continuity_snapshot.v1` (docs/reference/continuity.md),
and the integrity check every read of a node passes.

What a checkpoint needs from other areas (the run and its verified pinned revision, the active
memories' references, the project configuration, the git identity) is gathered by the app layer,
which orchestrates across areas, and handed in as a `CheckpointBasis`; this module reads the
thread (its latest summary and recent messages), builds the snapshot and appends the node below
the end of the run's chain (its root, or its latest checkpoint), all in the caller's write
transaction.

Nodes and snapshots are append-only (triggers refuse UPDATE, DELETE and a replaced key). Should
a row be changed behind rutter's back anyway, reading it fails `snapshot_tampered` and nothing
of it is served: the stored text must be the canonical JSON of a valid snapshot, hash to its
fingerprint, and belong to its node (run, session, thread, title, time).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from sqlalchemy.engine import Connection

from rutter_core.continuity import repo
from rutter_core.continuity.compaction.latest import latest_summary
from rutter_core.continuity.messages import recent_messages
from rutter_core.continuity.model import Message
from rutter_core.continuity.nodes import START_KINDS
from rutter_core.continuity.policy import CleanText, clean_text, require_node_id
from rutter_core.continuity.snapshot import (
    CHECKPOINT_KIND,
    MAX_SUMMARY_BYTES,
    MAX_TITLE_BYTES,
    PROTOCOL_VERSION,
    SNAPSHOT_MESSAGE_BYTES,
    SNAPSHOT_MESSAGES,
    SUMMARY_SOURCES,
    ContinuityNode,
    ContinuitySnapshot,
    PinnedInstructions,
    ProjectConfiguration,
    SnapshotMemory,
    SnapshotMessage,
    SnapshotMessages,
    SnapshotSummary,
    snapshot_fingerprint,
)
from rutter_core.discovery.fingerprint import canonical_text
from rutter_core.kernel.actors import ACTORS, Actor, is_actor
from rutter_core.kernel.errors import Hint, NotFoundError, RejectedError
from rutter_core.kernel.ids import new_id
from rutter_core.store import Store

CHAIN_KINDS = (*START_KINDS, CHECKPOINT_KIND)
"""The kinds of a run's own line of nodes (its root or branch marker, then its checkpoints): a
checkpoint hangs below the end of it."""


@dataclass(frozen=True, slots=True)
class CheckpointLabel:
    """A checkpoint's title (one line, 1-256 bytes) and optional summary (up to 16 KiB), both
    redacted."""

    title: CleanText
    summary: CleanText | None


def checkpoint_label(title: str, summary: str | None) -> CheckpointLabel:
    """Check the label before anything is read, so a bad one costs nothing."""
    return CheckpointLabel(
        title=clean_text("title", title, max_bytes=MAX_TITLE_BYTES, one_line=True, readable=True),
        summary=None
        if summary is None
        else clean_text("summary", summary, max_bytes=MAX_SUMMARY_BYTES, readable=True),
    )


@dataclass(frozen=True, slots=True)
class CheckpointBasis:
    """What the checkpoint takes from outside the thread, read in the same transaction (the
    run, its pinned revision and the memory references) or just before it (the files on disk:
    configuration and git)."""

    workspace_id: str
    mission_id: str
    run_id: str
    session_id: str
    thread_id: str
    mode: str
    instructions: PinnedInstructions
    project_configuration: ProjectConfiguration
    memory: SnapshotMemory
    git: Mapping[str, Any]
    """The git identity's snapshot fields (`git`, `git_reason`), as
    `continuity.git.GitIdentity.to_snapshot` gives them."""


def append_checkpoint(
    conn: Connection, basis: CheckpointBasis, label: CheckpointLabel, *, actor: str, now: str
) -> ContinuityNode:
    """Append a checkpoint node of the run with its snapshot, in the caller's write
    transaction; returns the node as stored."""
    operator = _require_writer(actor)
    parent = repo.chain_end(conn, basis.run_id, CHAIN_KINDS)
    messages, total = recent_messages(conn, basis.thread_id, SNAPSHOT_MESSAGES)
    summary = latest_summary(conn, basis.thread_id)
    document = {
        "protocol_version": PROTOCOL_VERSION,
        "fingerprint": "0" * 64,
        "created_at": now,
        "workspace_id": basis.workspace_id,
        "mission_id": basis.mission_id,
        "run_id": basis.run_id,
        "session_id": basis.session_id,
        "thread_id": basis.thread_id,
        "mode": basis.mode,
        "title": label.title.text,
        "summary": None if label.summary is None else label.summary.text,
        "redacted": label.title.redacted or (label.summary is not None and label.summary.redacted),
        "compaction_summary": None
        if summary is None
        else SnapshotSummary(
            source=SUMMARY_SOURCES[summary.source],
            note_id=summary.id,
            version=summary.version,
            text=summary.text,
            redacted=summary.redacted,
        ),
        "messages": SnapshotMessages(
            total=total, items=tuple(_carried(message) for message in messages)
        ),
        "memory": basis.memory,
        "instructions": basis.instructions,
        "project_configuration": basis.project_configuration,
        **basis.git,
    }
    draft = ContinuitySnapshot.model_validate(document).to_json()
    snapshot = ContinuitySnapshot.model_validate(
        {**draft, "fingerprint": snapshot_fingerprint(draft)}
    )
    node_id = new_id("node")
    person = repo.insert_node(
        conn,
        node_id=node_id,
        run_id=basis.run_id,
        session_id=basis.session_id,
        thread_id=basis.thread_id,
        parent_node_id=parent,
        kind=CHECKPOINT_KIND,
        actor=operator,
        now=now,
    )
    repo.insert_snapshot(
        conn,
        node_id=node_id,
        thread_id=basis.thread_id,
        summary=snapshot.summary,
        protocol_version=PROTOCOL_VERSION,
        title=snapshot.title,
        snapshot_json=canonical_text(snapshot.to_json()),
        fingerprint=snapshot.fingerprint,
    )
    return ContinuityNode(
        node_id=node_id,
        parent_node_id=parent,
        kind=CHECKPOINT_KIND,
        run_id=basis.run_id,
        session_id=basis.session_id,
        thread_id=basis.thread_id,
        title=snapshot.title,
        created_by=operator,
        created_by_person=person,
        created_at=now,
        snapshot=snapshot,
    )


def mark_delivery(conn: Connection, node: ContinuityNode, *, actor: str, now: str) -> None:
    """Record the checkpoint `node`, just appended in the caller's transaction, as its run's
    delivery: a completion record (experience candidates, docs/reference/memory.md). The node
    and its snapshot are not changed."""
    repo.insert_delivery(conn, node_id=node.node_id, run_id=node.run_id, actor=actor, now=now)


def read_node(conn: Connection, node_id: str) -> ContinuityNode:
    """The node, verified (`not_found`, `snapshot_tampered`), in the caller's transaction."""
    node_id = require_node_id(node_id)
    stored = repo.find_node(conn, node_id)
    if stored is None:
        raise NotFoundError(
            "not_found",
            f"no continuity node {node_id}",
            details={"node_id": node_id},
            hint=Hint("find_node"),
        )
    return verified(stored)


def get_node(store: Store, node_id: str) -> ContinuityNode:
    with store.read() as conn:
        return read_node(conn, node_id)


def verified(stored: repo.StoredNode) -> ContinuityNode:
    """The node in `stored`, once its snapshot is checked against itself and the node."""
    snapshot = None
    if stored.snapshot_json is None:
        if stored.kind == CHECKPOINT_KIND:
            raise tampered(stored.node_id, "the checkpoint's snapshot is missing")
    else:
        snapshot = _verified_snapshot(stored, stored.snapshot_json)
    return ContinuityNode(
        node_id=stored.node_id,
        parent_node_id=stored.parent_node_id,
        kind=stored.kind,
        run_id=stored.run_id,
        session_id=stored.session_id,
        thread_id=stored.thread_id,
        title=stored.title,
        created_by=stored.created_by,
        created_by_person=stored.created_by_person,
        created_at=stored.created_at,
        snapshot=snapshot,
    )


def tampered(node_id: str, reason: str) -> RejectedError:
    return RejectedError(
        "snapshot_tampered",
        f"continuity node {node_id} fails its integrity check ({reason}): the store was changed "
        "outside rutter. rutter will not use this node; restore the store from a backup",
        details={"node_id": node_id, "reason": reason},
    )


def _verified_snapshot(stored: repo.StoredNode, text: str) -> ContinuitySnapshot:
    node_id = stored.node_id
    if stored.kind != CHECKPOINT_KIND:
        raise tampered(node_id, "a snapshot is attached to a node that is not a checkpoint")
    try:
        snapshot = ContinuitySnapshot.model_validate_json(text)
        canonical = canonical_text(snapshot.to_json())
        recomputed = snapshot_fingerprint(snapshot.to_json())
    except (ValueError, ValidationError, RecursionError) as exc:
        # ValidationError and rfc8785's errors are ValueErrors; RecursionError: JSON nested
        # beyond the decoder.
        raise tampered(node_id, "the stored snapshot is not a valid snapshot") from exc
    if canonical != text:
        raise tampered(node_id, "the stored snapshot is not in its canonical form")
    if snapshot.fingerprint != stored.fingerprint or stored.protocol_version != PROTOCOL_VERSION:
        raise tampered(node_id, "the snapshot names another fingerprint than its row")
    if recomputed != stored.fingerprint:
        raise tampered(node_id, "the snapshot does not hash to its fingerprint")
    own = (stored.run_id, stored.session_id, stored.thread_id, stored.title, stored.created_at)
    theirs = (snapshot.run_id, snapshot.session_id, snapshot.thread_id, snapshot.title,
              snapshot.created_at)  # fmt: skip
    if own != theirs:
        raise tampered(node_id, "the snapshot belongs to another node")
    return snapshot


def _carried(message: Message) -> SnapshotMessage:
    """`message` as a snapshot carries it: its text cut at `SNAPSHOT_MESSAGE_BYTES` (on a
    character boundary; the text is already redacted, so a cut marker reveals nothing)."""
    encoded = message.text.encode("utf-8")
    cut = encoded[:SNAPSHOT_MESSAGE_BYTES].decode("utf-8", "ignore")
    return SnapshotMessage(
        message_id=message.message_id,
        seq=message.seq,
        role=message.role,
        source=message.source,
        external_id=message.external_id,
        text=cut,
        redacted=message.redacted,
        text_truncated=len(encoded) > SNAPSHOT_MESSAGE_BYTES,
        bytes=len(encoded),
    )


def _require_writer(actor: str) -> Actor:
    """Operator surfaces and the MCP server (an agent checkpoints its own run) may."""
    if not is_actor(actor):
        raise RejectedError(
            "actor_not_allowed",
            f"actor {actor!r} may not take checkpoints here; only rutter's surfaces "
            f"({', '.join(ACTORS)}) may",
            details={"actor": str(actor), "allowed": list(ACTORS)},
        )
    return actor
