"""What a thread holds, read whole for the history index's backfill: the only other module of
continuity that reads messages, notes and checkpoint snapshots (an upgraded store indexes them
once, in one write; see `continuity.indexing.index_existing`)."""

from __future__ import annotations

import json
from collections.abc import Iterator

from sqlalchemy import select
from sqlalchemy.engine import Connection

from rutter_core.store.schema import continuity_nodes, continuity_snapshots, messages, notes


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
