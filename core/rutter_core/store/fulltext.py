"""Full-text search for the areas' repos, engine-neutral: each call asks the connection's
dialect (`Dialect.full_text_*`) how its engine does it."""

from __future__ import annotations

from sqlalchemy import TextClause, text
from sqlalchemy.engine import Connection

from rutter_core.store.dialects import dialect_named


def key(conn: Connection) -> str:
    """The column name of a full-text table's integer key (the entry it indexes)."""
    return dialect_named(conn.dialect.name).full_text_key()


def join(engine: str) -> str:
    """The join keyword between a full-text table and the entries, for the engine named
    `engine` (`conn.dialect.name`), that keeps the index's hits as the outer loop."""
    return dialect_named(engine).full_text_join()


def min_query_chars(conn: Connection) -> int:
    """The shortest query the full-text index answers (shorter ones: a bounded scan)."""
    return dialect_named(conn.dialect.name).full_text_min_query()


def walk(conn: Connection) -> tuple[int, int]:
    """(first, most): the rows a search examines in key order before it asks the index (the
    first walk's size, the most in all); (0, 0) when the index answers in key order itself."""
    return dialect_named(conn.dialect.name).full_text_walk()


def match(conn: Connection, table: str, query: str) -> tuple[TextClause, str]:
    """A WHERE clause with the bound parameter `fts_query` matching the rows of `table` whose
    body holds `query` as a case-insensitive substring, and the value to bind."""
    fragment, value = dialect_named(conn.dialect.name).full_text_match(table, query)
    return text(fragment), value


def compact(conn: Connection, table: str) -> None:
    """Rewrite `table`'s index so no deleted row's text remains in its pages, in the caller's
    transaction (a purge of the store afterwards clears its log)."""
    dialect_named(conn.dialect.name).full_text_compact(conn, table)
