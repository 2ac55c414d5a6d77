"""Applying migrations on open: each in its own transaction together with its ledger row, so a
failure leaves the store at the previous version; the ledger is checked against the code first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import insert, inspect, select
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DatabaseError

from rutter_core.kernel.clock import now_rfc3339
from rutter_core.kernel.errors import Hint, StoreError
from rutter_core.store.migrations.migration import Migration, migration_checksum
from rutter_core.store.schema import metadata, schema_migrations

if TYPE_CHECKING:
    from rutter_core.store.engine import Store

# The ledger comes before every migration (it records them), so it is created here.
_LEDGER_DDL = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER NOT NULL PRIMARY KEY CHECK (version > 0),
    name TEXT NOT NULL CHECK (length(name) > 0),
    checksum TEXT NOT NULL CHECK (length(checksum) = 64),
    applied_at TEXT NOT NULL
)
"""


@dataclass(frozen=True)
class _Applied:
    version: int
    name: str
    checksum: str


def check_migration_list(migrations: Sequence[Migration]) -> None:
    """Programming errors in the code's list, caught before touching any database."""
    previous = 0
    for migration in migrations:
        if migration.version <= previous:
            raise ValueError(
                f"migration versions must be positive and strictly increasing: "
                f"{migration.version} follows {previous}"
            )
        if not migration.name or not (
            migration.statements
            or migration.append_only
            or migration.key_guards
            or migration.rebuilds
            or migration.full_text_rebuilds
            or migration.full_text_splits
            or migration.purge_function
        ):
            raise ValueError(f"migration {migration.version} needs a name and statements")
        previous = migration.version


def _read_ledger(conn: Connection) -> dict[int, _Applied]:
    query = select(
        schema_migrations.c.version, schema_migrations.c.name, schema_migrations.c.checksum
    ).order_by(schema_migrations.c.version)
    return {
        int(row.version): _Applied(int(row.version), str(row.name), str(row.checksum))
        for row in conn.execute(query)
    }


def _pending(
    store: Store, applied: Mapping[int, _Applied], migrations: Sequence[Migration]
) -> list[Migration]:
    """Verify the ledger against the code and return what is still to apply, in order."""
    known = {m.version: m for m in migrations}
    for version, row in sorted(applied.items()):
        migration = known.get(version)
        if migration is None:
            raise StoreError(
                "unknown_migration",
                f"the store {store.display_url} records schema migration {version} "
                f"({row.name!r}), which this rutter does not know: it was written by a newer "
                "rutter. Upgrade rutter, or use another store.",
                details={"version": version, "name": row.name},
                hint=Hint("choose_store"),
            )
        expected = migration_checksum(migration, store.dialect)
        if row.checksum != expected:
            raise StoreError(
                "migration_checksum_mismatch",
                f"schema migration {version} ({row.name!r}) in the store {store.display_url} "
                f"was applied with checksum {row.checksum[:12]}…, but this rutter's migration "
                f"{version} has {expected[:12]}…: the migration was edited after release. "
                "Restore its original statements (add a new migration for schema changes), "
                "or use a fresh store.",
                details={"version": version, "recorded": row.checksum, "expected": expected},
            )
    pending = [m for m in migrations if m.version not in applied]
    if pending and applied and pending[0].version < max(applied):
        raise StoreError(
            "migration_out_of_order",
            f"schema migration {pending[0].version} ({pending[0].name!r}) is missing from the "
            f"store {store.display_url}, which already has migration {max(applied)}; "
            "migrations must be appended after the newest released one.",
            details={"version": pending[0].version},
        )
    return pending


def _check_ledger_present(store: Store, tables: set[str], applied: Mapping[int, _Applied]) -> None:
    """rutter's tables without a ledger that records them: the ledger was dropped or emptied.
    Migrating again would fail half-way on tables that exist; say what happened instead."""
    ours = (tables & set(metadata.tables)) - {schema_migrations.name}
    if ours and not applied:
        raise StoreError(
            "migration_ledger_damaged",
            f"the store {store.display_url} has rutter's tables but its migration ledger "
            "(schema_migrations) is missing or empty, so rutter cannot tell which schema it "
            "has; restore the store from a backup, or use a fresh store",
            details={"ledger": schema_migrations.name},
            hint=Hint("choose_store"),
        )


def _check_tables(store: Store, tables: set[str]) -> None:
    """Every table of the current schema exists (the ledger says they were all created)."""
    missing = sorted(set(metadata.tables) - tables)
    if missing:
        raise StoreError(
            "store_schema_damaged",
            f"the store {store.display_url} lacks the table(s) {', '.join(missing)} that its "
            "migration ledger says were created; restore the store from a backup, or use a "
            "fresh store",
            details={"missing_tables": missing},
            hint=Hint("choose_store"),
        )


def apply_migrations(
    store: Store, migrations: Sequence[Migration], *, current_schema: bool = False
) -> None:
    """Bring the store up to date; safe when several processes open a fresh store at once.
    With `current_schema` (the released list, which builds `store/schema.py`), an up-to-date
    store must also have every table of that schema."""
    check_migration_list(migrations)
    # Fast path without the write lock: the usual open finds everything applied.
    with store.read() as conn:
        tables = set(inspect(conn).get_table_names())
        applied = _read_ledger(conn) if schema_migrations.name in tables else {}
    _check_ledger_present(store, tables, applied)
    if not _pending(store, applied, migrations):
        if current_schema:
            _check_tables(store, tables)
        return
    while True:
        # Re-check under the write lock: another process may have migrated meanwhile.
        with store.write() as conn:
            conn.exec_driver_sql(_LEDGER_DDL)
            pending = _pending(store, _read_ledger(conn), migrations)
            if not pending:
                return
            migration = pending[0]
            if not migration.rebuilds:
                _apply(conn, store, migration)
                continue
        _apply_rebuilding(store, migration, migrations)


def _apply(conn: Connection, store: Store, migration: Migration) -> None:
    for statement in migration.rendered(store.dialect):
        conn.exec_driver_sql(statement)
    conn.execute(
        insert(schema_migrations).values(
            version=migration.version,
            name=migration.name,
            checksum=migration_checksum(migration, store.dialect),
            applied_at=now_rfc3339(),
        )
    )


def _apply_rebuilding(store: Store, migration: Migration, migrations: Sequence[Migration]) -> None:
    """Apply a migration that rebuilds tables: in one write transaction as every migration, on
    a connection whose reference checks are suspended (a rebuilt table is dropped while rows of
    other tables still refer to it) and checked whole before the commit; a dangling reference
    fails the migration and leaves the store as it was."""
    dialect = store.dialect
    with store.engine.connect() as conn:
        dialect.suspend_references(conn)
        try:
            try:
                trans = dialect.begin(conn, "write")
            except DatabaseError as exc:
                if dialect.failure(exc) == "busy":
                    raise StoreError(
                        "store_busy",
                        f"the store {store.display_url} stayed locked by another rutter process "
                        "while its schema was being brought up to date; retry",
                    ) from exc
                raise
            try:
                pending = _pending(store, _read_ledger(conn), migrations)
                if pending and pending[0].version == migration.version:
                    _apply(conn, store, migration)
                    dangling = dialect.dangling_references(conn)
                    if dangling:
                        raise StoreError(
                            "migration_failed",
                            f"schema migration {migration.version} ({migration.name!r}) would "
                            f"leave {dangling} dangling reference(s) in the store "
                            f"{store.display_url}; nothing was changed",
                            details={"version": migration.version, "dangling": dangling},
                        )
            except BaseException:
                trans.rollback()
                raise
            trans.commit()
        finally:
            dialect.restore_references(conn)
