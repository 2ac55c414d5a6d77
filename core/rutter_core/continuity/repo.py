"""The only module of session continuity that touches its tables: threads, sessions,
continuity nodes and their snapshots, messages and notes.

Every function takes the caller's `Connection`, so what a run creates (its thread, session and
root node) is written in the run's own transaction, and a checkpoint reads the thread and
appends its node in one. Rows come back as the continuity models, or as stored rows
(`StoredNode`) that `continuity.checkpoints` verifies before anything uses them.

Its sections, after the threads, sessions, nodes, messages and notes: delivery checkpoints
(`checkpoint_deliveries`, the completion record of experience candidates), the operation keys of
resumes and forks (`branch_operations`, so the same key answers the same run), what history
search reads (a run's lineage in one statement, and what threads hold, read whole for the
index's backfill: `continuity.indexing.index_existing`), and the rows of a whole workspace,
counted and deleted for `workspace remove` (the caller has lifted the append-only guards).

Why one module: it is the one place that knows continuity's tables and how their rows map to
the models; each function is a statement or two over those same tables, and splitting them by
table or by caller would only spread that knowledge over several modules (the sections above
were once four modules of their own, cut to stay under a line count).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final

from sqlalchemy import case, delete, func, insert, select, text, update
from sqlalchemy.engine import Connection, Row
from sqlalchemy.sql import Select

from rutter_core.continuity.indexing import (
    index_checkpoint,
    index_messages,
    index_note,
    unindex_threads,
)
from rutter_core.continuity.model import Message, Note, NoteKind, Role
from rutter_core.store import person_of
from rutter_core.store.schema import (
    branch_operations,
    checkpoint_deliveries,
    continuity_nodes,
    continuity_snapshots,
    messages,
    notes,
    sessions,
    threads,
    transcript_imports,
)

TITLE_SOURCE_CHARS = 400
"""How much of a message is read to make a title of it."""


@dataclass(frozen=True, slots=True)
class ThreadRow:
    thread_id: str
    workspace_id: str
    status: str


def insert_thread(
    conn: Connection, *, thread_id: str, workspace_id: str, actor: str, now: str
) -> None:
    conn.execute(
        insert(threads).values(
            thread_id=thread_id,
            workspace_id=workspace_id,
            status="active",
            created_by=actor,
            created_by_person=person_of(conn),
            created_at=now,
            updated_at=now,
        )
    )


def find_thread(conn: Connection, thread_id: str) -> ThreadRow | None:
    row = conn.execute(
        select(threads.c.thread_id, threads.c.workspace_id, threads.c.status).where(
            threads.c.thread_id == thread_id
        )
    ).first()
    if row is None:
        return None
    return ThreadRow(str(row.thread_id), str(row.workspace_id), str(row.status))


def insert_session(
    conn: Connection,
    *,
    session_id: str,
    workspace_id: str,
    thread_id: str,
    actor: str,
    now: str,
) -> None:
    conn.execute(
        insert(sessions).values(
            session_id=session_id,
            workspace_id=workspace_id,
            thread_id=thread_id,
            status="active",
            created_by=actor,
            created_by_person=person_of(conn),
            created_at=now,
            updated_at=now,
        )
    )


def close_session(conn: Connection, session_id: str, *, now: str) -> None:
    conn.execute(
        update(sessions)
        .where(sessions.c.session_id == session_id)
        .values(status="closed", updated_at=now)
    )


def insert_node(
    conn: Connection,
    *,
    node_id: str,
    run_id: str,
    session_id: str,
    thread_id: str,
    parent_node_id: str | None,
    kind: str,
    actor: str,
    now: str,
) -> str:
    """Append a node; the person it records as making it."""
    person = person_of(conn)
    conn.execute(
        insert(continuity_nodes).values(
            node_id=node_id,
            run_id=run_id,
            session_id=session_id,
            thread_id=thread_id,
            parent_node_id=parent_node_id,
            kind=kind,
            created_by=actor,
            created_by_person=person,
            created_at=now,
        )
    )
    return person


@dataclass(frozen=True, slots=True)
class StoredNode:
    """A node row with its snapshot row (None for a node without one, such as a root), as
    stored: not yet checked."""

    node_id: str
    run_id: str
    session_id: str
    thread_id: str
    parent_node_id: str | None
    kind: str
    created_by: str
    created_by_person: str | None
    created_at: str
    title: str | None
    protocol_version: str | None
    snapshot_json: str | None
    fingerprint: str | None


def _node_query() -> Select[Any]:
    node, snap = continuity_nodes, continuity_snapshots
    return select(
        node, snap.c.title, snap.c.protocol_version, snap.c.snapshot_json, snap.c.fingerprint
    ).outerjoin(snap, snap.c.node_id == node.c.node_id)


def _person(value: object) -> str | None:
    """A stored `*_person` column (null: written before people were recorded)."""
    return None if value is None else str(value)


def _stored_node(row: Row[Any]) -> StoredNode:
    return StoredNode(
        node_id=str(row.node_id),
        run_id=str(row.run_id),
        session_id=str(row.session_id),
        thread_id=str(row.thread_id),
        parent_node_id=None if row.parent_node_id is None else str(row.parent_node_id),
        kind=str(row.kind),
        created_by=str(row.created_by),
        created_by_person=_person(row.created_by_person),
        created_at=str(row.created_at),
        title=None if row.title is None else str(row.title),
        protocol_version=None if row.protocol_version is None else str(row.protocol_version),
        snapshot_json=None if row.snapshot_json is None else str(row.snapshot_json),
        fingerprint=None if row.fingerprint is None else str(row.fingerprint),
    )


def find_node(conn: Connection, node_id: str) -> StoredNode | None:
    row = conn.execute(_node_query().where(continuity_nodes.c.node_id == node_id)).first()
    return None if row is None else _stored_node(row)


def runs_of_thread(conn: Connection, thread_id: str) -> list[str]:
    """The runs working in the thread, newest first (each run has one root node)."""
    rows = conn.execute(
        select(continuity_nodes.c.run_id)
        .where(continuity_nodes.c.thread_id == thread_id, continuity_nodes.c.kind == "root")
        .order_by(continuity_nodes.c.created_at.desc(), continuity_nodes.c.run_id.desc())
    ).scalars()
    return [str(run_id) for run_id in rows]


def run_start_node(conn: Connection, run_id: str, kinds: tuple[str, ...]) -> StoredNode | None:
    """The node of `kinds` the run's line starts at (its root or branch marker)."""
    node = continuity_nodes
    row = conn.execute(
        _node_query()
        .where(node.c.run_id == run_id, node.c.kind.in_(kinds))
        .order_by(node.c.created_at, node.c.node_id)
        .limit(1)
    ).first()
    return None if row is None else _stored_node(row)


def select_children(conn: Connection, parent_ids: Sequence[str], limit: int) -> list[StoredNode]:
    """The nodes whose parent is one of `parent_ids`, oldest first, at most `limit`."""
    node = continuity_nodes
    rows = conn.execute(
        _node_query()
        .where(node.c.parent_node_id.in_(parent_ids))
        .order_by(node.c.created_at, node.c.node_id)
        .limit(limit)
    )
    return [_stored_node(row) for row in rows]


def chain_end(conn: Connection, run_id: str, kinds: tuple[str, ...]) -> str | None:
    """The end of the run's chain of nodes of `kinds`: the one that no node of the run of
    those kinds has as its parent. Under the write lock a run's chain is a line, so there is
    one; should two writers ever have branched it, the newest end is taken."""
    node, child = continuity_nodes, continuity_nodes.alias("child")
    has_child = (
        select(child.c.node_id)
        .where(
            child.c.parent_node_id == node.c.node_id,
            child.c.run_id == run_id,
            child.c.kind.in_(kinds),
        )
        .exists()
    )
    found = conn.execute(
        select(node.c.node_id)
        .where(node.c.run_id == run_id, node.c.kind.in_(kinds), ~has_child)
        .order_by(node.c.created_at.desc(), node.c.node_id.desc())
        .limit(1)
    ).scalar_one_or_none()
    return None if found is None else str(found)


def insert_snapshot(
    conn: Connection,
    *,
    node_id: str,
    thread_id: str,
    summary: str | None,
    protocol_version: str,
    title: str,
    snapshot_json: str,
    fingerprint: str,
) -> None:
    conn.execute(
        insert(continuity_snapshots).values(
            node_id=node_id,
            protocol_version=protocol_version,
            title=title,
            snapshot_json=snapshot_json,
            fingerprint=fingerprint,
        )
    )
    index_checkpoint(conn, node_id, thread_id, title, summary)


@dataclass(frozen=True, slots=True)
class ThreadActivity:
    thread_id: str
    created_by: str
    created_by_person: str | None
    imported_from: str | None
    message_count: int
    last_activity_at: str | None
    session_title: str | None
    first_words: str | None


def thread_activity(conn: Connection, workspace_ids: Sequence[str] | None) -> list[ThreadActivity]:
    """Every thread (of `workspace_id`, or of every workspace), with its message count, newest
    message time, the newest session title an agent wrote and the beginning of the person's
    first message; newest activity first, threads without messages last (newest first)."""
    stats = (
        select(
            messages.c.thread_id,
            func.count().label("message_count"),
            # A session's title is no activity (Claude Code's has no time: the import's).
            func.max(
                case((messages.c.injected == "session_title", None), else_=messages.c.created_at)
            ).label("last_activity_at"),
        )
        .group_by(messages.c.thread_id)
        .subquery()
    )
    imported = (
        select(
            transcript_imports.c.thread_id,
            func.min(transcript_imports.c.source).label("source"),
        )
        .group_by(transcript_imports.c.thread_id)
        .subquery()
    )
    title = (
        select(func.substr(messages.c.text, 1, TITLE_SOURCE_CHARS))
        .where(messages.c.thread_id == threads.c.thread_id, messages.c.injected == "session_title")
        .order_by(messages.c.seq.desc())
        .limit(1)
        .scalar_subquery()
    )
    first_words = (
        select(func.substr(messages.c.text, 1, TITLE_SOURCE_CHARS))
        .where(messages.c.thread_id == threads.c.thread_id, messages.c.role == "user")
        .order_by(messages.c.seq)
        .limit(1)
        .scalar_subquery()
    )
    query = (
        select(
            threads.c.thread_id,
            threads.c.created_by,
            threads.c.created_by_person,
            imported.c.source,
            stats.c.message_count,
            stats.c.last_activity_at,
            title.label("session_title"),
            first_words.label("first_words"),
        )
        .outerjoin(stats, stats.c.thread_id == threads.c.thread_id)
        .outerjoin(imported, imported.c.thread_id == threads.c.thread_id)
        .order_by(
            case((stats.c.last_activity_at.is_(None), 1), else_=0),
            stats.c.last_activity_at.desc(),
            threads.c.created_at.desc(),
            threads.c.thread_id.desc(),
        )
    )
    if workspace_ids is not None:
        query = query.where(threads.c.workspace_id.in_(list(workspace_ids)))
    return [
        ThreadActivity(
            thread_id=str(row.thread_id),
            created_by=str(row.created_by),
            created_by_person=_person(row.created_by_person),
            imported_from=None if row.source is None else str(row.source),
            message_count=int(row.message_count or 0),
            last_activity_at=None if row.last_activity_at is None else str(row.last_activity_at),
            session_title=None if row.session_title is None else str(row.session_title),
            first_words=None if row.first_words is None else str(row.first_words),
        )
        for row in conn.execute(query)
    ]


# -- messages ----------------------------------------------------------------------------------


def _message(row: Row[Any]) -> Message:
    return Message(
        message_id=str(row.message_id),
        thread_id=str(row.thread_id),
        seq=int(row.seq),
        role=row.role,
        source=str(row.source),
        source_person=_person(row.source_person),
        external_id=None if row.external_id is None else str(row.external_id),
        text=str(row.text),
        redacted=bool(row.redacted),
        created_at=str(row.created_at),
        injected=row.injected,
    )


message_from_row = _message
"""A `messages` row as a `Message` (for `continuity.compaction.repo`, which reads ranges)."""


def next_seq(conn: Connection, thread_id: str) -> int:
    """The next message position of the thread (under the write lock: nobody else takes it;
    elsewhere the UNIQUE (thread_id, seq) makes a second taker a conflict)."""
    last = conn.execute(
        select(func.max(messages.c.seq)).where(messages.c.thread_id == thread_id)
    ).scalar_one()
    return 1 if last is None else int(last) + 1


def insert_message(
    conn: Connection,
    *,
    message_id: str,
    thread_id: str,
    seq: int,
    role: Role,
    text: str,
    redacted: bool,
    source: str,
    external_id: str | None,
    now: str,
) -> Message:
    values = {
        "message_id": message_id,
        "thread_id": thread_id,
        "seq": seq,
        "role": role,
        "text": text,
        "redacted": int(redacted),
        "source": source,
        "source_person": person_of(conn),
        "external_id": external_id,
        "created_at": now,
    }
    conn.execute(insert(messages).values(**values))
    index_messages(conn, [(message_id, thread_id, role, text)])
    return Message(**{**values, "redacted": redacted})


def find_external_message(
    conn: Connection, thread_id: str, source: str, external_id: str
) -> Message | None:
    row = conn.execute(
        select(messages).where(
            messages.c.thread_id == thread_id,
            messages.c.source == source,
            messages.c.external_id == external_id,
        )
    ).first()
    return None if row is None else _message(row)


def select_messages(
    conn: Connection, thread_id: str, *, limit: int, before_seq: int | None = None
) -> list[Message]:
    """The thread's most recent `limit` messages (before `before_seq` when given), oldest
    first."""
    query = select(messages).where(messages.c.thread_id == thread_id)
    if before_seq is not None:
        query = query.where(messages.c.seq < before_seq)
    rows = conn.execute(query.order_by(messages.c.seq.desc()).limit(limit)).all()
    return [_message(row) for row in reversed(rows)]


def count_messages(conn: Connection, thread_id: str) -> int:
    return int(
        conn.execute(
            select(func.count()).select_from(messages).where(messages.c.thread_id == thread_id)
        ).scalar_one()
    )


# -- notes -------------------------------------------------------------------------------------


def _note(row: Row[Any]) -> Note:
    return Note(
        note_id=str(row.note_id),
        thread_id=str(row.thread_id),
        kind=row.kind,
        text=str(row.text),
        redacted=bool(row.redacted),
        references=tuple(str(item) for item in json.loads(row.references_json)),
        status=row.status,
        superseded_by=None if row.superseded_by is None else str(row.superseded_by),
        version=int(row.version),
        created_by=str(row.created_by),
        created_by_person=_person(row.created_by_person),
        updated_by=str(row.updated_by),
        updated_by_person=_person(row.updated_by_person),
        created_at=str(row.created_at),
        updated_at=str(row.updated_at),
    )


def insert_note(
    conn: Connection,
    *,
    note_id: str,
    thread_id: str,
    kind: NoteKind,
    text: str,
    redacted: bool,
    references: tuple[str, ...] = (),
    actor: str,
    now: str,
) -> Note:
    conn.execute(
        insert(notes).values(
            note_id=note_id,
            thread_id=thread_id,
            kind=kind,
            text=text,
            redacted=int(redacted),
            references_json=json.dumps(list(references), ensure_ascii=False),
            status="active",
            superseded_by=None,
            version=1,
            created_by=actor,
            created_by_person=person_of(conn),
            updated_by=actor,
            updated_by_person=person_of(conn),
            created_at=now,
            updated_at=now,
        )
    )
    found = find_note(conn, note_id)
    assert found is not None, note_id
    index_note(conn, found)
    return found


def find_note(conn: Connection, note_id: str) -> Note | None:
    row = conn.execute(select(notes).where(notes.c.note_id == note_id)).first()
    return None if row is None else _note(row)


def update_note(
    conn: Connection,
    read: Note,
    *,
    actor: str,
    now: str,
    text: str | None = None,
    redacted: bool | None = None,
    superseded_by: str | None = None,
    supersede: bool = False,
) -> Note | None:
    """Version + 1 of the note as `read` with the given changes; None when it is no longer at
    that version (changed meanwhile)."""
    values: dict[str, Any] = {
        "updated_by": actor,
        "updated_by_person": person_of(conn),
        "updated_at": now,
        "version": read.version + 1,
    }
    if text is not None:
        values["text"] = text
    if redacted is not None:
        values["redacted"] = int(redacted)
    if supersede:
        values["status"] = "superseded"
        values["superseded_by"] = superseded_by
    done = conn.execute(
        update(notes)
        .where(notes.c.note_id == read.note_id, notes.c.version == read.version)
        .values(**values)
    )
    if done.rowcount != 1:
        return None
    found = find_note(conn, read.note_id)
    if found is not None:
        index_note(conn, found)
    return found


def select_notes(conn: Connection, thread_id: str, *, include_superseded: bool) -> list[Note]:
    query = select(notes).where(notes.c.thread_id == thread_id)
    if not include_superseded:
        query = query.where(notes.c.status == "active")
    rows = conn.execute(query.order_by(notes.c.created_at, notes.c.note_id))
    return [_note(row) for row in rows]


def select_active_notes_of(
    conn: Connection, thread_ids: Sequence[str], kind: NoteKind, limit: int
) -> list[Note]:
    """The active notes of `kind` of the threads, in the order they were added, at most
    `limit`."""
    rows = conn.execute(
        select(notes)
        .where(notes.c.thread_id.in_(thread_ids), notes.c.kind == kind, notes.c.status == "active")
        .order_by(notes.c.created_at, notes.c.note_id)
        .limit(limit)
    )
    return [_note(row) for row in rows]


def latest_active_note(conn: Connection, thread_id: str, kind: NoteKind) -> Note | None:
    """The active note of `kind` written or edited last (ties: the later ID)."""
    row = conn.execute(
        select(notes)
        .where(notes.c.thread_id == thread_id, notes.c.kind == kind, notes.c.status == "active")
        .order_by(notes.c.updated_at.desc(), notes.c.note_id.desc())
        .limit(1)
    ).first()
    return None if row is None else _note(row)


# -- across a workspace ------------------------------------------------------------------------


def select_recent_nodes(
    conn: Connection, workspace_ids: Sequence[str], limit: int
) -> list[StoredNode]:
    """The stored nodes of these workspaces' threads, newest first, at most `limit`."""
    node = continuity_nodes
    rows = conn.execute(
        _node_query()
        .join(threads, threads.c.thread_id == node.c.thread_id)
        .where(threads.c.workspace_id.in_(list(workspace_ids)))
        .order_by(node.c.created_at.desc(), node.c.node_id.desc())
        .limit(limit)
    )
    return [_stored_node(row) for row in rows]


def continuity_marks(
    conn: Connection, workspace_ids: Sequence[str]
) -> dict[str, tuple[int, int, int, int]]:
    """Per workspace: how many nodes, messages and notes its threads hold, and the sum of the
    notes' versions. Nodes and messages are append-only and a note's every change raises its
    version, so any change of them changes these numbers."""
    found: dict[str, list[int]] = {ws: [0, 0, 0, 0] for ws in workspace_ids}
    if not workspace_ids:
        return {}
    owner = threads.c.workspace_id
    in_scope = owner.in_(list(workspace_ids))
    counted = (
        (0, select(owner, func.count()).select_from(continuity_nodes.join(
            threads, threads.c.thread_id == continuity_nodes.c.thread_id))),
        (1, select(owner, func.count()).select_from(messages.join(
            threads, threads.c.thread_id == messages.c.thread_id))),
    )  # fmt: skip
    for index, query in counted:
        for workspace_id, count in conn.execute(query.where(in_scope).group_by(owner)):
            found[str(workspace_id)][index] = int(count)
    note_query = (
        select(owner, func.count(), func.coalesce(func.sum(notes.c.version), 0))
        .select_from(notes.join(threads, threads.c.thread_id == notes.c.thread_id))
        .where(in_scope)
        .group_by(owner)
    )
    for workspace_id, count, versions in conn.execute(note_query):
        found[str(workspace_id)][2:] = [int(count), int(versions)]
    return {ws: (marks[0], marks[1], marks[2], marks[3]) for ws, marks in found.items()}


# -- delivery checkpoints: which checkpoints mark their run's delivery (append-only) -----------


def insert_delivery(conn: Connection, *, node_id: str, run_id: str, actor: str, now: str) -> None:
    """Mark the checkpoint `node_id` as its run's delivery, in the caller's transaction."""
    values = {
        "node_id": node_id,
        "run_id": run_id,
        "created_by": actor,
        "created_by_person": person_of(conn),
        "created_at": now,
    }
    conn.execute(insert(checkpoint_deliveries).values(**values))


# -- the operation keys of resumes and forks (branch_operations, migration 15) -----------------


@dataclass(frozen=True, slots=True)
class BranchOperation:
    operation_key: str
    kind: str
    node_id: str
    request_sha256: str
    run_id: str
    marker_node_id: str


def find_branch_operation(conn: Connection, operation_key: str) -> BranchOperation | None:
    row = conn.execute(
        select(branch_operations).where(branch_operations.c.operation_key == operation_key)
    ).first()
    if row is None:
        return None
    return BranchOperation(
        str(row.operation_key), str(row.kind), str(row.node_id), str(row.request_sha256),
        str(row.run_id), str(row.marker_node_id),
    )  # fmt: skip


def insert_branch_operation(
    conn: Connection, found: BranchOperation, *, actor: str, now: str
) -> None:
    conn.execute(
        insert(branch_operations).values(
            operation_key=found.operation_key, kind=found.kind, node_id=found.node_id,
            request_sha256=found.request_sha256, run_id=found.run_id,
            marker_node_id=found.marker_node_id, created_by=actor,
            created_by_person=person_of(conn), created_at=now,
        )
    )  # fmt: skip


def delete_workspace_branch_operations(conn: Connection, workspace_id: str) -> int:
    """Delete the operation keys of the resumes and forks of the workspace's runs."""
    owned = select(sessions.c.session_id).where(sessions.c.workspace_id == workspace_id)
    nodes = select(continuity_nodes.c.node_id).where(continuity_nodes.c.session_id.in_(owned))
    done = conn.execute(
        delete(branch_operations).where(
            branch_operations.c.node_id.in_(nodes) | branch_operations.c.marker_node_id.in_(nodes)
        )
    )
    return int(done.rowcount or 0)


# -- history search: a run's lineage, and what threads hold for the index's backfill -----------


_LINEAGE: Final = text(
    """
    WITH RECURSIVE chain (run_id, thread_id, depth) AS (
        SELECT run_id, thread_id, 0 FROM continuity_nodes
        WHERE run_id = :run_id AND kind IN ('root', 'fork', 'resume')
        UNION
        SELECT parent.run_id, parent.thread_id, chain.depth + 1
        FROM chain
        JOIN continuity_nodes AS start
            ON start.run_id = chain.run_id AND start.kind IN ('fork', 'resume')
        JOIN continuity_nodes AS parent ON parent.node_id = start.parent_node_id
        WHERE chain.depth < :max_hops
    )
    SELECT thread_id, min(depth) AS nearest FROM chain GROUP BY thread_id ORDER BY nearest
    """
)
"""A run's start node (root, fork or resume marker), then the node each branch marker's
parent is, run after run: the threads met, nearest first."""


def lineage_threads(conn: Connection, run_id: str, max_hops: int) -> list[str]:
    rows = conn.execute(_LINEAGE, {"run_id": run_id, "max_hops": max_hops})
    return [str(row[0]) for row in rows]


def all_messages(conn: Connection) -> Iterator[tuple[str, str, str, str]]:
    """(message ID, thread ID, role, text) of every message."""
    rows = conn.execute(
        select(messages.c.message_id, messages.c.thread_id, messages.c.role, messages.c.text)
    )
    for row in rows:
        yield str(row[0]), str(row[1]), str(row[2]), str(row[3])


def active_notes(conn: Connection) -> Iterator[tuple[str, str, str, int, str]]:
    """(note ID, thread ID, kind, version, text) of every active note."""
    rows = conn.execute(
        select(notes.c.note_id, notes.c.thread_id, notes.c.kind, notes.c.version, notes.c.text)
        .where(notes.c.status == "active")
    )  # fmt: skip
    for row in rows:
        yield str(row[0]), str(row[1]), str(row[2]), int(row[3]), str(row[4])


def all_checkpoints(conn: Connection) -> Iterator[tuple[str, str, str, str | None]]:
    """(node ID, thread ID, title, summary) of every checkpoint snapshot."""
    rows = conn.execute(
        select(
            continuity_snapshots.c.node_id,
            continuity_nodes.c.thread_id,
            continuity_snapshots.c.title,
            continuity_snapshots.c.snapshot_json,
        ).join(continuity_nodes, continuity_nodes.c.node_id == continuity_snapshots.c.node_id)
    )
    for row in rows:
        summary = json.loads(str(row[3])).get("summary")
        yield str(row[0]), str(row[1]), str(row[2]), summary if isinstance(summary, str) else None


# -- a whole workspace's continuity, counted and deleted for `workspace remove` ----------------


def count_sessions(conn: Connection, workspace_id: str) -> int:
    query = (
        select(func.count()).select_from(sessions).where(sessions.c.workspace_id == workspace_id)
    )
    return int(conn.execute(query).scalar_one())


def count_threads_without_session(conn: Connection, workspace_id: str) -> int:
    """Threads no session continues (an imported transcript's): a run's thread has one."""
    has_session = select(sessions.c.thread_id).where(sessions.c.thread_id == threads.c.thread_id)
    query = (
        select(func.count())
        .select_from(threads)
        .where(threads.c.workspace_id == workspace_id, ~has_session.exists())
    )
    return int(conn.execute(query).scalar_one())


def delete_thread_contents(conn: Connection, workspace_id: str) -> dict[str, int]:
    """Delete the checkpoint snapshots, nodes, messages and notes of the workspace's threads
    (the caller has lifted the append-only guards); how many of each."""
    of_workspace = select(threads.c.thread_id).where(threads.c.workspace_id == workspace_id)
    unindex_threads(conn, [str(t) for t in conn.execute(of_workspace).scalars()])
    nodes = select(continuity_nodes.c.node_id).where(continuity_nodes.c.thread_id.in_(of_workspace))
    # A delivery mark names its node: it goes first (not counted: it is part of its checkpoint).
    conn.execute(delete(checkpoint_deliveries).where(checkpoint_deliveries.c.node_id.in_(nodes)))
    done = {
        "checkpoints": conn.execute(
            delete(continuity_snapshots).where(continuity_snapshots.c.node_id.in_(nodes))
        ).rowcount,
        "messages": conn.execute(
            delete(messages).where(messages.c.thread_id.in_(of_workspace))
        ).rowcount,
        "notes": conn.execute(delete(notes).where(notes.c.thread_id.in_(of_workspace))).rowcount,
        "nodes": conn.execute(
            delete(continuity_nodes).where(continuity_nodes.c.thread_id.in_(of_workspace))
        ).rowcount,
    }
    return {name: int(count) for name, count in done.items()}


def delete_sessions_and_threads(conn: Connection, workspace_id: str) -> tuple[int, int]:
    """Delete the workspace's sessions, then its threads (after its runs); how many of each."""
    removed_sessions = conn.execute(
        delete(sessions).where(sessions.c.workspace_id == workspace_id)
    ).rowcount
    removed_threads = conn.execute(
        delete(threads).where(threads.c.workspace_id == workspace_id)
    ).rowcount
    return int(removed_sessions), int(removed_threads)
