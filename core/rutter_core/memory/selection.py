"""The memories a context assembly may select (docs/reference/assembly.md): part of the memory
service, in its own module so the service stays one screenful of operations.

Runs in the caller's transaction (the assembly's, so what it read and the audit it appends are
one unit, and a memory disabled at the same moment is wholly before or after it). Titles are
never read, and a disabled or expired memory's body is not read either.
"""

from __future__ import annotations

from sqlalchemy.engine import Connection

from rutter_core.memory import repo
from rutter_core.memory.model import USER_SCOPE_ID, Scope, ScopeSelection


def assembly_selection(
    conn: Connection, *, workspace_id: str, now_text: str, per_scope: int
) -> dict[Scope, ScopeSelection]:
    """The local user's and `workspace_id`'s project's memories, user first: per scope the first
    `per_scope` active ones by ID with their bodies, the first `per_scope` disabled or expired
    ones by ID without, and how many of each there are."""
    from rutter_core.memory.service import project_ids

    scopes: tuple[tuple[Scope, tuple[str, ...]], ...] = (
        ("user", (USER_SCOPE_ID,)),
        ("project", project_ids(conn, workspace_id)),
    )
    return {
        scope: repo.select_for_assembly(
            conn, scope=scope, scope_ids=scope_ids, now_text=now_text, per_scope=per_scope
        )
        for scope, scope_ids in scopes
    }


__all__ = ["assembly_selection"]
