"""Continuity read for history search: a run's lineage in one statement (searched on every
history search), and what threads hold, read whole for the index's backfill (an upgraded store
indexes it once, in one write; see `continuity.indexing.index_existing`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Final

from sqlalchemy import select, text
from sqlalchemy.engine import Connection

from rutter_core.store.schema import continuity_nodes, continuity_snapshots, messages, notes

_LINEAGE: Final = text(
    """
    WITH RECURSIVE chain (run_id, thread_id, depth) AS (
        SELECT run_id, thread_id, 0 FROM continuity_nodes
        WHERE run_id = :run_id AND kind IN ('root', 'fork', 'resume')
        UNION
        SELECT parent.run_id, parent.thread_id, chain.depth + 1
        FROM chain
        JOIN continuity_nodes AS start
            ON start.run_id = chain.run_id AND start.kind IN ('fork', 'resume')
        JOIN continuity_nodes AS parent ON parent.node_id = start.parent_node_id
        WHERE chain.depth < :max_hops
    )
    SELECT thread_id, min(depth) AS nearest FROM chain GROUP BY thread_id ORDER BY nearest
    """
)
"""A run's start node (root, fork or resume marker), then the node each branch marker's
parent is, run after run: the threads met, nearest first."""


def lineage_threads(conn: Connection, run_id: str, max_hops: int) -> list[str]:
    rows = conn.execute(_LINEAGE, {"run_id": run_id, "max_hops": max_hops})
    return [str(row[0]) for row in rows]


def all_messages(conn: Connection) -> Iterator[tuple[str, str, str, str]]:
    """(message ID, thread ID, role, text) of every message."""
    rows = conn.execute(
        select(messages.c.message_id, messages.c.thread_id, messages.c.role, messages.c.text)
    )
    for row in rows:
        yield str(row[0]), str(row[1]), str(row[2]), str(row[3])


def active_notes(conn: Connection) -> Iterator[tuple[str, str, str, int, str]]:
    """(note ID, thread ID, kind, version, text) of every active note."""
    rows = conn.execute(
        select(notes.c.note_id, notes.c.thread_id, notes.c.kind, notes.c.version, notes.c.text)
        .where(notes.c.status == "active")
    )  # fmt: skip
    for row in rows:
        yield str(row[0]), str(row[1]), str(row[2]), int(row[3]), str(row[4])


def checkpoints(conn: Connection) -> Iterator[tuple[str, str, str, str | None]]:
    """(node ID, thread ID, title, summary) of every checkpoint snapshot."""
    rows = conn.execute(
        select(
            continuity_snapshots.c.node_id,
            continuity_nodes.c.thread_id,
            continuity_snapshots.c.title,
            continuity_snapshots.c.snapshot_json,
        ).join(continuity_nodes, continuity_nodes.c.node_id == continuity_snapshots.c.node_id)
    )
    for row in rows:
        summary = json.loads(str(row[3])).get("summary")
        yield str(row[0]), str(row[1]), str(row[2]), summary if isinstance(summary, str) else None
