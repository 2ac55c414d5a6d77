"""The history tables (`history_entries`, `history_state`, and the full-text tables
`history_text` and the memory shards `history_memory_text_NN`): the only module that reads or
writes them.

Every function runs in the caller's transaction. Memories are indexed apart from thread content,
in shards by entry ID (`shard_of`): the shard that held a memory text is compacted whenever that
text leaves it, so a deleted, disabled or replaced memory body stays in none of its pages, and
the compaction rewrites that shard only. A search of memories asks every shard.

Why one module: it is the one place that knows how the history is laid out (the shards, the
keys, the full-text tables, the statements over them), which the writes and the searches both
depend on; split, that layout would be stated in two places that must agree.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Final

from sqlalchemy import TextClause, bindparam, delete, insert, select, text, update
from sqlalchemy.engine import Connection

from rutter_core.history.model import SourceKind
from rutter_core.store import fulltext, person_apart
from rutter_core.store.schema import (
    full_text_tables,
    history_entries,
    history_state,
    memory_text_shards,
)

MEMORY_TABLES: Final = memory_text_shards
THREAD_TABLE: Final = "history_text"
_FULL_TEXT: Final = frozenset(full_text_tables)


def shard_of(entry_id: int) -> str:
    """The memory shard that holds the text of entry `entry_id`."""
    return MEMORY_TABLES[entry_id % len(MEMORY_TABLES)]


def text_table(entry_id: int, *, memory: bool) -> str:
    """The full-text table that holds the text of entry `entry_id`: its memory shard, or the
    thread table for thread content (messages, notes, checkpoints)."""
    return shard_of(entry_id) if memory else THREAD_TABLE


def table_of(kind: SourceKind, entry_id: int) -> str:
    """The full-text table that holds the text of entry `entry_id` of kind `kind`."""
    return text_table(entry_id, memory=kind == "memory")


_ENTRY_COLUMNS_AFTER_ID: Final = (
    "e.source_kind, e.source_id, e.owner_id, e.workspace_id, e.version, e.content_sha256, "
    "e.expires_at"
)
_ENTRY_COLUMNS: Final = f"e.entry_id, {_ENTRY_COLUMNS_AFTER_ID}"


def _visible(owners: int, kinds: int) -> str:
    """Visible to `owners` owners (`:o0`, ...) in `kinds` kinds (`:k0`, ...), unexpired: one
    bound value each, so the statement is compiled once per count, not per call."""
    owner_list = ", ".join(f":o{n}" for n in range(owners))
    kind_list = ", ".join(f":k{n}" for n in range(kinds))
    # `:person` (`store.person_apart`): a user memory's entry is its person's alone.
    return (
        f"e.owner_id IN ({owner_list}) AND e.source_kind IN ({kind_list}) "
        "AND (e.expires_at IS NULL OR e.expires_at > :now) "
        "AND (CAST(:person AS TEXT) IS NULL OR e.person IS NULL OR e.person = :person)"
    )


def _bound(conn: Connection, owners: Sequence[str], kinds: Sequence[str]) -> dict[str, Any]:
    return {
        **{f"o{n}": owner for n, owner in enumerate(owners)},
        **{f"k{n}": kind for n, kind in enumerate(kinds)},
        "person": person_apart(conn),
    }


@dataclass(frozen=True, slots=True)
class _Statements:
    """A full-text table's statements, written once per engine and table (the engine names its
    key; `store.fulltext`)."""

    insert: TextClause
    delete: TextClause
    read: TextClause


@cache
def _statements(engine: str, table: str, column: str) -> _Statements:
    assert table in _FULL_TEXT, table
    key = f"{table}.{column}"
    return _Statements(
        insert=text(f"INSERT INTO {table} ({column}, body) VALUES (:key, :body)"),
        delete=text(f"DELETE FROM {table} WHERE {key} IN :keys").bindparams(
            bindparam("keys", expanding=True)
        ),
        read=text(
            f"SELECT {_ENTRY_COLUMNS}, {table}.body FROM history_entries AS e "
            f"{fulltext.join(engine)} {table} ON {key} = e.entry_id "
            "WHERE e.entry_id = :entry_id"
        ),
    )


@cache
def _search_statement(
    engine: str, tables: tuple[str, ...], column: str, matches: tuple[str, ...], owners: int,
    kinds: int,
) -> TextClause:  # fmt: skip
    # The index drives the loop of each table (it yields keys in descending order), so the
    # cost follows the matches, not the table; the shards' pages of hits are merged by key.
    match_of = dict(zip(tables, matches, strict=True))

    def arm(table: str, *, key_first: bool) -> str:
        key = f"{table}.{column}"
        # Keyed by the table's own key (the same value as the entry ID) when the arms are
        # merged: each then comes in key order straight from its index.
        columns = f"{key} AS entry_id, {_ENTRY_COLUMNS_AFTER_ID}" if key_first else _ENTRY_COLUMNS
        return (
            f"SELECT {columns}, {table}.body AS body FROM {table} "
            f"{fulltext.join(engine)} history_entries AS e ON e.entry_id = {key} "
            f"WHERE {match_of[table]} AND {key} < :before AND {key} <= :horizon "
            f"AND {_visible(owners, kinds)}"
        )

    if len(tables) == 1:
        (table,) = tables
        return text(f"{arm(table, key_first=False)} ORDER BY {table}.{column} DESC LIMIT :limit")
    # The engine merges the arms as they come and stops at the limit.
    union = " UNION ALL ".join(arm(table, key_first=True) for table in tables)
    return text(f"{union} ORDER BY 1 DESC LIMIT :limit")


@cache
def _walk_statement(
    engine: str, tables: tuple[str, ...], column: str, match: str, owners: int, kinds: int,
    size: int,
) -> TextClause:  # fmt: skip
    """The newest `size` rows of `tables` below the cursor in key order, filtered by `match`
    (written for the alias `walked`): (how many rows there were, the lowest key among them)
    and, with them, up to `:limit` visible hits, newest first. The engine reads the rows in
    key order and stops at the limit; a LIMIT subquery keeps its filter out of the index."""

    def rows(*, body: bool) -> str:
        arms = " UNION ALL ".join(
            f"SELECT {table}.{column} AS entry_id{f', {table}.body AS body' if body else ''} "
            f"FROM {table} WHERE {table}.{column} < :before AND {table}.{column} <= :horizon"
            for table in tables
        )
        return f"SELECT * FROM ({arms}) AS arms ORDER BY entry_id DESC LIMIT {int(size)}"

    return text(
        "SELECT edge.examined, edge.lowest, hit.* FROM (SELECT count(*) AS examined, "
        f"min(keys.entry_id) AS lowest FROM ({rows(body=False)}) AS keys) AS edge "
        f"LEFT JOIN (SELECT {_ENTRY_COLUMNS}, walked.body AS body FROM ({rows(body=True)}) "
        f"AS walked {fulltext.join(engine)} history_entries AS e ON e.entry_id = walked.entry_id "
        f"WHERE {match} AND {_visible(owners, kinds)} ORDER BY walked.entry_id DESC "
        "LIMIT :limit) AS hit ON 1 = 1 ORDER BY hit.entry_id DESC"
    )


@cache
def _scan_statement(engine: str, table: str, column: str, owners: int, kinds: int) -> TextClause:
    # By the owner index: for each visible owner, its entries from `low` up to the cursor are
    # exactly the ones `scan` examined (it kept the newest `bound` of all of them).
    return text(
        f"SELECT {_ENTRY_COLUMNS}, {table}.body FROM history_entries AS e "
        f"{fulltext.join(engine)} {table} ON {table}.{column} = e.entry_id "
        "WHERE e.entry_id >= :low AND e.entry_id < :before AND e.entry_id <= :horizon "
        f"AND {_visible(owners, kinds)} ORDER BY e.entry_id DESC"
    )


@cache
def _scan_entries_statement(engine: str, owners: int, kinds: int) -> TextClause:
    # `_scan_statement` without the text: for tables in shards, whose texts are read after.
    del engine
    return text(
        f"SELECT {_ENTRY_COLUMNS} FROM history_entries AS e "
        "WHERE e.entry_id >= :low AND e.entry_id < :before AND e.entry_id <= :horizon "
        f"AND {_visible(owners, kinds)} ORDER BY e.entry_id DESC"
    )


@cache
def _texts_statement(engine: str, tables: tuple[str, ...], column: str) -> TextClause:
    """(entry ID, text) of every entry of `tables` in the scan's window of entry IDs (by key
    range: the engine's index answers it directly)."""
    del engine
    return text(
        " UNION ALL ".join(
            f"SELECT {table}.{column}, {table}.body FROM {table} WHERE {table}.{column} >= :low "
            f"AND {table}.{column} < :before AND {table}.{column} <= :horizon"
            for table in tables
        )
    )


def _sql(conn: Connection, table: str) -> _Statements:
    return _statements(conn.dialect.name, table, fulltext.key(conn))


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
    person: str | None = None
    """A user memory's owner (its entry is that person's alone); None for everything else."""


# -- state -------------------------------------------------------------------------------------


def secret(conn: Connection) -> str | None:
    found = conn.execute(select(history_state.c.secret)).scalar_one_or_none()
    return None if found is None else str(found)


_STATE: Final = select(
    history_state.c.secret, history_state.c.last_entry_id, history_state.c.backfill_pending
)


def state(conn: Connection) -> tuple[str | None, int, bool]:
    """(the signing secret if made, the last entry ID given out, whether sources stored before
    the index existed wait to be indexed), in one read."""
    row = conn.execute(_STATE).one()
    return (None if row[0] is None else str(row[0])), int(row[1]), bool(row[2])


def backfill_done(conn: Connection) -> None:
    conn.execute(update(history_state).values(backfill_pending=0))


def indexed_among(conn: Connection, source_ids: Sequence[str]) -> set[str]:
    """Which of `source_ids` are indexed."""
    if not source_ids:
        return set()
    rows = conn.execute(
        select(history_entries.c.source_id).where(history_entries.c.source_id.in_(source_ids))
    )
    return {str(value) for value in rows.scalars()}


def set_secret_once(conn: Connection, value: str) -> str:
    """Store `value` as the secret unless one is there; the secret that is."""
    conn.execute(update(history_state).where(history_state.c.secret.is_(None)).values(secret=value))
    return str(conn.execute(select(history_state.c.secret)).scalar_one())


def last_entry_id(conn: Connection) -> int:
    return int(conn.execute(select(history_state.c.last_entry_id)).scalar_one())


_ALLOCATE: Final = (
    update(history_state)
    .values(last_entry_id=history_state.c.last_entry_id + bindparam("count"))
    .returning(history_state.c.last_entry_id)
)


def _allocate(conn: Connection, count: int) -> int:
    """Take `count` new entry IDs (never given out before); the first. One statement: the
    write lock is held, so no other writer moves the counter between reading and setting."""
    last = int(conn.execute(_ALLOCATE, {"count": count}).scalar_one())
    return last - count + 1


# -- writes ------------------------------------------------------------------------------------


_FIND: Final = select(history_entries.c.entry_id, history_entries.c.content_sha256).where(
    history_entries.c.source_id == bindparam("source_id")
)
_INSERT_ENTRIES: Final = insert(history_entries)
_REPLACE: Final = (
    update(history_entries)
    .where(history_entries.c.entry_id == bindparam("where_entry_id"))
    .values(
        {
            name: bindparam(name)
            for name in ("owner_id", "workspace_id", "version", "content_sha256", "expires_at")
        }
    )
)
"""Statements built once (their values bound per call)."""


def find_entry_id(conn: Connection, source_id: str) -> tuple[int, str] | None:
    """(entry ID, content hash) of the source's entry, if it is indexed."""
    row = conn.execute(_FIND, {"source_id": source_id}).first()
    return None if row is None else (int(row[0]), str(row[1]))


def insert_entries(conn: Connection, entries: Sequence[NewEntry]) -> None:
    """Index new sources (none of them indexed yet), in one statement per table."""
    if not entries:
        return
    first = _allocate(conn, len(entries))
    rows = []
    bodies: dict[str, list[dict[str, Any]]] = {}
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
                "person": entry.person,
            }
        )
        bodies.setdefault(table_of(entry.source_kind, entry_id), []).append(
            {"key": entry_id, "body": entry.body}
        )
    conn.execute(_INSERT_ENTRIES, rows)
    for name, values in bodies.items():
        conn.execute(_sql(conn, name).insert, values)


def replace_entry(conn: Connection, entry_id: int, entry: NewEntry, *, body_changed: bool) -> None:
    """Re-index a source in place (same entry ID): its metadata, and its text when changed."""
    conn.execute(
        _REPLACE,
        {
            "where_entry_id": entry_id,
            "owner_id": entry.owner_id,
            "workspace_id": entry.workspace_id,
            "version": entry.version,
            "content_sha256": entry.content_sha256,
            "expires_at": entry.expires_at,
        },
    )
    if body_changed:
        statements = _sql(conn, table_of(entry.source_kind, entry_id))
        conn.execute(statements.delete, {"keys": [entry_id]})
        conn.execute(statements.insert, {"key": entry_id, "body": entry.body})


def delete_entries(conn: Connection, entry_ids: Sequence[int], *, memory: bool) -> int:
    """Remove entries and their text, all of them memories (`memory`: their text is in the
    memory shards) or all thread content (messages, notes, checkpoints: the thread table);
    how many."""
    if not entry_ids:
        return 0
    ids = list(entry_ids)
    by_table: dict[str, list[int]] = {}
    for entry_id in ids:
        by_table.setdefault(text_table(entry_id, memory=memory), []).append(entry_id)
    for table, keys in by_table.items():
        conn.execute(_sql(conn, table).delete, {"keys": keys})
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


def compact_memory_shards(conn: Connection, entry_ids: Sequence[int]) -> None:
    """Compact the memory shards that held the text of `entry_ids` (and only those)."""
    for table in sorted({shard_of(entry_id) for entry_id in entry_ids}):
        fulltext.compact(conn, table)


# -- reads -------------------------------------------------------------------------------------


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
    row = conn.execute(
        select(history_entries.c.entry_id, history_entries.c.source_kind).where(
            history_entries.c.source_id == source_id
        )
    ).first()
    if row is None:
        return None
    table = table_of(row[1], int(row[0]))
    found = conn.execute(_sql(conn, table).read, {"entry_id": int(row[0])}).first()
    return None if found is None else _entry(found)


def search(
    conn: Connection,
    tables: Sequence[str],
    query: str,
    *,
    owners: Sequence[str],
    kinds: Sequence[str],
    before: int,
    horizon: int,
    now: str,
    limit: int,
) -> list[Entry]:
    """Up to `limit` visible entries of the full-text tables `tables` below `before` (and at
    most `horizon`) whose text holds `query`, newest first: the engine's walk of the newest
    rows in key order first (`fulltext.walk`), while it is the cheaper way to fill the page,
    then the full-text index for the older rows. Either way the answer is the same: every hit
    of the rows walked, then the index's hits below the lowest of them."""
    bound = {"before": before, "horizon": horizon, "now": now, **_bound(conn, owners, kinds)}
    found: list[Entry] = []
    first, most = fulltext.walk(conn)
    size, walked = first, 0
    while size:
        rows, examined, lowest = _walk(
            conn, tables, query, (len(owners), len(kinds)), size, limit - len(found), bound
        )
        found.extend(rows)
        if len(found) >= limit or examined < size:  # a full page, or no older row is left
            return found
        walked += examined
        bound["before"] = lowest  # every row from `lowest` up is examined
        size = _next_walk(len(found), walked, limit, most)
    matches = [fulltext.match(conn, table, query) for table in tables]
    statement = _search_statement(
        conn.dialect.name, tuple(tables), fulltext.key(conn),
        tuple(match.text for match, _ in matches), len(owners), len(kinds),
    )  # fmt: skip
    older = conn.execute(
        statement, {"fts_query": matches[0][1], "limit": limit - len(found), **bound}
    )
    return found + [_entry(row) for row in older]


def _walk(
    conn: Connection,
    tables: Sequence[str],
    query: str,
    counts: tuple[int, int],
    size: int,
    limit: int,
    bound: dict[str, Any],
) -> tuple[list[Entry], int, int]:
    """One walk of `size` rows (`counts`: of owners and of kinds bound): (its hits up to
    `limit`, the rows examined, the lowest key)."""
    match, value = fulltext.match(conn, "walked", query)
    statement = _walk_statement(
        conn.dialect.name, tuple(tables), fulltext.key(conn), match.text, *counts, size
    )
    rows = conn.execute(statement, {"fts_query": value, "limit": limit, **bound}).all()
    examined = int(rows[0][0])
    lowest = 0 if rows[0][1] is None else int(rows[0][1])
    return [_entry(row[2:]) for row in rows if row[2] is not None], examined, lowest


def _next_walk(found: int, walked: int, limit: int, most: int) -> int:
    """The size of the next walk (0: ask the index): twice the rows the hits so far say the
    page still needs, as a power of two, when that keeps the walks within `most` rows."""
    if not found:
        return 0
    needed = 2 * (limit - found) * walked / found
    size = 1 << max(0, math.ceil(math.log2(max(needed, 1))))
    return size if walked + size <= most else 0


_OWNED_BELOW: Final = (
    select(history_entries.c.entry_id)
    .where(
        history_entries.c.owner_id == bindparam("owner"),
        history_entries.c.entry_id < bindparam("before"),
        history_entries.c.entry_id <= bindparam("horizon"),
    )
    .order_by(history_entries.c.entry_id.desc())
    .limit(bindparam("bound"))
)


def scan(
    conn: Connection,
    tables: Sequence[str],
    *,
    owners: Sequence[str],
    kinds: Sequence[str],
    before: int,
    horizon: int,
    now: str,
    bound: int,
) -> tuple[list[Entry], int | None]:
    """The bounded scan for a query the index cannot answer: the visible entries of `tables`
    among the newest `bound` entries of `owners` below `before` (by the owner index, so other
    owners' entries cost nothing), newest first, with the lowest entry ID examined (None when
    no more than `bound` were left: the scan reached the end)."""
    found: list[int] = []
    for owner in owners:
        found.extend(
            int(value)
            for value in conn.execute(
                _OWNED_BELOW,
                {"owner": owner, "before": before, "horizon": horizon, "bound": bound + 1},
            ).scalars()
        )
    found.sort(reverse=True)
    ids = found[:bound]
    if not ids:
        return [], None
    lowest = ids[-1] if len(found) > bound else None
    window = {
        "low": ids[-1],
        "before": before,
        "horizon": horizon,
        "now": now,
        **_bound(conn, owners, kinds),
    }
    if len(tables) == 1:
        statement = _scan_statement(
            conn.dialect.name, tables[0], fulltext.key(conn), len(owners), len(kinds)
        )
        return [_entry(row) for row in conn.execute(statement, window)], lowest
    # Sharded (memories): the visible entries first, then the texts of the window's entries
    # from every shard, one statement for all; an entry is a hit only when its text is there.
    entries = conn.execute(
        _scan_entries_statement(conn.dialect.name, len(owners), len(kinds)), window
    ).all()
    if not entries:
        return [], lowest
    statement = _texts_statement(conn.dialect.name, tuple(tables), fulltext.key(conn))
    texts: dict[int, str] = {int(row[0]): str(row[1]) for row in conn.execute(statement, window)}
    return [_entry((*row, texts[row[0]])) for row in entries if row[0] in texts], lowest
