"""`session_tree.v1`: a session's tree of continuity nodes with drift markers computed now
(docs/reference/continuity.md).

The tree of a run is every node connected to the run's own line: up from the node its line
starts at (its root, or the branch marker below the node it was forked or resumed from) to the
topmost root, and down from there through every checkpoint, fork and resume, whichever run they
belong to. Stored nodes are listed as stored (each checkpoint verified; one that fails is
listed with its `snapshot_tampered` error and nothing of its snapshot). Decision notes of the
tree's threads are projected into it (`projected: true`, below the latest node of their thread
made before them): they are for browsing, never a source of a fork or resume. The threads'
completed compactions are projected the same way (`kind: compaction`, at the time they completed,
with what their summary covers in `compaction`).

Drift markers compare what a node recorded with what is true now: each memory reference
(`active`, `disabled`, `expired`, `deleted`, `version_drift`), the instructions the node pins
against discovery now, and the git identity it recorded against the workspace's now. This module
collects the nodes and builds the document; the facts of now (runs, memories, discovery, git)
are gathered by the app layer, which spans the areas, and handed in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol

from pydantic import Field
from sqlalchemy.engine import Connection

from rutter_core.continuity import repo
from rutter_core.continuity.checkpoints import verified
from rutter_core.continuity.compaction import repo as compaction_repo
from rutter_core.continuity.compaction.repo import CompactionRow
from rutter_core.continuity.git import GitIdentity, git_drift
from rutter_core.continuity.model import ContinuityDocument, Note
from rutter_core.continuity.nodes import START_KINDS
from rutter_core.continuity.snapshot import ContinuityNode, ContinuitySnapshot, SnapshotGit
from rutter_core.discovery.snapshot import Snapshot
from rutter_core.kernel.actors import CREATED_BY_PERSON
from rutter_core.kernel.errors import RutterError

PROTOCOL_VERSION: Final = "session_tree.v1"
MAX_TREE_NODES: Final = 500
"""Stored nodes a tree lists at most (`truncated` beyond: nearest the top first)."""
MAX_PROJECTED_NODES: Final = 500
PROJECTED_TITLE_CHARS: Final = 120
_IDS_PER_QUERY: Final = 500

MemoryState = Literal["active", "disabled", "expired", "deleted", "version_drift"]


class MemoryMarker(ContinuityDocument):
    """A memory reference of the node and what became of it."""

    memory_id: str
    version: int
    state: MemoryState


class InstructionsMarker(ContinuityDocument):
    """The instructions the node pins against what discovery yields now for its run's target."""

    pinned_fingerprint: str
    live_fingerprint: str | None
    live_error: str | None
    """The discovery error's code when discovery fails closed now (then `changed` is true)."""
    changed: bool


class GitMarker(ContinuityDocument):
    """The git identity the node recorded against the workspace's now."""

    recorded: SnapshotGit | None
    recorded_reason: str | None
    current: SnapshotGit | None
    current_reason: str | None
    branch_changed: bool
    head_changed: bool


class Drift(ContinuityDocument):
    memory: tuple[MemoryMarker, ...]
    """Empty for a node that records no memory (a root, a branch marker)."""
    instructions: InstructionsMarker | None
    """Null for a node that pins nothing (the root of a run imported without instructions)."""
    git: GitMarker | None
    """Null for a node that records no git identity (a root, a branch marker)."""


class CompactionFacts(ContinuityDocument):
    """What a projected compaction's summary stands for (`rutter session compact`)."""

    summarizer: str
    """`extractive`, `command`, `openai` or `anthropic`."""
    compacted_message_count: int
    """The older messages the summary stands for."""
    unread_message_count: int
    """How many of those the summarizer did not read (its input window was full)."""
    kept_message_count: int
    """The newest messages kept verbatim."""
    summary_tokens: int | None
    """The summary's estimated tokens."""


class TreeNode(ContinuityDocument):
    node_id: str
    """A stored node's `node_...`; a projected decision's `note_...`; a projected
    compaction's `cmp_...`."""
    parent_node_id: str | None
    kind: str
    """`root`, `checkpoint`, `fork`, `resume` (branch markers); projected: `decision`,
    `compaction`."""
    projected: bool
    run_id: str
    session_id: str
    thread_id: str
    run_status: str
    title: str | None
    created_by: str
    created_by_person: str | None = Field(description=CREATED_BY_PERSON)
    created_at: str
    fingerprint: str | None
    """A checkpoint's snapshot fingerprint."""
    drift: Drift | None
    """Null for projected nodes (they record nothing) and nodes that fail their check."""
    error: dict[str, Any] | None
    """The error document of a node that fails its integrity check: nothing of it is shown."""
    compaction: CompactionFacts | None = None
    """A projected compaction's facts (its `title` is the summary's first line, `created_at`
    when it completed); null for every other node."""


class SessionTree(ContinuityDocument):
    protocol_version: Literal["session_tree.v1"] = PROTOCOL_VERSION
    workspace_id: str
    run_id: str
    """The run asked about (directly or through its session)."""
    session_id: str
    root_node_id: str
    computed_at: str
    truncated: bool
    """More nodes are connected than the tree lists (at most 500 stored and 500 projected)."""
    nodes: tuple[TreeNode, ...]
    """Depth first from the root, children in the order they were made: a parent always
    comes before its children."""


# -- collecting ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Collected:
    nodes: list[repo.StoredNode]
    decisions: list[Note]
    compactions: list[CompactionRow]
    truncated: bool


def run_start(conn: Connection, run_id: str) -> repo.StoredNode | None:
    """The node the run's line starts at (its root or branch marker)."""
    return repo.run_start_node(conn, run_id, START_KINDS)


def collect(conn: Connection, start: repo.StoredNode) -> Collected:
    """The stored nodes connected to `start` (see the module docstring), the active decision
    notes and the completed compactions of their threads, in the caller's read transaction
    (at most `MAX_PROJECTED_NODES` of both together, the earliest first)."""
    top, seen = start, {start.node_id}
    while top.parent_node_id is not None:
        parent = repo.find_node(conn, top.parent_node_id)
        if parent is None or parent.node_id in seen:  # only a rewritten store has either
            break
        seen.add(parent.node_id)
        top = parent
    nodes, listed, frontier, truncated = [top], {top.node_id}, [top.node_id], False
    while frontier and not truncated:
        found: list[repo.StoredNode] = []
        for chunk in _chunks(frontier):
            found.extend(repo.select_children(conn, chunk, MAX_TREE_NODES + 1))
        fresh = [node for node in found if node.node_id not in listed]
        room = MAX_TREE_NODES - len(nodes)
        if len(fresh) > room:
            fresh, truncated = sorted(fresh, key=_made)[:room], True
        nodes.extend(fresh)
        listed.update(node.node_id for node in fresh)
        frontier = [node.node_id for node in fresh]
    threads = sorted({node.thread_id for node in nodes})
    decisions: list[Note] = []
    for chunk in _chunks(threads):
        decisions.extend(
            repo.select_active_notes_of(conn, chunk, "decision", MAX_PROJECTED_NODES + 1)
        )
    decisions.sort(key=lambda note: (note.created_at, note.note_id))
    compactions: list[CompactionRow] = []
    for chunk in _chunks(threads):
        compactions.extend(
            compaction_repo.select_completed_of(conn, chunk, MAX_PROJECTED_NODES + 1)
        )
    compactions.sort(key=lambda row: (row.updated_at, row.compaction_id))
    if len(decisions) + len(compactions) > MAX_PROJECTED_NODES:
        truncated = True
        times = sorted(
            [(note.created_at, note.note_id) for note in decisions]
            + [(row.updated_at, row.compaction_id) for row in compactions]
        )[:MAX_PROJECTED_NODES]
        kept = {made_id for _, made_id in times}
        decisions = [note for note in decisions if note.note_id in kept]
        compactions = [row for row in compactions if row.compaction_id in kept]
    return Collected(nodes=nodes, decisions=decisions, compactions=compactions, truncated=truncated)


def checked(stored: repo.StoredNode) -> ContinuityNode | RutterError:
    """The node verified, or why it fails its integrity check."""
    try:
        return verified(stored)
    except RutterError as error:
        return error


def _chunks(ids: Sequence[str]) -> Iterable[Sequence[str]]:
    for start in range(0, len(ids), _IDS_PER_QUERY):
        yield ids[start : start + _IDS_PER_QUERY]


def _made(node: repo.StoredNode | TreeNode) -> tuple[str, str]:
    return (node.created_at, node.node_id)


# -- drift markers --------------------------------------------------------------------------------


class CurrentMemory(Protocol):
    """A referenced memory as it is now (the memory area's `ReferencedMemory`)."""

    @property
    def version(self) -> int: ...
    @property
    def content_sha256(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def expired(self) -> bool: ...


def memory_markers(
    snapshot: ContinuitySnapshot, current: Mapping[str, CurrentMemory]
) -> tuple[MemoryMarker, ...]:
    """Each reference's state: gone (`deleted`), switched off (`disabled`), past its retention
    (`expired`), changed since (`version_drift`), or as referenced (`active`), in that order."""
    markers = []
    for ref in snapshot.memory.references:
        now = current.get(ref.memory_id)
        state: MemoryState
        if now is None:
            state = "deleted"
        elif now.status != "active":
            state = "disabled"
        elif now.expired:
            state = "expired"
        elif (now.version, now.content_sha256) != (ref.version, ref.content_sha256):
            state = "version_drift"
        else:
            state = "active"
        markers.append(MemoryMarker(memory_id=ref.memory_id, version=ref.version, state=state))
    return tuple(markers)


def instructions_marker(pinned: str, live: Snapshot | RutterError) -> InstructionsMarker:
    if isinstance(live, RutterError):
        return InstructionsMarker(
            pinned_fingerprint=pinned, live_fingerprint=None, live_error=live.code, changed=True
        )
    return InstructionsMarker(
        pinned_fingerprint=pinned,
        live_fingerprint=live.fingerprint,
        live_error=None,
        changed=live.fingerprint != pinned,
    )


def git_marker(snapshot: ContinuitySnapshot, current: GitIdentity) -> GitMarker:
    recorded = GitIdentity.from_snapshot(
        {"git": None if snapshot.git is None else snapshot.git.to_json(),
         "git_reason": snapshot.git_reason}
    )  # fmt: skip
    drift = git_drift(recorded, current)
    now = current.to_snapshot()
    return GitMarker(
        recorded=snapshot.git,
        recorded_reason=snapshot.git_reason,
        current=None if now["git"] is None else SnapshotGit.model_validate(now["git"]),
        current_reason=now["git_reason"],
        branch_changed=drift.branch_changed,
        head_changed=drift.head_changed,
    )


# -- building -------------------------------------------------------------------------------------


def stored_tree_node(
    node: ContinuityNode | RutterError,
    stored: repo.StoredNode,
    *,
    run_status: str,
    drift: Drift | None,
) -> TreeNode:
    """A stored node as the tree lists it: verified, or its error (`drift` then unused)."""
    if isinstance(node, RutterError):
        return TreeNode(
            node_id=stored.node_id, parent_node_id=stored.parent_node_id, kind=stored.kind,
            projected=False, run_id=stored.run_id, session_id=stored.session_id,
            thread_id=stored.thread_id, run_status=run_status, title=None,
            created_by=stored.created_by, created_by_person=stored.created_by_person,
            created_at=stored.created_at, fingerprint=None,
            drift=None, error=node.to_json(),
        )  # fmt: skip
    snapshot = node.snapshot
    return TreeNode(
        node_id=node.node_id, parent_node_id=node.parent_node_id, kind=node.kind,
        projected=False, run_id=node.run_id, session_id=node.session_id,
        thread_id=node.thread_id, run_status=run_status, title=node.title,
        created_by=node.created_by, created_by_person=node.created_by_person,
        created_at=node.created_at,
        fingerprint=None if snapshot is None else snapshot.fingerprint, drift=drift, error=None,
    )  # fmt: skip


def projected_nodes(
    decisions: Sequence[Note],
    stored: Sequence[TreeNode],
    compactions: Sequence[CompactionRow] = (),
) -> list[TreeNode]:
    """Each decision note and completed compaction below the latest stored node of its thread
    made at or before it (the thread's first node when it is older than all of them)."""
    by_thread: dict[str, list[TreeNode]] = {}
    for node in sorted(stored, key=_made):
        by_thread.setdefault(node.thread_id, []).append(node)

    def parent_of(thread_id: str, made_at: str) -> TreeNode | None:
        line = by_thread.get(thread_id)
        if not line:
            return None
        earlier = [node for node in line if node.created_at <= made_at]
        return earlier[-1] if earlier else line[0]

    projected = []
    for note in decisions:
        parent = parent_of(note.thread_id, note.created_at)
        if parent is None:
            continue
        projected.append(
            TreeNode(
                node_id=note.note_id,
                parent_node_id=parent.node_id,
                kind=note.kind,
                projected=True,
                run_id=parent.run_id,
                session_id=parent.session_id,
                thread_id=note.thread_id,
                run_status=parent.run_status,
                title=_first_line(note.text),
                created_by=note.created_by,
                created_by_person=note.created_by_person,
                created_at=note.created_at,
                fingerprint=None,
                drift=None,
                error=None,
            )
        )
    for row in compactions:
        parent = parent_of(row.thread_id, row.updated_at)
        if parent is None:
            continue
        projected.append(
            TreeNode(
                node_id=row.compaction_id,
                parent_node_id=parent.node_id,
                kind="compaction",
                projected=True,
                run_id=parent.run_id,
                session_id=parent.session_id,
                thread_id=row.thread_id,
                run_status=parent.run_status,
                title=_first_line(row.summary_text or "") or None,
                created_by=row.created_by,
                created_by_person=row.created_by_person,
                created_at=row.updated_at,
                fingerprint=None,
                drift=None,
                error=None,
                compaction=CompactionFacts(
                    summarizer=row.summarizer,
                    compacted_message_count=row.compacted_count,
                    unread_message_count=row.unread_count,
                    kept_message_count=len(row.kept_message_ids),
                    summary_tokens=row.summary_tokens,
                ),
            )
        )
    return projected


def ordered(nodes: Sequence[TreeNode]) -> tuple[TreeNode, ...]:
    """Depth first from the nodes without a listed parent, children in the order they were
    made (a projected node after stored nodes made in the same second). Parent links rewritten
    into a loop (only a store changed behind rutter's back has one) cannot hide a node: the
    first one not reached starts its own walk."""
    listed = {node.node_id for node in nodes}
    children: dict[str | None, list[TreeNode]] = {}
    for node in nodes:
        parent = node.parent_node_id if node.parent_node_id in listed else None
        children.setdefault(parent, []).append(node)
    for group in children.values():
        group.sort(key=lambda node: (node.created_at, node.projected, node.node_id))
    result: list[TreeNode] = []
    seen: set[str] = set()
    for start in [*children.get(None, []), *nodes]:
        stack = [start]
        while stack:
            node = stack.pop()
            if node.node_id in seen:
                continue
            seen.add(node.node_id)
            result.append(node)
            stack.extend(reversed(children.get(node.node_id, [])))
    return tuple(result)


def _first_line(text: str) -> str:
    first = text.strip().splitlines()[0] if text.strip() else ""
    if len(first) > PROJECTED_TITLE_CHARS or first != text.strip():
        return first[: PROJECTED_TITLE_CHARS - 1] + "…"
    return first


__all__ = [
    "MAX_PROJECTED_NODES",
    "MAX_TREE_NODES",
    "PROTOCOL_VERSION",
    "Collected",
    "CompactionFacts",
    "CurrentMemory",
    "Drift",
    "GitMarker",
    "InstructionsMarker",
    "MemoryMarker",
    "MemoryState",
    "SessionTree",
    "TreeNode",
    "checked",
    "collect",
    "git_marker",
    "instructions_marker",
    "memory_markers",
    "ordered",
    "projected_nodes",
    "run_start",
    "stored_tree_node",
]
