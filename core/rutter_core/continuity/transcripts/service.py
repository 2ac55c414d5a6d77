"""Storing an imported transcript: the thread that holds the agent's session, and its new
messages, in the caller's write transaction (docs/reference/transcripts.md).

A transcript is found again by its session ID under its source (`import:<agent>`), so a
re-import appends to the same thread, and only the messages whose external IDs the thread does
not hold yet: a message already there counts as `already_present`, whatever its stored text
(the text stored is what was imported then; a later redaction rule does not make it new).
Messages keep the agent's own time as `created_at` (the import's time when the line has none);
their order in the thread (`seq`) is the transcript's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.engine import Connection

from rutter_core.continuity import repo as continuity_repo
from rutter_core.continuity.threads import require_thread, start_thread
from rutter_core.continuity.transcripts import repo
from rutter_core.continuity.transcripts.prepare import Prepared
from rutter_core.kernel.errors import ConflictError, RejectedError
from rutter_core.kernel.ids import new_id
from rutter_core.workspaces.service import project_workspace_ids


@dataclass(frozen=True, slots=True)
class KnownThread:
    thread_id: str
    workspace_id: str


def known_thread(conn: Connection, source: str, session_id: str) -> KnownThread | None:
    """The thread holding this agent session, when it was imported before."""
    thread_id = repo.thread_of(conn, source, session_id)
    if thread_id is None:
        return None
    return thread_in(conn, thread_id)


def thread_in(conn: Connection, thread_id: str) -> KnownThread:
    """A thread and its workspace (`thread_not_found`)."""
    require_thread(conn, thread_id, writable=False)
    found = continuity_repo.find_thread(conn, thread_id)
    assert found is not None
    return KnownThread(found.thread_id, found.workspace_id)


def bind_thread(
    conn: Connection,
    *,
    source: str,
    session_id: str,
    chosen_thread: str | None,
    workspace_id: str,
    actor: str,
    now: str,
) -> tuple[str, bool]:
    """The thread this transcript goes into, recorded for re-imports: the one it went into
    before, else `chosen_thread`, else a new thread of `workspace_id`. Answers (thread ID,
    whether the thread was created). A transcript already in another thread than the chosen one
    is `transcript_in_other_thread` (conflict); a thread of another project is
    `thread_in_other_workspace`; an archived one `thread_archived`."""
    before = repo.thread_of(conn, source, session_id)
    if before is not None:
        if chosen_thread is not None and chosen_thread != before:
            raise ConflictError(
                "transcript_in_other_thread",
                f"this transcript was imported into thread {before} before; a re-import "
                "appends to that thread only",
                details={"thread_id": before},
            )
        _require_workspace_of(conn, before, workspace_id)
        require_thread(conn, before, writable=True)
        return before, False
    created = chosen_thread is None
    if chosen_thread is None:
        thread_id = start_thread(conn, workspace_id=workspace_id, actor=actor, now=now)
    else:
        thread_id = chosen_thread
        _require_workspace_of(conn, thread_id, workspace_id)
        require_thread(conn, thread_id, writable=True)
    repo.insert_import(
        conn, source=source, session_id=session_id, thread_id=thread_id, actor=actor, now=now
    )
    return thread_id, created


def _require_workspace_of(conn: Connection, thread_id: str, workspace_id: str) -> None:
    """The thread is of `workspace_id`'s project: made through it or through another
    registration of the project (another path or machine), whose records it shares."""
    found = thread_in(conn, thread_id)
    if found.workspace_id not in project_workspace_ids(conn, workspace_id):
        raise RejectedError(
            "thread_in_other_workspace",
            f"thread {thread_id} belongs to workspace {found.workspace_id!r}, not "
            f"{workspace_id!r} or another registration of its project",
            details={"thread_id": thread_id, "workspace_id": found.workspace_id},
        )


def present_ids(conn: Connection, thread_id: str, source: str) -> set[str]:
    """The external IDs the thread holds from this source already."""
    return repo.external_ids(conn, thread_id, source)


def append_messages(
    conn: Connection, thread_id: str, source: str, prepared: Sequence[Prepared], *, now: str
) -> tuple[list[Prepared], int]:
    """Append the messages the thread does not hold yet, in order, in one statement. Answers
    the ones stored and how many were there already."""
    present = repo.external_ids(conn, thread_id, source)
    stored: list[Prepared] = []
    rows: list[dict[str, object]] = []
    seq = continuity_repo.next_seq(conn, thread_id)
    for message in prepared:
        if message.external_id in present:
            continue
        present.add(message.external_id)
        rows.append(
            {
                "message_id": new_id("msg"),
                "thread_id": thread_id,
                "seq": seq + len(rows),
                "role": message.role,
                "text": message.text,
                "redacted": int(message.redacted),
                "source": source,
                "external_id": message.external_id,
                "created_at": message.created_at or now,
                "injected": message.injected,
            }
        )
        stored.append(message)
    repo.insert_messages(conn, rows)
    return stored, len(prepared) - len(stored)


__all__ = [
    "KnownThread",
    "append_messages",
    "bind_thread",
    "known_thread",
    "present_ids",
    "thread_in",
]


def remove_workspace_imports(conn: Connection, workspace_id: str) -> int:
    """Forget which of the workspace's threads hold which transcripts (`workspace remove
    --cascade`, guards lifted by the caller); how many records."""
    return repo.delete_workspace_imports(conn, workspace_id)
