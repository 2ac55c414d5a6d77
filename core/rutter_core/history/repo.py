"""The history tables (`history_entries`, `history_state`, and the full-text tables
`history_memory_text` and `history_text`): the only module that reads or writes them.

Every function runs in the caller's transaction. Memories are indexed apart from thread content
(`history_memory_text`): that table is compacted whenever a memory text leaves it, so a deleted,
disabled or replaced memory body stays in none of its pages.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from sqlalchemy import bindparam, delete, insert, select, text, update
from sqlalchemy.engine import Connection

from rutter_core.history.model import SourceKind
from rutter_core.store import fulltext
from rutter_core.store.schema import (
    history_entries,
    history_memory_text,
    history_state,
    history_text,
)

MEMORY_TABLE: Final = "history_memory_text"
THREAD_TABLE: Final = "history_text"


def table_of(kind: SourceKind) -> str:
    return MEMORY_TABLE if kind == "memory" else THREAD_TABLE


def _fts(name: str) -> Any:
    return history_memory_text if name == MEMORY_TABLE else history_text


@dataclass(frozen=True, slots=True)
class Entry:
    """One indexed source as stored (with its text when read with it)."""

    entry_id: int
    source_kind: SourceKind
    source_id: str
    owner_id: str
    workspace_id: str | None
    version: int
    content_sha256: str
    expires_at: str | None
    body: str


@dataclass(frozen=True, slots=True)
class NewEntry:
    source_kind: SourceKind
    source_id: str
    owner_id: str
    workspace_id: str | None
    version: int
    content_sha256: str
    expires_at: str | None
    body: str


# -- state -------------------------------------------------------------------------------------


def secret(conn: Connection) -> str | None:
    found = conn.execute(select(history_state.c.secret)).scalar_one_or_none()
    return None if found is None else str(found)


def set_secret_once(conn: Connection, value: str) -> str:
    """Store `value` as the secret unless one is there; the secret that is."""
    conn.execute(update(history_state).where(history_state.c.secret.is_(None)).values(secret=value))
    return str(conn.execute(select(history_state.c.secret)).scalar_one())


def last_entry_id(conn: Connection) -> int:
    return int(conn.execute(select(history_state.c.last_entry_id)).scalar_one())


def _allocate(conn: Connection, count: int) -> int:
    """Take `count` new entry IDs (never given out before); the first."""
    last = last_entry_id(conn)
    conn.execute(update(history_state).values(last_entry_id=last + count))
    return last + 1


# -- writes ------------------------------------------------------------------------------------


def find_entry_id(conn: Connection, source_id: str) -> tuple[int, str] | None:
    """(entry ID, content hash) of the source's entry, if it is indexed."""
    row = conn.execute(
        select(history_entries.c.entry_id, history_entries.c.content_sha256).where(
            history_entries.c.source_id == source_id
        )
    ).first()
    return None if row is None else (int(row[0]), str(row[1]))


def insert_entries(conn: Connection, entries: Sequence[NewEntry]) -> None:
    """Index new sources (none of them indexed yet), in one statement per table."""
    if not entries:
        return
    first = _allocate(conn, len(entries))
    rows = []
    bodies: dict[str, list[dict[str, Any]]] = {MEMORY_TABLE: [], THREAD_TABLE: []}
    for offset, entry in enumerate(entries):
        entry_id = first + offset
        rows.append(
            {
                "entry_id": entry_id,
                "source_kind": entry.source_kind,
                "source_id": entry.source_id,
                "owner_id": entry.owner_id,
                "workspace_id": entry.workspace_id,
                "version": entry.version,
                "content_sha256": entry.content_sha256,
                "expires_at": entry.expires_at,
            }
        )
        bodies[table_of(entry.source_kind)].append({"rowid": entry_id, "body": entry.body})
    conn.execute(insert(history_entries), rows)
    for name, values in bodies.items():
        if values:
            conn.execute(insert(_fts(name)), values)


def replace_entry(conn: Connection, entry_id: int, entry: NewEntry, *, body_changed: bool) -> None:
    """Re-index a source in place (same entry ID): its metadata, and its text when changed."""
    conn.execute(
        update(history_entries)
        .where(history_entries.c.entry_id == entry_id)
        .values(
            owner_id=entry.owner_id,
            workspace_id=entry.workspace_id,
            version=entry.version,
            content_sha256=entry.content_sha256,
            expires_at=entry.expires_at,
        )
    )
    if body_changed:
        table = _fts(table_of(entry.source_kind))
        conn.execute(delete(table).where(table.c.rowid == entry_id))
        conn.execute(insert(table).values(rowid=entry_id, body=entry.body))


def delete_entries(conn: Connection, kind_table: str, entry_ids: Sequence[int]) -> int:
    """Remove entries and their text; how many."""
    if not entry_ids:
        return 0
    table = _fts(kind_table)
    ids = list(entry_ids)
    conn.execute(delete(table).where(table.c.rowid.in_(ids)))
    done = conn.execute(delete(history_entries).where(history_entries.c.entry_id.in_(ids)))
    return int(done.rowcount)


def entries_owned(conn: Connection, owner_ids: Sequence[str]) -> list[tuple[int, str]]:
    """(entry ID, kind) of every entry of these owners."""
    if not owner_ids:
        return []
    rows = conn.execute(
        select(history_entries.c.entry_id, history_entries.c.source_kind).where(
            history_entries.c.owner_id.in_(list(owner_ids))
        )
    )
    return [(int(row[0]), str(row[1])) for row in rows]


def compact(conn: Connection, kind_table: str) -> None:
    fulltext.compact(conn, kind_table)


# -- reads -------------------------------------------------------------------------------------

_ENTRY_COLUMNS: Final = (
    "e.entry_id, e.source_kind, e.source_id, e.owner_id, e.workspace_id, e.version, "
    "e.content_sha256, e.expires_at"
)


def _entry(row: Any) -> Entry:
    return Entry(
        entry_id=int(row[0]),
        source_kind=row[1],
        source_id=str(row[2]),
        owner_id=str(row[3]),
        workspace_id=None if row[4] is None else str(row[4]),
        version=int(row[5]),
        content_sha256=str(row[6]),
        expires_at=None if row[7] is None else str(row[7]),
        body=str(row[8]),
    )


def read_entry(conn: Connection, source_id: str) -> Entry | None:
    """The source's entry with its text, if indexed."""
    found = find_entry_id(conn, source_id)
    if found is None:
        return None
    kind = conn.execute(
        select(history_entries.c.source_kind).where(history_entries.c.entry_id == found[0])
    ).scalar_one()
    name = table_of(kind)
    row = conn.execute(
        text(
            f"SELECT {_ENTRY_COLUMNS}, t.body FROM history_entries AS e "
            f"JOIN {name} AS t ON t.rowid = e.entry_id WHERE e.entry_id = :entry_id"
        ),
        {"entry_id": found[0]},
    ).first()
    return None if row is None else _entry(row)


def _visible(owners: Sequence[str], kinds: Sequence[str]) -> str:
    del owners, kinds
    return (
        "e.owner_id IN :owners AND e.source_kind IN :kinds "
        "AND (e.expires_at IS NULL OR e.expires_at > :now)"
    )


def search(
    conn: Connection,
    table: str,
    query: str,
    *,
    owners: Sequence[str],
    kinds: Sequence[str],
    before: int,
    horizon: int,
    now: str,
    limit: int,
) -> list[Entry]:
    """Up to `limit` visible entries of `table` below `before` (and at most `horizon`) whose
    text holds `query`, newest first, by the full-text index. The index drives the loop (it
    yields entry IDs in descending order), so the cost follows the matches, not the table."""
    match, value = fulltext.match(conn, table, query)
    statement = text(
        f"SELECT {_ENTRY_COLUMNS}, {table}.body FROM {table} "
        f"CROSS JOIN history_entries AS e ON e.entry_id = {table}.rowid "
        f"WHERE {match.text} AND {table}.rowid < :before AND {table}.rowid <= :horizon "
        f"AND {_visible(owners, kinds)} ORDER BY {table}.rowid DESC LIMIT :limit"
    ).bindparams(bindparam("owners", expanding=True), bindparam("kinds", expanding=True))
    rows = conn.execute(
        statement,
        {
            "fts_query": value,
            "before": before,
            "horizon": horizon,
            "owners": list(owners),
            "kinds": list(kinds),
            "now": now,
            "limit": limit,
        },
    )
    return [_entry(row) for row in rows]


def scan(
    conn: Connection,
    table: str,
    *,
    owners: Sequence[str],
    kinds: Sequence[str],
    before: int,
    horizon: int,
    now: str,
    bound: int,
) -> tuple[list[Entry], int | None]:
    """The bounded scan for a query the index cannot answer: the visible entries of `table`
    among the `bound` entries (of any owner) below `before`, newest first, with the lowest
    entry ID examined (None when fewer than `bound` were left: the scan reached the end)."""
    examined = (
        select(history_entries.c.entry_id)
        .where(history_entries.c.entry_id < before, history_entries.c.entry_id <= horizon)
        .order_by(history_entries.c.entry_id.desc())
        .limit(bound)
    )
    ids = [int(value) for value in conn.execute(examined).scalars()]
    if not ids:
        return [], None
    lowest = ids[-1] if len(ids) == bound else None
    statement = text(
        f"SELECT {_ENTRY_COLUMNS}, t.body FROM history_entries AS e "
        f"JOIN {table} AS t ON t.rowid = e.entry_id "
        f"WHERE e.entry_id BETWEEN :low AND :high AND {_visible(owners, kinds)} "
        "ORDER BY e.entry_id DESC"
    ).bindparams(bindparam("owners", expanding=True), bindparam("kinds", expanding=True))
    rows = conn.execute(
        statement,
        {
            "low": ids[-1],
            "high": ids[0],
            "owners": list(owners),
            "kinds": list(kinds),
            "now": now,
        },
    )
    return [_entry(row) for row in rows], lowest
