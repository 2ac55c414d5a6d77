"""The store's dialects: the only package in rutter that names a database engine.

A dialect is found by the URL's backend name: SQLite (the embedded default) and PostgreSQL (a
team's store: docs/team.md). Opening a URL of an engine without a dialect fails at once
with `unsupported_database`.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import URL

from rutter_core.kernel.errors import Hint, StoreError
from rutter_core.store.dialects.base import (
    ChangeFeed,
    Dialect,
    InitOutcome,
    PoolKind,
    RowFollows,
    RowOwnership,
    StoreFacts,
    StoreFailure,
    TableSecurity,
    TransactionKind,
    UniqueKey,
)
from rutter_core.store.dialects.postgresql import PostgresqlDialect
from rutter_core.store.dialects.sqlite import SqliteDialect

_DIALECTS: dict[str, Dialect] = {
    dialect.name: dialect for dialect in (SqliteDialect(), PostgresqlDialect())
}

EMBEDDED: Dialect = _DIALECTS[SqliteDialect.name]
"""The dialect of the default store, a file in the data home."""


def embedded_database_url(path: Path) -> str:
    """The URL of the default store's file at `path`."""
    return SqliteDialect.file_url(path)


def dialect_named(name: str) -> Dialect:
    """The dialect for backend `name`; `unsupported_database` when rutter has none."""
    dialect = _DIALECTS.get(name)
    if dialect is None:
        supported = ", ".join(sorted(_DIALECTS))
        raise StoreError(
            "unsupported_database",
            f"rutter cannot use {name!r} databases yet (supported: {supported})",
            details={"engine": name, "supported": sorted(_DIALECTS)},
            hint=Hint("choose_store"),
        )
    return dialect


def dialect_for(url: URL) -> Dialect:
    """The dialect for `url` (only its backend name is read: never the password)."""
    return dialect_named(url.get_backend_name())


def append_only_triggers(table: str, *, dialect: str = EMBEDDED.name) -> tuple[str, ...]:
    """Statements that make `table` reject UPDATE and DELETE (docs/reference/store.md), as
    migrations render them."""
    return dialect_named(dialect).append_only_guard(table)


__all__ = [
    "EMBEDDED",
    "ChangeFeed",
    "Dialect",
    "InitOutcome",
    "PoolKind",
    "RowFollows",
    "RowOwnership",
    "StoreFacts",
    "StoreFailure",
    "TableSecurity",
    "TransactionKind",
    "UniqueKey",
    "append_only_triggers",
    "dialect_for",
    "dialect_named",
    "embedded_database_url",
]
