"""Comparing two continuity nodes (`rutter session compare A B`, docs/reference/continuity.md): both
fingerprints, run, session and the run's status now, the project configuration and instruction
fingerprints, the git branch and HEAD, the memory references added, removed and changed from A
to B, and the message counts.

What a node recorded is its snapshot's: a checkpoint records all of it; a root or a branch
marker records only the instructions it pins (its run's revision 1), so its fingerprint,
configuration, git identity and message count are null and it has no memory references.
"""

from __future__ import annotations

from rutter_core.continuity.model import ContinuityDocument
from rutter_core.continuity.snapshot import ContinuityNode, MemoryReference, SnapshotGit


class PinnedFingerprint(ContinuityDocument):
    revision: int
    fingerprint: str


class ComparedNode(ContinuityDocument):
    node_id: str
    kind: str
    title: str | None
    fingerprint: str | None
    run_id: str
    session_id: str
    run_status: str
    """The run's status now."""
    instructions: PinnedFingerprint | None
    """The pinned revision the node names (null: its run has none)."""
    project_configuration_fingerprint: str | None
    git: SnapshotGit | None
    git_reason: str | None
    message_count: int | None
    """The thread's messages when the checkpoint was taken."""
    memory_references: int | None


class MemoryChange(ContinuityDocument):
    """A memory both nodes refer to, at another version or content."""

    memory_id: str
    a_version: int
    b_version: int
    a_content_sha256: str
    b_content_sha256: str


class MemoryDelta(ContinuityDocument):
    """From A to B: references only B has, only A has, and both have but differently."""

    added: tuple[MemoryReference, ...]
    removed: tuple[MemoryReference, ...]
    changed: tuple[MemoryChange, ...]
    unchanged: int


class Sameness(ContinuityDocument):
    """Which of the compared facts are equal on both sides."""

    fingerprint: bool
    run: bool
    session: bool
    run_status: bool
    instructions: bool
    project_configuration: bool
    git_branch: bool
    git_head: bool
    message_count: bool


class NodeComparison(ContinuityDocument):
    a: ComparedNode
    b: ComparedNode
    same: Sameness
    memory: MemoryDelta
    """Memory references from A to B."""


def compared(
    node: ContinuityNode, *, run_status: str, instructions: PinnedFingerprint | None
) -> ComparedNode:
    """One side: what `node` recorded, with its run's status now."""
    snapshot = node.snapshot
    return ComparedNode(
        node_id=node.node_id,
        kind=node.kind,
        title=node.title,
        fingerprint=None if snapshot is None else snapshot.fingerprint,
        run_id=node.run_id,
        session_id=node.session_id,
        run_status=run_status,
        instructions=instructions,
        project_configuration_fingerprint=None
        if snapshot is None
        else snapshot.project_configuration.fingerprint,
        git=None if snapshot is None else snapshot.git,
        git_reason=None if snapshot is None else snapshot.git_reason,
        message_count=None if snapshot is None else snapshot.messages.total,
        memory_references=None if snapshot is None else len(snapshot.memory.references),
    )


def compare(
    a: ContinuityNode, side_a: ComparedNode, b: ContinuityNode, side_b: ComparedNode
) -> NodeComparison:
    branch_a = None if side_a.git is None else side_a.git.branch
    branch_b = None if side_b.git is None else side_b.git.branch
    head_a = None if side_a.git is None else side_a.git.head
    head_b = None if side_b.git is None else side_b.git.head
    return NodeComparison(
        a=side_a,
        b=side_b,
        same=Sameness(
            fingerprint=side_a.fingerprint == side_b.fingerprint,
            run=side_a.run_id == side_b.run_id,
            session=side_a.session_id == side_b.session_id,
            run_status=side_a.run_status == side_b.run_status,
            instructions=side_a.instructions == side_b.instructions,
            project_configuration=side_a.project_configuration_fingerprint
            == side_b.project_configuration_fingerprint,
            git_branch=branch_a == branch_b,
            git_head=head_a == head_b,
            message_count=side_a.message_count == side_b.message_count,
        ),
        memory=memory_delta(_references(a), _references(b)),
    )


def memory_delta(a: tuple[MemoryReference, ...], b: tuple[MemoryReference, ...]) -> MemoryDelta:
    before = {ref.memory_id: ref for ref in a}
    after = {ref.memory_id: ref for ref in b}
    changed = []
    unchanged = 0
    for memory_id in sorted(before.keys() & after.keys()):
        old, new = before[memory_id], after[memory_id]
        if (old.version, old.content_sha256) == (new.version, new.content_sha256):
            unchanged += 1
            continue
        changed.append(
            MemoryChange(
                memory_id=memory_id,
                a_version=old.version,
                b_version=new.version,
                a_content_sha256=old.content_sha256,
                b_content_sha256=new.content_sha256,
            )
        )
    return MemoryDelta(
        added=tuple(after[key] for key in sorted(after.keys() - before.keys())),
        removed=tuple(before[key] for key in sorted(before.keys() - after.keys())),
        changed=tuple(changed),
        unchanged=unchanged,
    )


def _references(node: ContinuityNode) -> tuple[MemoryReference, ...]:
    return () if node.snapshot is None else node.snapshot.memory.references


__all__ = [
    "ComparedNode",
    "MemoryChange",
    "MemoryDelta",
    "NodeComparison",
    "PinnedFingerprint",
    "Sameness",
    "compare",
    "compared",
    "memory_delta",
]
