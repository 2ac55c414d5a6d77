"""History search and read (docs/reference/history.md): params models and `HistoryOperations`
(`Rutter(store, reader).history`).

The history area indexes and reads; what a run may see is decided here, across areas: the
run's workspace and lineage (`runs`, `continuity.lineage`), or a workspace alone (`workspaces`:
memories only). Every surface (CLI, language server, MCP) calls these two operations.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from pydantic import Field, StrictInt, StrictStr
from sqlalchemy.engine import Connection

from rutter_core.app.models import Params, allowed, whole_number
from rutter_core.continuity.service import index_existing, lineage_threads
from rutter_core.history import service
from rutter_core.history.model import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    MAX_QUERY_CHARS,
    HistoryHits,
    HistoryPage,
    SourceKind,
)
from rutter_core.kernel.clock import now_rfc3339
from rutter_core.kernel.errors import Hint, NotFoundError, UsageError
from rutter_core.memory import indexing as memory
from rutter_core.runs import reading as runs
from rutter_core.store import Store
from rutter_core.workspaces import service as workspaces

if TYPE_CHECKING:
    from rutter_core.app.facade import Rutter


# Checked by the history service (typed errors that do not echo the value: `invalid_query`,
# `invalid_scope`, `invalid_limit`, `invalid_page`), so the sets and bounds are stated here for
# the schemas only.
Query = Annotated[
    StrictStr, allowed(Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS)])
]
ScopeName = Annotated[StrictStr, allowed(SourceKind)]
HitLimit = Annotated[StrictInt, whole_number(1, MAX_LIMIT)]
Page = Annotated[StrictInt, whole_number(1)]


class HistorySearchParams(Params):
    query: Query = Field(
        description="substring to find, case-insensitive (1-256 characters; shorter than 3 "
        "characters: a bounded scan)"
    )
    workspace_id: StrictStr | None = Field(
        None, description="the workspace whose project memories to search (a run's, by default)"
    )
    run_id: StrictStr | None = Field(
        None, description="the run whose lineage's notes, messages, receipts, summaries and "
        "checkpoints to search (and its workspace's memories)",
    )  # fmt: skip
    scopes: list[ScopeName] | None = Field(
        None, description="memory, note, message, receipt, summary, checkpoint (default: all)"
    )
    limit: HitLimit = Field(DEFAULT_LIMIT, description=f"hits per page (1-{MAX_LIMIT})")
    cursor: StrictStr | None = Field(None, description="next_cursor of the previous page")


class HistoryReadParams(Params):
    handle: StrictStr = Field(description="a hit's handle")
    page: Page = Field(1, description="the page to read, from 1")


class HistoryOperations:
    def __init__(self, rutter: Rutter) -> None:
        self._rutter = rutter

    def search(self, params: HistorySearchParams) -> HistoryHits:
        return service.search(
            self._rutter.store,
            query=params.query,
            scopes=params.scopes,
            run_id=params.run_id,
            workspace_id=params.workspace_id,
            cursor=params.cursor,
            limit=params.limit,
            now=now_rfc3339(),
            visibility=_visibility_or_raise,
            backfill=_backfill,
        )

    def read(self, params: HistoryReadParams) -> HistoryPage:
        return service.read(
            self._rutter.store,
            handle=params.handle,
            page=params.page,
            now=now_rfc3339(),
            visibility=_visibility_or_none,
        )


def _backfill(store: Store) -> None:
    """Index what an upgraded store held before the history index, once, in one write."""
    with store.write() as conn:
        if service.backfill_pending(conn):
            memory.index_existing(conn)
            index_existing(conn)
            service.finish_backfill(conn)


def _visibility_or_raise(
    conn: Connection, run_id: str | None, workspace_id: str | None
) -> service.Visibility:
    if run_id is None:
        if workspace_id is None:
            return service.Visibility(memory_owners=(service.USER_OWNER,), thread_owners=())
        workspaces.require_workspace(conn, workspace_id)
        # A project's memories, made through any registration of it.
        owners = workspaces.project_workspace_ids(conn, workspace_id)
        return service.Visibility(memory_owners=(service.USER_OWNER, *owners), thread_owners=())
    run_workspace, run_thread = runs.run_place(conn, run_id)
    project = workspaces.project_workspace_ids(conn, run_workspace)
    if workspace_id is not None and workspace_id not in project:
        raise UsageError(
            "run_not_in_workspace",
            f"run {run_id} belongs to another project than workspace {workspace_id}'s",
            details={"run_id": run_id, "workspace_id": workspace_id},
            hint=Hint("drop_workspace_for_run"),
        )
    return service.Visibility(
        memory_owners=(service.USER_OWNER, *project),
        thread_owners=lineage_threads(conn, run_id, run_thread),
    )


def _visibility_or_none(
    conn: Connection, run_id: str | None, workspace_id: str | None
) -> service.Visibility | None:
    try:
        return _visibility_or_raise(conn, run_id, workspace_id)
    except (NotFoundError, UsageError):
        return None


__all__ = [
    "HistoryHits",
    "HistoryOperations",
    "HistoryPage",
    "HistoryReadParams",
    "HistorySearchParams",
]
