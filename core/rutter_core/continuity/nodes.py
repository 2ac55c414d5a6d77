"""Continuity nodes: the append-only tree of a session's checkpoints (contract section 10).

Every run has a root node, created with the run; checkpoints, forks and resumes hang below.
"""

from __future__ import annotations

from typing import Final

from sqlalchemy.engine import Connection

from rutter_core.continuity import repo
from rutter_core.kernel.ids import new_id

ROOT_NODE_KIND: Final = "root"


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
