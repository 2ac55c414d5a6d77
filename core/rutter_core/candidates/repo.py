"""The rows behind experience candidates: the sources a listing reads (notes, the runs of their
threads, delivery checkpoints and imported replies: read only, never written here) and the
`memory_candidates` table of resolved candidates, which only this module writes.

A pending candidate is stored nowhere: it is derived from its note each time it is read. A
resolved one is an append-only row with no column for a title, a text or references.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import delete, func, insert, select
from sqlalchemy.engine import Connection, Row

from rutter_core.store import person_of
from rutter_core.store.schema import (
    checkpoint_deliveries,
    delivery_reports,
    memory_candidates,
    messages,
    notes,
    runs,
    threads,
)

SOURCE_KINDS = ("decision", "summary")


@dataclass(frozen=True, slots=True)
class SourceNote:
    """A note as a candidate reads it, with its thread's workspace."""

    note_id: str
    thread_id: str
    workspace_id: str
    kind: str
    text: str
    redacted: bool
    references: tuple[str, ...]
    status: str
    version: int
    updated_at: str


@dataclass(frozen=True, slots=True)
class CompletionRow:
    kind: str
    at: str
    run_id: str | None


@dataclass(frozen=True, slots=True)
class ResolvedRow:
    candidate_id: str
    workspace_id: str
    note_id: str
    note_version: int
    thread_id: str
    run_id: str | None
    fingerprint: str
    completion_kind: str
    completion_at: str
    status: str
    version: int
    memory_id: str | None
    reviewed_by: str
    reviewed_at: str
    reviewed_by_person: str | None = None
    """Who reviewed it: the store records it on insert (`insert_resolved`); null for a row
    written before people were recorded."""


def _source(row: Row[Any]) -> SourceNote:
    return SourceNote(
        note_id=str(row.note_id),
        thread_id=str(row.thread_id),
        workspace_id=str(row.workspace_id),
        kind=str(row.kind),
        text=str(row.text),
        redacted=bool(row.redacted),
        references=tuple(str(item) for item in json.loads(row.references_json)),
        status=str(row.status),
        version=int(row.version),
        updated_at=str(row.updated_at),
    )


def _source_query() -> Any:
    return select(
        notes.c.note_id,
        notes.c.thread_id,
        threads.c.workspace_id,
        notes.c.kind,
        notes.c.text,
        notes.c.redacted,
        notes.c.references_json,
        notes.c.status,
        notes.c.version,
        notes.c.updated_at,
    ).select_from(notes.join(threads, threads.c.thread_id == notes.c.thread_id))


def select_sources(conn: Connection, workspace_ids: Sequence[str], limit: int) -> list[SourceNote]:
    """Up to `limit` unresolved sources of these workspaces (a project's), newest change first:
    active decision and summary notes with at least one reference whose version no resolved
    candidate names."""
    resolved = select(memory_candidates.c.candidate_id).where(
        memory_candidates.c.note_id == notes.c.note_id,
        memory_candidates.c.note_version == notes.c.version,
    )
    query = (
        _source_query()
        .where(
            threads.c.workspace_id.in_(list(workspace_ids)),
            notes.c.status == "active",
            notes.c.kind.in_(SOURCE_KINDS),
            notes.c.references_json != "[]",
            ~resolved.exists(),
        )
        .order_by(notes.c.updated_at.desc(), notes.c.note_id.desc())
        .limit(limit)
    )
    return [_source(row) for row in conn.execute(query)]


def find_source(conn: Connection, note_id: str) -> SourceNote | None:
    row = conn.execute(_source_query().where(notes.c.note_id == note_id)).first()
    return None if row is None else _source(row)


def completions(conn: Connection, thread_ids: Iterable[str]) -> dict[str, list[CompletionRow]]:
    """Every completion record of the threads' runs and imported replies, by thread: completed
    runs (`run_completed`), delivery checkpoints (`delivery_checkpoint`), a run whose newest
    delivery report passed (`delivery_report`: a later failed report takes an earlier pass back)
    and the last imported assistant message of a thread (`reply_completed`). A paused run has
    none."""
    wanted = sorted(set(thread_ids))
    found: dict[str, list[CompletionRow]] = {thread_id: [] for thread_id in wanted}
    if not wanted:
        return found
    run_rows = conn.execute(
        select(runs.c.thread_id, runs.c.run_id, runs.c.status, runs.c.updated_at).where(
            runs.c.thread_id.in_(wanted)
        )
    ).all()
    any_run: dict[str, str] = {}
    for row in run_rows:
        any_run.setdefault(str(row.thread_id), str(row.run_id))
        if row.status == "completed":
            found[str(row.thread_id)].append(
                CompletionRow("run_completed", str(row.updated_at), str(row.run_id))
            )
    marks = checkpoint_deliveries
    deliveries = conn.execute(
        select(runs.c.thread_id, marks.c.run_id, marks.c.created_at)
        .select_from(marks.join(runs, runs.c.run_id == marks.c.run_id))
        .where(runs.c.thread_id.in_(wanted))
    )
    for mark in deliveries:
        found[str(mark.thread_id)].append(
            CompletionRow("delivery_checkpoint", str(mark.created_at), str(mark.run_id))
        )
    reports = conn.execute(
        select(runs.c.thread_id, delivery_reports.c.run_id, delivery_reports.c.result)
        .add_columns(delivery_reports.c.created_at)
        .select_from(delivery_reports.join(runs, runs.c.run_id == delivery_reports.c.run_id))
        .where(runs.c.thread_id.in_(wanted))
        .order_by(delivery_reports.c.created_at, delivery_reports.c.report_id)
    )
    newest: dict[str, tuple[str, str, str]] = {}  # run -> its newest report's thread, result, time
    for report in reports:
        newest[str(report.run_id)] = (str(report.thread_id), report.result, report.created_at)
    for reported_run, (reported_thread, result, at) in newest.items():
        if result == "passed":
            found[reported_thread].append(CompletionRow("delivery_report", at, reported_run))
    replies = conn.execute(
        select(messages.c.thread_id, func.max(messages.c.created_at).label("at"))
        .where(
            messages.c.thread_id.in_(wanted),
            messages.c.role == "assistant",
            messages.c.source.like("import:%"),
        )
        .group_by(messages.c.thread_id)
    )
    for reply in replies:
        thread_id = str(reply.thread_id)
        run_id = any_run.get(thread_id)
        found[thread_id].append(CompletionRow("reply_completed", str(reply.at), run_id))
    return found


_RESOLVED_COLUMNS = tuple(column.name for column in memory_candidates.columns)


def _resolved(row: Row[Any]) -> ResolvedRow:
    values = dict(zip(_RESOLVED_COLUMNS, row, strict=True))
    return ResolvedRow(
        candidate_id=str(values["candidate_id"]),
        workspace_id=str(values["workspace_id"]),
        note_id=str(values["note_id"]),
        note_version=int(values["note_version"]),
        thread_id=str(values["thread_id"]),
        run_id=None if values["run_id"] is None else str(values["run_id"]),
        fingerprint=str(values["fingerprint"]),
        completion_kind=str(values["completion_kind"]),
        completion_at=str(values["completion_at"]),
        status=str(values["status"]),
        version=int(values["version"]),
        memory_id=None if values["memory_id"] is None else str(values["memory_id"]),
        reviewed_by=str(values["reviewed_by"]),
        reviewed_at=str(values["reviewed_at"]),
        reviewed_by_person=(
            None if values["reviewed_by_person"] is None else str(values["reviewed_by_person"])
        ),
    )


def find_resolved(conn: Connection, candidate_id: str) -> ResolvedRow | None:
    row = conn.execute(
        select(*memory_candidates.columns).where(memory_candidates.c.candidate_id == candidate_id)
    ).first()
    return None if row is None else _resolved(row)


def insert_resolved(conn: Connection, row: ResolvedRow) -> ResolvedRow:
    """Append `row`, reviewed by the person the transaction acts for; the row as recorded."""
    recorded = replace(row, reviewed_by_person=person_of(conn))
    conn.execute(
        insert(memory_candidates).values(
            **{name: getattr(recorded, name) for name in _RESOLVED_COLUMNS}
        )
    )
    return recorded


def delete_workspace_candidates(conn: Connection, workspace_id: str) -> int:
    """Delete the workspace's resolved candidates (the caller has lifted the append-only
    guards); how many."""
    done = conn.execute(
        delete(memory_candidates).where(memory_candidates.c.workspace_id == workspace_id)
    )
    return int(done.rowcount)


__all__: Sequence[str] = (
    "CompletionRow",
    "ResolvedRow",
    "SourceNote",
    "completions",
    "delete_workspace_candidates",
    "find_resolved",
    "find_source",
    "insert_resolved",
    "select_sources",
)
