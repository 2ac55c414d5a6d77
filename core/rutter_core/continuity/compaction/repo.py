"""The only module touching the `compactions` table (and the one place compaction reads a
thread's messages in ranges of `seq`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.engine import Connection, Row

from rutter_core.continuity.model import Message
from rutter_core.continuity.repo import message_from_row as _message
from rutter_core.store import person_of
from rutter_core.store.schema import compactions, messages, threads


@dataclass(frozen=True, slots=True)
class CompactionRow:
    compaction_id: str
    operation_key: str
    thread_id: str
    request_sha256: str
    summarizer: str
    status: str
    owner: str
    after_seq: int
    through_seq: int
    observed_seq: int
    kept_message_ids: tuple[str, ...]
    compacted_count: int
    unread_count: int
    input: dict[str, Any]
    summary_text: str | None
    summary_tokens: int | None
    summary_redacted: bool
    error_code: str | None
    created_by: str
    created_by_person: str | None
    created_at: str
    updated_at: str


def _row(row: Row[Any]) -> CompactionRow:
    return CompactionRow(
        compaction_id=str(row.compaction_id),
        operation_key=str(row.operation_key),
        thread_id=str(row.thread_id),
        request_sha256=str(row.request_sha256),
        summarizer=str(row.summarizer),
        status=str(row.status),
        owner=str(row.owner),
        after_seq=int(row.after_seq),
        through_seq=int(row.through_seq),
        observed_seq=int(row.observed_seq),
        kept_message_ids=tuple(json.loads(row.kept_json)),
        compacted_count=int(row.compacted_count),
        unread_count=int(row.unread_count),
        input=json.loads(row.input_json),
        summary_text=None if row.summary_text is None else str(row.summary_text),
        summary_tokens=None if row.summary_tokens is None else int(row.summary_tokens),
        summary_redacted=bool(row.summary_redacted),
        error_code=None if row.error_code is None else str(row.error_code),
        created_by=str(row.created_by),
        created_by_person=None if row.created_by_person is None else str(row.created_by_person),
        created_at=str(row.created_at),
        updated_at=str(row.updated_at),
    )


def insert_compaction(
    conn: Connection,
    *,
    compaction_id: str,
    operation_key: str,
    thread_id: str,
    request_sha256: str,
    summarizer: str,
    owner: str,
    after_seq: int,
    through_seq: int,
    observed_seq: int,
    kept_message_ids: tuple[str, ...],
    compacted_count: int,
    unread_count: int,
    input_record: dict[str, Any],
    actor: str,
    now: str,
) -> None:
    conn.execute(
        insert(compactions).values(
            compaction_id=compaction_id,
            operation_key=operation_key,
            thread_id=thread_id,
            request_sha256=request_sha256,
            summarizer=summarizer,
            status="running",
            owner=owner,
            after_seq=after_seq,
            through_seq=through_seq,
            observed_seq=observed_seq,
            kept_json=json.dumps(list(kept_message_ids)),
            compacted_count=compacted_count,
            unread_count=unread_count,
            input_json=json.dumps(input_record, sort_keys=True),
            summary_text=None,
            summary_tokens=None,
            summary_redacted=0,
            error_code=None,
            created_by=actor,
            created_by_person=person_of(conn),
            created_at=now,
            updated_at=now,
        )
    )


def find_by_key(conn: Connection, operation_key: str) -> CompactionRow | None:
    row = conn.execute(
        select(compactions).where(compactions.c.operation_key == operation_key)
    ).first()
    return None if row is None else _row(row)


def find_by_id(conn: Connection, compaction_id: str) -> CompactionRow | None:
    row = conn.execute(
        select(compactions).where(compactions.c.compaction_id == compaction_id)
    ).first()
    return None if row is None else _row(row)


def find_message(conn: Connection, message_id: str) -> Message | None:
    row = conn.execute(select(messages).where(messages.c.message_id == message_id)).first()
    return None if row is None else _message(row)


def message_seq(conn: Connection, message_id: str) -> int | None:
    found = conn.execute(
        select(messages.c.seq).where(messages.c.message_id == message_id)
    ).scalar_one_or_none()
    return None if found is None else int(found)


def find_open(conn: Connection, thread_id: str) -> CompactionRow | None:
    """The thread's running or pending compaction (at most one: a partial unique index)."""
    row = conn.execute(
        select(compactions).where(
            compactions.c.thread_id == thread_id,
            compactions.c.status.in_(("running", "pending_verification")),
        )
    ).first()
    return None if row is None else _row(row)


def latest_completed(conn: Connection, thread_id: str) -> CompactionRow | None:
    row = conn.execute(
        select(compactions)
        .where(compactions.c.thread_id == thread_id, compactions.c.status == "completed")
        .order_by(compactions.c.through_seq.desc(), compactions.c.updated_at.desc())
        .limit(1)
    ).first()
    return None if row is None else _row(row)


def select_completed_of(
    conn: Connection, thread_ids: Sequence[str], limit: int
) -> list[CompactionRow]:
    """The completed compactions of the threads, in the order they completed, at most
    `limit` (what a session tree projects)."""
    rows = conn.execute(
        select(compactions)
        .where(compactions.c.thread_id.in_(thread_ids), compactions.c.status == "completed")
        .order_by(compactions.c.updated_at, compactions.c.compaction_id)
        .limit(limit)
    )
    return [_row(row) for row in rows]


def set_status(
    conn: Connection,
    compaction_id: str,
    *,
    expected: tuple[str, ...],
    status: str,
    now: str,
    owner: str | None = None,
    error_code: str | None = None,
    summary: tuple[str, int, bool] | None = None,
) -> bool:
    """Move the compaction to `status` when it is in one of the `expected` ones; False when
    it was not (someone else moved it first)."""
    values: dict[str, Any] = {"status": status, "updated_at": now}
    if owner is not None:
        values["owner"] = owner
    if error_code is not None:
        values["error_code"] = error_code
    if summary is not None:
        values["summary_text"], values["summary_tokens"], redacted = summary
        values["summary_redacted"] = int(redacted)
    done = conn.execute(
        update(compactions)
        .where(compactions.c.compaction_id == compaction_id, compactions.c.status.in_(expected))
        .values(**values)
    )
    return bool(done.rowcount == 1)


def last_seq(conn: Connection, thread_id: str) -> int:
    found = conn.execute(
        select(func.max(messages.c.seq)).where(messages.c.thread_id == thread_id)
    ).scalar_one()
    return 0 if found is None else int(found)


def count_after(conn: Connection, thread_id: str, after_seq: int) -> int:
    return int(
        conn.execute(
            select(func.count())
            .select_from(messages)
            .where(messages.c.thread_id == thread_id, messages.c.seq > after_seq)
        ).scalar_one()
    )


def newest_after(conn: Connection, thread_id: str, after_seq: int, limit: int) -> list[Message]:
    """The newest `limit` messages after `after_seq`, oldest first."""
    rows = conn.execute(
        select(messages)
        .where(messages.c.thread_id == thread_id, messages.c.seq > after_seq)
        .order_by(messages.c.seq.desc())
        .limit(limit)
    ).all()
    return [_message(row) for row in reversed(rows)]


def iter_newest_first(
    conn: Connection, thread_id: str, after_seq: int, through_seq: int, batch: int = 200
) -> Any:
    """The messages in (`after_seq`, `through_seq`], newest first, read in batches (a
    summarizer's window usually ends long before the range does)."""
    upper = through_seq
    while upper > after_seq:
        rows = conn.execute(
            select(messages)
            .where(
                messages.c.thread_id == thread_id,
                messages.c.seq > after_seq,
                messages.c.seq <= upper,
            )
            .order_by(messages.c.seq.desc())
            .limit(batch)
        ).all()
        if not rows:
            return
        for row in rows:
            yield _message(row)
        upper = int(rows[-1].seq) - 1


def latest_imported_summary(conn: Connection, thread_id: str, header: str) -> Message | None:
    """The thread's newest `system` message whose text starts with `header` (how imported
    transcripts mark the compaction summary they carried)."""
    row = conn.execute(
        select(messages)
        .where(
            messages.c.thread_id == thread_id,
            messages.c.role == "system",
            messages.c.text.startswith(header, autoescape=True),
        )
        .order_by(messages.c.seq.desc())
        .limit(1)
    ).first()
    return None if row is None else _message(row)


def delete_workspace_compactions(conn: Connection, workspace_id: str) -> int:
    """Delete the compactions of the workspace's threads (a `workspace remove --cascade`)."""
    owned = select(threads.c.thread_id).where(threads.c.workspace_id == workspace_id)
    done = conn.execute(delete(compactions).where(compactions.c.thread_id.in_(owned)))
    return int(done.rowcount or 0)


__all__ = [
    "CompactionRow",
    "count_after",
    "delete_workspace_compactions",
    "find_by_id",
    "find_by_key",
    "find_message",
    "find_open",
    "insert_compaction",
    "iter_newest_first",
    "last_seq",
    "latest_completed",
    "latest_imported_summary",
    "message_seq",
    "newest_after",
    "set_status",
]
