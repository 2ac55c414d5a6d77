"""A run's lineage (contract section 12): the threads whose content the run may read back.

A run sees its own thread; a run started by a fork or resume also sees the lineage of the run
its branch marker's parent node belongs to, and so on up to a root. Ancestor threads are seen
whole (what they held before and after the branch), as the session tree shows them.
"""

from __future__ import annotations

from typing import Final

from sqlalchemy.engine import Connection

from rutter_core.continuity import repo
from rutter_core.continuity.nodes import BRANCH_KINDS

MAX_HOPS: Final = 256
_STARTS: Final = ("root", *BRANCH_KINDS)


def lineage_threads(conn: Connection, run_id: str, thread_id: str) -> tuple[str, ...]:
    """The run's thread, then its ancestors' threads, without repeats, in the caller's
    transaction."""
    threads = [thread_id]
    current = run_id
    for _ in range(MAX_HOPS):
        start = repo.run_start_node(conn, current, _STARTS)
        if start is None or start.kind not in BRANCH_KINDS or start.parent_node_id is None:
            break
        parent = repo.find_node(conn, start.parent_node_id)
        if parent is None:
            break
        if parent.thread_id not in threads:
            threads.append(parent.thread_id)
        current = parent.run_id
    return tuple(threads)
