"""The table of delivery checkpoints (`checkpoint_deliveries`): which checkpoints mark their run's
delivery, a completion record for experience candidates (docs/reference/memory.md). Append-only;
the checkpoint node and its snapshot are unchanged by it."""

from __future__ import annotations

from sqlalchemy import insert
from sqlalchemy.engine import Connection

from rutter_core.store.schema import checkpoint_deliveries


def insert_delivery(conn: Connection, *, node_id: str, run_id: str, actor: str, now: str) -> None:
    """Mark the checkpoint `node_id` as its run's delivery, in the caller's transaction."""
    values = {"node_id": node_id, "run_id": run_id, "created_by": actor, "created_at": now}
    conn.execute(insert(checkpoint_deliveries).values(**values))
