"""A thread's latest summary, wherever it came from (docs/reference/continuity.md): a rutter
compaction, a compaction summary an imported transcript carried, or the summary note written
last. What checkpoints carry and what context assembly delivers."""

from __future__ import annotations

from typing import Final

from sqlalchemy.engine import Connection

from rutter_core.continuity import repo as continuity_repo
from rutter_core.continuity.compaction import repo
from rutter_core.continuity.compaction.model import LatestSummary
from rutter_core.continuity.model import Message

IMPORTED_SUMMARY_HEADER: Final = "[compaction summary]\n"
"""How the transcript importers mark a compaction summary an agent wrote (Claude Code's
compact summary, Codex's compacted item): a `system` message starting with this line."""


def latest_summary(
    conn: Connection, thread_id: str, *, before_seq: int | None = None
) -> LatestSummary | None:
    """The thread's latest summary (see `LatestSummary`): of a rutter compaction and an
    imported one, the one standing for the later message; else the summary note written last.
    `before_seq`: only what stands for messages before it."""
    completed = repo.latest_completed(conn, thread_id)
    if completed is not None and before_seq is not None and completed.through_seq >= before_seq:
        completed = None  # pragma: no cover - a compaction reads before its own range ends
    imported = repo.latest_imported_summary(conn, thread_id, IMPORTED_SUMMARY_HEADER)
    if imported is not None and before_seq is not None and imported.seq >= before_seq:
        imported = None
    if imported is not None and (completed is None or imported.seq > completed.through_seq):
        body = imported.text[len(IMPORTED_SUMMARY_HEADER) :].strip()
        return LatestSummary(
            source="imported", id=imported.message_id, version=1,
            text=body or imported.text, redacted=imported.redacted, through_seq=imported.seq,
        )  # fmt: skip
    if completed is not None and completed.summary_text is not None:
        return LatestSummary(
            source="compaction", id=completed.compaction_id, version=1,
            text=completed.summary_text, redacted=completed.summary_redacted,
            through_seq=completed.through_seq,
        )  # fmt: skip
    note = continuity_repo.latest_active_note(conn, thread_id, "summary")
    if note is None:
        return None
    return LatestSummary(
        source="note", id=note.note_id, version=note.version, text=note.text,
        redacted=note.redacted, through_seq=None,
    )  # fmt: skip


def compacted_through(conn: Connection, thread_id: str) -> int:
    """The last message the thread's latest rutter compaction covers (0: none)."""
    found = repo.latest_completed(conn, thread_id)
    return 0 if found is None else found.through_seq


def messages_since(
    conn: Connection, thread_id: str, after_seq: int, limit: int
) -> tuple[list[Message], int]:
    """The newest `limit` messages after `after_seq` (what the latest summary stands for),
    oldest first, and how many messages there are after it in all."""
    return (
        repo.newest_after(conn, thread_id, after_seq, limit),
        repo.count_after(conn, thread_id, after_seq),
    )


def covered_through(conn: Connection, summary_id: str) -> int | None:
    """The last message (its `seq`) a summary stands for, by the summary's ID: a compaction's
    range end, an imported summary's own position; None for a note."""
    if summary_id.startswith("cmp_"):
        found = repo.find_by_id(conn, summary_id)
        return None if found is None else found.through_seq
    if summary_id.startswith("msg_"):
        return repo.message_seq(conn, summary_id)
    return None


def find_message(conn: Connection, message_id: str) -> Message | None:
    """The message with this ID (a receipt's, a carried one's original), or None."""
    return repo.find_message(conn, message_id)


def remove_workspace_compactions(conn: Connection, workspace_id: str) -> int:
    """Delete the compactions of the workspace's threads, in the caller's transaction."""
    return repo.delete_workspace_compactions(conn, workspace_id)


__all__ = [
    "IMPORTED_SUMMARY_HEADER",
    "compacted_through",
    "covered_through",
    "find_message",
    "latest_summary",
    "messages_since",
    "remove_workspace_compactions",
]
