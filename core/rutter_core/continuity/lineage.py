"""A run's lineage (docs/reference/history.md): the threads whose content the run may read back.

A run sees its own thread; a run started by a fork or resume also sees the lineage of the run
its branch marker's parent node belongs to, and so on up to a root. Ancestor threads are seen
whole (what they held before and after the branch), as the session tree shows them.
"""

from __future__ import annotations

from typing import Final

from sqlalchemy.engine import Connection

from rutter_core.continuity import repo

MAX_HOPS: Final = 256


def lineage_threads(conn: Connection, run_id: str, thread_id: str) -> tuple[str, ...]:
    """The run's thread, then its ancestors' threads, without repeats, in the caller's
    transaction (one statement: `repo.lineage_threads`)."""
    found = repo.lineage_threads(conn, run_id, MAX_HOPS)
    return (thread_id, *(t for t in found if t != thread_id))
