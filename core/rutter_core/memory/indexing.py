"""Memories in the history index (`rutter_core.history`): every write of `memory.repo` keeps its
memory's entry in step; this is the one-off backfill of a store upgraded to the index."""

from __future__ import annotations

from sqlalchemy.engine import Connection

from rutter_core.kernel.clock import rfc3339, utc_now
from rutter_core.memory import repo


def index_existing(conn: Connection) -> None:
    """Index every active memory, in the caller's write."""
    repo.index_active(conn, rfc3339(utc_now()))
