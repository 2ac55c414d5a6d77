"""`session threads`: the threads people look for, newest activity first
(docs/reference/continuity.md).

A title is what a person would recognise the thread by: the session's own title when the agent
wrote one (Claude Code's summary records, stored as `session_title` harness text), else the
first line of the first thing the person said, cut at `TITLE_CHARS` characters with an
ellipsis. The source is the agent a transcript came from (`import:<agent>`), else the surface
that started the thread (`cli`, `lsp`, `http`).
"""

from __future__ import annotations

from typing import Final

from rutter_core.continuity import repo
from rutter_core.continuity.model import ThreadList, ThreadSummary
from rutter_core.store import Store
from rutter_core.workspaces.service import project_workspace_ids, require_workspace

TITLE_CHARS: Final = 80
_SESSION_TITLE_HEAD: Final = "[session summary]\n"
_SURFACE_OF_ACTOR: Final = {"http_control": "http"}


def list_threads(store: Store, workspace_id: str | None) -> ThreadList:
    """The threads of `workspace_id` (`not_registered` when it is not one), or of every
    workspace."""
    with store.read() as conn:
        if workspace_id is not None:
            require_workspace(conn, workspace_id)
        of = None if workspace_id is None else project_workspace_ids(conn, workspace_id)
        found = repo.thread_activity(conn, of)
    return ThreadList(
        items=tuple(
            ThreadSummary(
                thread_id=thread.thread_id,
                title=_title(thread.session_title, thread.first_words),
                source=thread.imported_from
                or _SURFACE_OF_ACTOR.get(thread.created_by, thread.created_by),
                created_by_person=thread.created_by_person,
                message_count=thread.message_count,
                last_activity_at=thread.last_activity_at,
            )
            for thread in found
        )
    )


def _title(session_title: str | None, first_words: str | None) -> str | None:
    if session_title is not None:
        return _first_line(session_title.removeprefix(_SESSION_TITLE_HEAD))
    if first_words is not None:
        return _first_line(first_words)
    return None


def _first_line(text: str) -> str | None:
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    if not line:
        return None
    return line if len(line) <= TITLE_CHARS else f"{line[: TITLE_CHARS - 1].rstrip()}…"


__all__ = ["TITLE_CHARS", "list_threads"]
