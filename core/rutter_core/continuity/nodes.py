"""Continuity nodes: the append-only tree of a session's checkpoints (docs/reference/continuity.md).

A run's line of nodes starts at its root node (a run created afresh) or at a branch marker
(a run forked or resumed from a node: the marker's parent is that node, in another run);
the run's checkpoints hang below, one after the other, and forks and resumes of any of them
start new runs' lines below it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from sqlalchemy.engine import Connection

from rutter_core.continuity import repo
from rutter_core.kernel.ids import new_id

ROOT_NODE_KIND: Final = "root"
BranchKind = Literal["fork", "resume"]
BRANCH_KINDS: Final[tuple[BranchKind, ...]] = ("fork", "resume")
"""The kinds of branch markers: a fork (a new mission) and a resume (the same mission)."""
START_KINDS: Final = (ROOT_NODE_KIND, *BRANCH_KINDS)
"""The kinds of node a run's line starts at: exactly one per run."""


@dataclass(frozen=True, slots=True)
class BranchPoint:
    """Where a forked or resumed run starts: a branch marker of `kind` below `parent_node_id`."""

    parent_node_id: str
    kind: BranchKind


def add_root_node(
    conn: Connection, *, run_id: str, session_id: str, thread_id: str, actor: str, now: str
) -> str:
    """The run's root node, in the caller's transaction (after the run's row: the node refers
    to it); returns its ID."""
    node_id = new_id("node")
    repo.insert_node(
        conn,
        node_id=node_id,
        run_id=run_id,
        session_id=session_id,
        thread_id=thread_id,
        parent_node_id=None,
        kind=ROOT_NODE_KIND,
        actor=actor,
        now=now,
    )
    return node_id


def add_branch_marker(
    conn: Connection,
    *,
    run_id: str,
    session_id: str,
    thread_id: str,
    branch: BranchPoint,
    actor: str,
    now: str,
) -> str:
    """The first node of a forked or resumed run, below the node it branches from, in the
    caller's transaction (after the run's row); returns its ID."""
    node_id = new_id("node")
    repo.insert_node(
        conn,
        node_id=node_id,
        run_id=run_id,
        session_id=session_id,
        thread_id=thread_id,
        parent_node_id=branch.parent_node_id,
        kind=branch.kind,
        actor=actor,
        now=now,
    )
    return node_id
