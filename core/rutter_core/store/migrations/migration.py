"""One schema step, and the checksum a store records when it applies one."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from rutter_core.store.dialects import Dialect, RowFollows, RowOwnership, UniqueKey, dialect_named


@dataclass(frozen=True)
class KeyGuard:
    """An append-only table and every key a new row of it must not repeat."""

    table: str
    keys: tuple[UniqueKey, ...]


@dataclass(frozen=True)
class TableRebuild:
    """Replace `table` by a table of the same name and columns with new definitions (a CHECK
    widened, say), keeping every row: what an engine that cannot alter a constraint in place
    does by copying. `definition` is the text inside `CREATE TABLE (...)`; `columns` lists every
    column, copied by name. The old table's indexes and guards go with it: the migration
    creates them again (its `statements`, `append_only` and `key_guards`)."""

    table: str
    definition: str
    columns: tuple[str, ...]


@dataclass(frozen=True)
class FullTextSplit:
    """Move every row of the full-text table `table` into the full-text tables `shards` (by
    key: the row with key k into `shards[k % len(shards)]`), then drop `table`. The shards are
    the migration's own `full_text` tables."""

    table: str
    shards: tuple[str, ...]


@dataclass(frozen=True)
class Migration:
    """One schema step.

    `statements` must be dialect-neutral SQL. What only a dialect can write is declared as data
    and rendered by the dialect: `rebuilds` before the statements (a table rebuilt with new
    definitions, see `TableRebuild`), then after them `append_only` tables get the guard
    refusing UPDATE and DELETE, `key_guards` the guard refusing an INSERT whose key already
    exists; `full_text` tables (one searchable `body`, see `Dialect.full_text_table`) are
    created after the statements; `full_text_splits` move a full-text table's rows into such
    tables right after they are created (see `FullTextSplit`); `full_text_rebuilds` tables
    have their index rewritten from their rows last, damaged or not
    (`Dialect.full_text_repair`); `row_owners` and `row_follows` keep rows to their person
    (`Dialect.row_security`), and `purge_function` makes what lets a person who owns no table
    purge the store (`Dialect.purge_function`), both last. A migration with rebuilds is applied
    with reference checks suspended until its end, when every reference is checked at once (see
    `runner`).
    """

    version: int
    name: str
    statements: tuple[str, ...]
    append_only: tuple[str, ...] = ()
    key_guards: tuple[KeyGuard, ...] = ()
    rebuilds: tuple[TableRebuild, ...] = ()
    full_text: tuple[str, ...] = ()
    full_text_rebuilds: tuple[str, ...] = ()
    full_text_splits: tuple[FullTextSplit, ...] = ()
    row_owners: tuple[RowOwnership, ...] = ()
    row_follows: tuple[RowFollows, ...] = ()
    purge_function: bool = False

    def rendered(self, dialect: Dialect | str) -> tuple[str, ...]:
        """The statements exactly as applied on `dialect`."""
        if isinstance(dialect, str):
            dialect = dialect_named(dialect)
        guards = tuple(
            stmt for table in self.append_only for stmt in dialect.append_only_guard(table)
        )
        key_guards = tuple(
            stmt
            for guard in self.key_guards
            for stmt in dialect.existing_key_guard(guard.table, guard.keys)
        )
        rebuilds = tuple(
            stmt
            for rebuild in self.rebuilds
            for stmt in dialect.rebuild_table(rebuild.table, rebuild.definition, rebuild.columns)
        )
        full_text = tuple(
            stmt for table in self.full_text for stmt in dialect.full_text_table(table)
        )
        splits = tuple(
            stmt
            for split in self.full_text_splits
            for stmt in dialect.full_text_split(split.table, split.shards)
        )
        reindex = tuple(
            stmt for table in self.full_text_rebuilds for stmt in dialect.full_text_repair(table)
        )
        people = (
            dialect.row_security(self.row_owners, self.row_follows)
            if self.row_owners or self.row_follows
            else ()
        )
        purge = dialect.purge_function() if self.purge_function else ()
        return (
            rebuilds
            + self.statements
            + full_text
            + splits
            + guards
            + key_guards
            + reindex
            + people
            + purge
        )


def canonical_statement(statement: str) -> str:
    """Whitespace-insensitive form, so re-indenting a migration does not change its checksum."""
    return " ".join(statement.split())


def migration_checksum(migration: Migration, dialect: Dialect | str) -> str:
    """sha256 of the canonical statements as applied (so guard text changes are caught)."""
    canonical = [canonical_statement(s) for s in migration.rendered(dialect)]
    payload = json.dumps(canonical, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()
