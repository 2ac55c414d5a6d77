"""A workspace's continuity across its threads: the newest stored nodes (for pickers) and a
cheap revision of everything continuity holds for it (for editors that follow changes).

The revision is per workspace: the counts of its nodes, messages and notes and the sum of its
notes' versions. Nodes and messages are append-only and every change of a note raises its
version, so any write of continuity data of a workspace changes its revision; comparing two
revisions says whether anything changed, nothing about what.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from sqlalchemy.engine import Connection

from rutter_core.continuity import repo
from rutter_core.workspaces.service import project_workspace_ids

MAX_RECENT: Final = 100
DEFAULT_RECENT: Final = 20
StoredNode = repo.StoredNode
"""A node as stored (not yet checked): what `recent_nodes` and `tree.collect` list."""


def recent_nodes(
    conn: Connection, workspace_id: str, limit: int
) -> tuple[list[repo.StoredNode], bool]:
    """The workspace's newest stored nodes (at most `limit`, newest first) and whether there
    are more."""
    found = repo.select_recent_nodes(conn, project_workspace_ids(conn, workspace_id), limit + 1)
    return found[:limit], len(found) > limit


def revisions(conn: Connection, workspace_ids: Sequence[str]) -> dict[str, str]:
    """Each workspace's continuity revision (see the module docstring), as one string: of its
    project's, so a node written through another registration of the project changes it."""
    projects = {ws: project_workspace_ids(conn, ws) for ws in set(workspace_ids)}
    marks = repo.continuity_marks(
        conn, sorted({m for members in projects.values() for m in members})
    )
    return {
        ws: ".".join(str(mark) for member in members for mark in marks[member])
        for ws, members in projects.items()
    }


__all__ = ["DEFAULT_RECENT", "MAX_RECENT", "StoredNode", "recent_nodes", "revisions"]
