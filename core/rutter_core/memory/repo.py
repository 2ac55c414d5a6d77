"""The `memories` table: the only module that reads or writes it.

Every function runs in the caller's transaction (`store.read()` / `store.write()`), so a
service check and its write are one unit. Rows come back as `MemoryRecord`s with `expired`
derived against the `now_text` the caller read at. Writes that change a memory are guarded by
the version they were read at (`UPDATE ... WHERE id = ? AND version = ?`): a guard that matched
no row is reported, never retried here.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from functools import cache
from typing import Any, Final, TypedDict

from sqlalchemy import (
    and_,
    bindparam,
    case,
    delete,
    func,
    insert,
    null,
    or_,
    select,
    true,
    update,
)
from sqlalchemy.engine import Connection
from sqlalchemy.sql import Select, Update
from sqlalchemy.sql.elements import ColumnElement

from rutter_core.history import service as history
from rutter_core.kernel.actors import OperatorActor
from rutter_core.memory.model import (
    MemoryRecord,
    MemoryReference,
    ReferencedMemory,
    Scope,
    ScopeSelection,
    SelectableMemory,
    SourceKind,
    Status,
)
from rutter_core.store import person_apart
from rutter_core.store.schema import memories


class MemoryChanges(TypedDict, total=False):
    """What an update sets, by record field (the stored columns are the repo's business)."""

    title: str
    content: str
    references: tuple[str, ...]
    retention_until: str | None
    redacted: bool
    status: Status


def insert_memory(
    conn: Connection,
    *,
    memory_id: str,
    scope: Scope,
    scope_id: str,
    title: str,
    content: str,
    source_kind: SourceKind,
    references: Sequence[str],
    retention_until: str | None,
    redacted: bool,
    actor: OperatorActor,
    person: str,
    now_text: str,
) -> MemoryRecord:
    """Store a new memory at version 1 and return it as stored (built from what was written:
    the row is not read back)."""
    values = {
        "memory_id": memory_id,
        "scope": scope,
        "scope_id": scope_id,
        "workspace_id": scope_id if scope == "project" else None,
        "title": title,
        "content": content,
        "content_sha256": _sha256(content),
        "status": "active",
        "source_kind": source_kind,
        "references_json": _references_json(references),
        "retention_until": retention_until,
        "redacted": int(redacted),
        "created_by": actor,
        "updated_by": actor,
        "version": 1,
        "created_at": now_text,
        "updated_at": now_text,
        "owner": person if scope == "user" else None,
        "created_by_person": person,
        "updated_by_person": person,
    }
    conn.execute(_INSERT, values)
    record = _record(tuple(values[name] for name in _COLUMN_NAMES), now_text)
    _index(conn, record, new=True)
    return record


def _index(conn: Connection, record: MemoryRecord, *, new: bool = False) -> None:
    """The history index follows every write of a memory, in its transaction."""
    history.index_memory(
        conn,
        memory_id=record.memory_id,
        scope_id=record.scope_id,
        workspace_id=record.scope_id if record.scope == "project" else None,
        version=record.version,
        title=record.title,
        content=record.content,
        retention_until=record.retention_until,
        active=record.status == "active",
        person=record.owner,
        new=new,
    )


def index_active(conn: Connection, now_text: str) -> None:
    """Index every active memory (the history index's backfill of an upgraded store)."""
    rows = conn.execute(select(*_COLUMNS).where(memories.c.status == "active")).all()
    for row in rows:
        _index(conn, _record(tuple(row), now_text))


def fetch_memory(conn: Connection, memory_id: str, now_text: str) -> MemoryRecord | None:
    """The memory `memory_id` whatever its status, or None."""
    person = person_apart(conn)
    if person is None:
        row = conn.execute(_SELECT_ONE, {"memory_id": memory_id}).first()
    else:
        row = conn.execute(_SELECT_ONE_MINE, {"memory_id": memory_id, "person": person}).first()
    return None if row is None else _record(tuple(row), now_text)


def update_memory(
    conn: Connection,
    read: MemoryRecord,
    changes: MemoryChanges,
    *,
    actor: OperatorActor,
    person: str,
    now_text: str,
) -> MemoryRecord | None:
    """Apply `changes` to the memory as `read`, as version + 1; None when it is no longer at
    that version (changed or deleted meanwhile)."""
    values: dict[str, Any] = {}
    if "title" in changes:
        values["title"] = changes["title"]
    if "content" in changes:
        values["content"] = changes["content"]
        values["content_sha256"] = _sha256(changes["content"])
    if "references" in changes:
        values["references_json"] = _references_json(changes["references"])
    if "retention_until" in changes:
        values["retention_until"] = changes["retention_until"]
    if "redacted" in changes:
        values["redacted"] = int(changes["redacted"])
    if "status" in changes:
        values["status"] = changes["status"]
    values.update(
        updated_by=actor, updated_by_person=person, updated_at=now_text, version=read.version + 1
    )
    bound = {f"set_{name}": value for name, value in values.items()}
    bound.update(where_memory_id=read.memory_id, where_version=read.version)
    done = conn.execute(_update_statement(tuple(sorted(values))), bound)
    if done.rowcount != 1:
        return None
    # Built from the record as read plus what was written: the row is not read back.
    updated = read.model_dump()
    updated.update(changes)
    if "content" in changes:
        updated["content_sha256"] = values["content_sha256"]
    retention = updated["retention_until"]
    updated.update(
        updated_by=actor,
        updated_by_person=person,
        updated_at=now_text,
        version=read.version + 1,
        expired=retention is not None and retention <= now_text,
    )
    record = MemoryRecord.model_validate(updated)
    _index(conn, record)
    return record


def delete_memory_row(conn: Connection, memory_id: str, version: int) -> bool:
    """Delete the row of `memory_id` if it is at exactly `version`; whether it was."""
    done = conn.execute(
        delete(memories).where(memories.c.memory_id == memory_id, memories.c.version == version)
    )
    if done.rowcount == 1:
        history.unindex_memories(conn, [memory_id])
    return done.rowcount == 1


def select_memories(
    conn: Connection,
    *,
    now_text: str,
    scope: tuple[Scope, Sequence[str]] | None = None,
    user_and_project_of: Sequence[str] | None = None,
    include_inactive: bool = False,
    limit: int | None = None,
) -> list[MemoryRecord]:
    """Memories newest change first (`updated_at` desc, then ID desc).

    `scope`: only that scope, of those scope IDs (a project's: every registration of it).
    `user_and_project_of`: user memory plus the project memory of those workspaces. Neither:
    every memory. Disabled and expired ones only with `include_inactive`; at most `limit` rows
    when given.
    """
    bound: dict[str, Any] = {"now_text": now_text}
    if scope is not None:
        bound["scope"], bound["scope_ids"] = scope[0], list(scope[1])
        kind = "scope"
    elif user_and_project_of is not None:
        bound["workspace_ids"] = list(user_and_project_of)
        kind = "user_and_project"
    else:
        kind = "all"
    if limit is not None:
        bound["limit"] = limit
    person = person_apart(conn)
    if person is not None:
        bound["person"] = person
    statement = _list_statement(
        kind, include_inactive=include_inactive, limited=limit is not None, mine=person is not None
    )
    # All rows in one fetch (not one round through the result per row).
    return [_record(tuple(row), now_text) for row in conn.execute(statement, bound).all()]


@cache
def _update_statement(columns: tuple[str, ...]) -> Update:
    """The guarded UPDATE of `columns`, built once per set of columns."""
    return (
        update(memories)
        .where(memories.c.memory_id == bindparam("where_memory_id"))
        .where(memories.c.version == bindparam("where_version"))
        .values({name: bindparam(f"set_{name}") for name in columns})
    )


@cache
def _list_statement(kind: str, *, include_inactive: bool, limited: bool, mine: bool) -> Select[Any]:
    """One statement per shape of list, built once: the values are bound per call."""
    query: Select[Any] = select(*_COLUMNS)
    if mine:
        query = query.where(_MINE)
    if kind == "scope":
        query = query.where(
            memories.c.scope == bindparam("scope"),
            memories.c.scope_id.in_(bindparam("scope_ids", expanding=True)),
        )
    elif kind == "user_and_project":
        query = query.where(
            or_(
                memories.c.scope == "user",
                and_(
                    memories.c.scope == "project",
                    memories.c.scope_id.in_(bindparam("workspace_ids", expanding=True)),
                ),
            )
        )
    if not include_inactive:
        query = query.where(_active_at(bindparam("now_text")))
    query = query.order_by(memories.c.updated_at.desc(), memories.c.memory_id.desc())
    if limited:
        query = query.limit(bindparam("limit"))
    return query


def select_active_references(
    conn: Connection, *, now_text: str, workspace_ids: Sequence[str], limit: int
) -> tuple[list[MemoryReference], int]:
    """References to the memories active at `now_text` of the local user and `workspace_id`:
    user memories first, then the workspace's, each by ID, at most `limit`; and how many there
    are. Only identity, version and digest are read: never a title or a body."""
    relevant = and_(
        _active_at(now_text),
        or_(
            memories.c.scope == "user",
            and_(memories.c.scope == "project", memories.c.scope_id.in_(list(workspace_ids))),
        ),
        _mine_literal(conn),
    )
    user_first = case((memories.c.scope == "user", 0), else_=1)
    rows = conn.execute(
        select(
            memories.c.memory_id, memories.c.scope, memories.c.version, memories.c.content_sha256
        )
        .where(relevant)
        .order_by(user_first, memories.c.memory_id)
        .limit(limit)
    )
    references = [
        MemoryReference(
            memory_id=str(row.memory_id),
            scope=row.scope,
            version=int(row.version),
            content_sha256=str(row.content_sha256),
        )
        for row in rows
    ]
    total = conn.execute(select(func.count()).select_from(memories).where(relevant)).scalar_one()
    return references, int(total)


_IDS_PER_QUERY = 500
"""Bound parameters per `IN (...)`: well below every engine's limit."""


def select_referenced(
    conn: Connection, memory_ids: Sequence[str], *, now_text: str
) -> list[ReferencedMemory]:
    """The memories among `memory_ids` that still exist: identity, version, digest, status and
    expiry at `now_text`. Never a title or a body."""
    unique = sorted(set(memory_ids))
    found: list[ReferencedMemory] = []
    for start in range(0, len(unique), _IDS_PER_QUERY):
        rows = conn.execute(
            select(
                memories.c.memory_id, memories.c.version, memories.c.content_sha256,
                memories.c.status, memories.c.retention_until,
            ).where(memories.c.memory_id.in_(unique[start : start + _IDS_PER_QUERY]))
        )  # fmt: skip
        found.extend(
            ReferencedMemory(
                memory_id=str(row.memory_id),
                version=int(row.version),
                content_sha256=str(row.content_sha256),
                status=row.status,
                expired=row.retention_until is not None and str(row.retention_until) <= now_text,
            )
            for row in rows
        )
    return found


def select_for_assembly(
    conn: Connection, *, scope: Scope, scope_ids: Sequence[str], now_text: str, per_scope: int
) -> ScopeSelection:
    """One scope's memories for an assembly, each list by ID: at most `per_scope` active at
    `now_text` with their bodies, at most `per_scope` inactive without; and both totals."""
    of_scope = and_(
        memories.c.scope == scope, memories.c.scope_id.in_(list(scope_ids)), _mine_literal(conn)
    )
    active = _active_at(now_text)
    head = (
        memories.c.memory_id, memories.c.scope, memories.c.version, memories.c.content_sha256,
        memories.c.status, memories.c.retention_until,
    )  # fmt: skip
    chosen = conn.execute(
        select(*head, memories.c.content)
        .where(of_scope, active)
        .order_by(memories.c.memory_id)
        .limit(per_scope)
    )
    left = conn.execute(
        select(*head, null().label("content"))
        .where(of_scope, ~active)
        .order_by(memories.c.memory_id)
        .limit(per_scope)
    )
    totals = conn.execute(
        select(func.count().filter(active), func.count().filter(~active))
        .select_from(memories)
        .where(of_scope)
    ).one()
    return ScopeSelection(
        active=tuple(_selectable(row, now_text) for row in chosen),
        inactive=tuple(_selectable(row, now_text) for row in left),
        active_total=int(totals[0]),
        inactive_total=int(totals[1]),
    )


def _selectable(row: Any, now_text: str) -> SelectableMemory:
    return SelectableMemory(
        memory_id=str(row.memory_id),
        scope=row.scope,
        version=int(row.version),
        content_sha256=str(row.content_sha256),
        status=row.status,
        expired=row.retention_until is not None and str(row.retention_until) <= now_text,
        content=None if row.content is None else str(row.content),
    )


def count_project_memories(conn: Connection, workspace_id: str) -> int:
    """How many project memories (any status) belong to `workspace_id`."""
    return int(
        conn.execute(
            select(func.count())
            .select_from(memories)
            .where(memories.c.workspace_id == workspace_id)
        ).scalar_one()
    )


def delete_project_memories(conn: Connection, workspace_id: str) -> int:
    """Delete every project memory of `workspace_id` (any status); how many."""
    done = conn.execute(delete(memories).where(memories.c.workspace_id == workspace_id))
    history.unindex_owners(conn, [workspace_id])
    return int(done.rowcount)


def _mine_literal(conn: Connection) -> ColumnElement[bool]:
    """`_MINE` with the transaction's person in it (true where the store is one person's)."""
    person = person_apart(conn)
    if person is None:
        return true()
    return or_(memories.c.scope != "user", memories.c.owner == person)


def _active_at(now_text: str | ColumnElement[str]) -> ColumnElement[bool]:
    """Enabled and not past its retention at `now_text`."""
    return and_(
        memories.c.status == "active",
        or_(memories.c.retention_until.is_(None), memories.c.retention_until > now_text),
    )


_COLUMN_NAMES: Final = (
    "memory_id", "scope", "scope_id", "title", "content", "content_sha256", "status",
    "source_kind", "references_json", "retention_until", "redacted", "created_by", "updated_by",
    "version", "created_at", "updated_at", "owner", "created_by_person", "updated_by_person",
)  # fmt: skip
"""The columns a record is built from, in the order `_record` unpacks them."""
_COLUMNS: Final = tuple(memories.c[name] for name in _COLUMN_NAMES)
_INSERT: Final = insert(memories)
_SELECT_ONE: Final = select(*_COLUMNS).where(memories.c.memory_id == bindparam("memory_id"))
_MINE: Final = or_(memories.c.scope != "user", memories.c.owner == bindparam("person"))
"""Project memories, and the user memories of the person bound (where people are apart)."""
_SELECT_ONE_MINE: Final = _SELECT_ONE.where(_MINE)


def _record(row: tuple[Any, ...], now_text: str) -> MemoryRecord:
    """A record from the `_COLUMNS` of a row: one validation of the whole document (the model
    checks every field's type and literal values, as for any input)."""
    (
        memory_id, scope, scope_id, title, content, content_sha256, status, source_kind,
        references_json, retention, redacted, created_by, updated_by, version, created_at,
        updated_at, owner, created_by_person, updated_by_person,
    ) = row  # fmt: skip
    return MemoryRecord.model_validate(
        {
            "memory_id": memory_id,
            "scope": scope,
            "scope_id": scope_id,
            "owner": owner,
            "title": title,
            "content": content,
            "content_sha256": content_sha256,
            "status": status,
            "source_kind": source_kind,
            "references": [] if references_json == "[]" else json.loads(references_json),
            "retention_until": retention,
            "expired": retention is not None and retention <= now_text,
            "redacted": bool(redacted),
            "created_by": created_by,
            "created_by_person": created_by_person,
            "updated_by": updated_by,
            "updated_by_person": updated_by_person,
            "version": version,
            "created_at": created_at,
            "updated_at": updated_at,
        }
    )


def _references_json(references: Sequence[str]) -> str:
    return json.dumps(list(references), ensure_ascii=False, separators=(",", ":"))


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
