"""PostgreSQL, the store for a team (docs/team.md): every PostgreSQL fact rutter relies on lives
here. Reached through psycopg 3.

Writers are serialized as on SQLite: a write transaction (READ COMMITTED) first takes one
transaction-scoped advisory lock, the store's write lock, so what the application checks under
its write lock (the next sequence number, a thread's pin bound, a version) holds until it
commits, and no serialization failure ever needs a retry; a wait longer than the busy timeout is
`store_busy`. A read is one READ ONLY REPEATABLE READ snapshot. The same lock makes a first open
from several machines apply each migration once. Append-only tables are guarded by PL/pgSQL
triggers, full-text search is `pg_trgm` with GIN indexes (ILIKE, so the answers are the same
whatever the index can use), and the purge rewrites the tables into new files so no deleted text
stays in a table file (`postgresql_purge`: `VACUUM FULL` as their owner, `CLUSTER` through a
function for a member). The change feed the language server polls is the server's current
snapshot (`SnapshotFeed`).

Why one module: it is the one `Dialect` for PostgreSQL, a class whose methods each state one
engine fact the seam asks for; the parts that stand on their own are `postgresql_people` (people
and row-level security) and `postgresql_purge` (the purge).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, ClassVar

from sqlalchemy import event
from sqlalchemy.engine import URL, Connection, Engine, RootTransaction
from sqlalchemy.exc import DatabaseError, IntegrityError

from rutter_core.kernel.errors import Hint, StoreError
from rutter_core.store.dialects import postgresql_people as people
from rutter_core.store.dialects import postgresql_purge as purging
from rutter_core.store.dialects.base import (
    ChangeFeed,
    ConstraintKind,
    Dialect,
    Grants,
    InitOutcome,
    PoolKind,
    RowFollows,
    RowOwnership,
    StoreFacts,
    StoreFailure,
    TransactionKind,
    UniqueKey,
    check_identifier,
)
from rutter_core.store.dialects.postgresql_codes import sqlstate
from rutter_core.store.dialects.postgresql_people import suits_search

WRITE_LOCK_KEY = 0x72757474_6572_0001 & 0x7FFF_FFFF_FFFF_FFFF
"""The advisory lock every write transaction holds (a constant no other program should use:
"rutter" in ASCII, then 1)."""

STATEMENT_TIMEOUT_MS = 120_000
"""The longest one statement may run before the server cancels it (`store_busy`): generous for a
purge's rewrite, short enough that a stuck statement never hangs an editor for good."""

CALL_POOL_SIZE = 1
"""Connections a one-command process (the CLI) keeps open between its transactions; all are closed
when it closes the store, so no session outlives the command."""

CALL_POOL_OVERFLOW = 1
"""Beyond `CALL_POOL_SIZE`, opened for a moment and closed when returned (a purge's own
connection while the command's is still checked out)."""

SERVICE_POOL_SIZE = 5
"""Connections a long-lived server (language server, MCP, each HTTP worker) keeps open."""

SERVICE_POOL_OVERFLOW = 5
"""Beyond `SERVICE_POOL_SIZE`, opened under load and closed when returned: a server never holds
more than the sum, and a request that finds them all busy waits for one (up to the busy
timeout, then `store_busy`)."""

SERVICE_POOL_RECYCLE_SECONDS = 1800
"""A server's pooled connection is replaced once this old (a restarted server, a proxy's idle
timeout or a changed role setting then reach it within this time at most)."""

SEARCH_WALK_FIRST = 1024
SEARCH_WALK_MOST = 16384
"""A search walks the newest rows in key order first (`full_text_walk`): 1,024 rows cost about a
millisecond, and the GIN index returns its candidates in no order, so for a common phrase (or a
rare phrase of common trigrams) it fetches, rechecks and sorts every one before the page is cut
(about 200 ms for 40,000 candidates). Walking on stops at 16,384 rows in all."""

APPLICATION_NAME = "rutter"
"""How rutter's sessions are named in `pg_stat_activity`."""

# SQLSTATE classes and codes (PostgreSQL's "Errcodes" appendix) that are facts about the store.
_FAILURES: dict[str, StoreFailure] = {
    "40001": "busy",  # serialization_failure
    "40P01": "busy",  # deadlock_detected
    "55P03": "busy",  # lock_not_available (lock_timeout)
    "57014": "busy",  # query_canceled (statement_timeout)
    "53300": "busy",  # too_many_connections
    "57P03": "busy",  # cannot_connect_now (starting up, shutting down)
    "25006": "read_only",  # read_only_sql_transaction (also a hot standby)
    "53100": "full",  # disk_full
    "53200": "full",  # out_of_memory
    "58030": "io",  # io_error
    "42501": "denied",  # insufficient_privilege (also a row-level security refusal)
    "XX001": "corrupt",  # data_corrupted
    "XX002": "corrupt",  # index_corrupted
}

APPEND_ONLY_SQLSTATE = "23R01"
"""What the append-only triggers raise: a code of rutter's own in the class of integrity
violations (so the driver raises it as one, as SQLite does a trigger's abort), told from any
other refusal by its code, not its text."""


_CONSTRAINTS: dict[str, ConstraintKind] = {
    "23505": "unique",
    "23503": "foreign_key",
    "23514": "check",
    "23502": "not_null",
    APPEND_ONLY_SQLSTATE: "append_only",
}


def _check_text_settings(encoding: str, ctype: str) -> None:
    """Refuse a database whose text settings would make search answer differently from
    SQLite's: not UTF-8, or a character-class locale (C, POSIX) in which no letter beyond
    ASCII has a case or counts as a letter (CJK text then has no trigrams to index)."""
    if suits_search(encoding, ctype):
        return
    raise StoreError(
        "unsupported_database",
        f"the PostgreSQL database's text settings do not suit rutter (encoding {encoding}, "
        f"LC_CTYPE {ctype}); create it with ENCODING 'UTF8' and a UTF-8 LC_CTYPE such as "
        "'C.UTF-8' or 'en_US.UTF-8' (CREATE DATABASE ... TEMPLATE template0), see docs/team.md",
        details={"engine": "postgresql", "encoding": encoding, "lc_ctype": ctype},
        hint=Hint("choose_store"),
    )


def _trigger_function(table: str, suffix: str) -> str:
    return check_identifier(f"{table}_{suffix}")


class PostgresqlDialect(Dialect):
    """No statement this dialect renders holds a percent sign: the driver would read it as a
    placeholder (`mod()` instead of the operator, concatenation instead of `format`)."""

    name: ClassVar[str] = "postgresql"
    example_url: ClassVar[str] = "postgresql://USER@/DATABASE?host=/run/postgresql"
    read_only_remedy: ClassVar[str] = (
        "connect to the primary server, not a standby, as a role whose transactions may write "
        "(default_transaction_read_only off)"
    )

    separates_people: ClassVar[bool] = True

    def person(self, conn: Connection) -> str:
        return people.person(conn)

    def act_as(self, conn: Connection, person: str) -> None:
        people.act_as(conn, person)

    def check_person(self, conn: Connection, person: str) -> None:
        people.check_person(conn, person)

    def row_security(
        self, owned: Sequence[RowOwnership], follows: Sequence[RowFollows]
    ) -> tuple[str, ...]:
        return people.row_security(owned, follows)

    def facts(
        self, conn: Connection, *, group: str, secured: Sequence[str], grants: Grants
    ) -> StoreFacts:
        return people.facts(conn, group=group, secured=secured, grants=grants)

    def initialize(self, conn: Connection, *, group: str, grants: Grants) -> InitOutcome:
        return people.initialize(conn, group=group, grants=grants)

    def prepare(self, url: URL) -> None:
        # A server's database is created by its administrator (docs/team.md); nothing to make.
        return None

    def pool_options(self, url: URL, pool: PoolKind, *, busy_timeout_ms: int) -> dict[str, Any]:
        # A connection costs the server a process: bounded in both cases. A one-command process
        # keeps one between its transactions (disposed with the store); a server checks each
        # connection before using it (pre-ping: a server restart or a dropped idle connection
        # costs a reconnect, not a failed request) and replaces old ones.
        timeout = max(busy_timeout_ms / 1000, 0.001)
        if pool == "call":
            return {
                "pool_size": CALL_POOL_SIZE,
                "max_overflow": CALL_POOL_OVERFLOW,
                "pool_timeout": timeout,
            }
        return {
            "pool_size": SERVICE_POOL_SIZE,
            "max_overflow": SERVICE_POOL_OVERFLOW,
            "pool_timeout": timeout,
            "pool_pre_ping": True,
            "pool_recycle": SERVICE_POOL_RECYCLE_SECONDS,
        }

    def configure(self, engine: Engine, *, busy_timeout_ms: int) -> None:
        lock_timeout = int(busy_timeout_ms)

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_connection: Any, _record: Any) -> None:
            # Outside any transaction, and kept for the connection's life (SET, not SET LOCAL).
            previous = dbapi_connection.autocommit
            dbapi_connection.autocommit = True
            try:
                cursor = dbapi_connection.cursor()
                try:
                    cursor.execute(f"SET lock_timeout = {lock_timeout}")
                    cursor.execute(f"SET statement_timeout = {STATEMENT_TIMEOUT_MS}")
                    cursor.execute(f"SET application_name = '{APPLICATION_NAME}'")
                    # No LLVM compilation: rutter's statements are short, and a plan whose
                    # estimate passes jit_above_cost (a search's walk of the 16 memory shards
                    # under row-level security) spent 200 ms compiling to run in 3.
                    cursor.execute("SET jit = off")
                    # Text compared and matched as the application wrote it.
                    cursor.execute("SET client_encoding = 'UTF8'")
                    cursor.execute(
                        "SELECT current_setting('server_encoding'), current_setting('lc_ctype')"
                    )
                    encoding, ctype = cursor.fetchone()
                finally:
                    cursor.close()
            finally:
                dbapi_connection.autocommit = previous
            _check_text_settings(str(encoding), str(ctype))

    def begin(self, conn: Connection, kind: TransactionKind) -> RootTransaction:
        from psycopg import IsolationLevel

        # The transaction's characteristics go with the BEGIN the driver sends before the first
        # statement (`BEGIN ISOLATION LEVEL ...`): one round trip, not a BEGIN and a SET
        # TRANSACTION. Set on the idle connection for each transaction, so none inherits the
        # last one's. A write is not READ WRITE: a database its administrator made read-only
        # (default_transaction_read_only) refuses the first write, `store_read_only`.
        dbapi = conn.connection.dbapi_connection
        assert dbapi is not None
        read = kind == "read"
        dbapi.isolation_level = (
            IsolationLevel.REPEATABLE_READ if read else IsolationLevel.READ_COMMITTED
        )
        dbapi.read_only = True if read else None
        trans = conn.begin()
        try:
            if not read:
                # The store's write lock, waited for up to lock_timeout (then 55P03: busy).
                conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({WRITE_LOCK_KEY})")
        except BaseException:
            trans.rollback()
            raise
        return trans

    def failure(self, exc: DatabaseError) -> StoreFailure | None:
        code = sqlstate(exc)
        if code is None:
            return None
        return _FAILURES.get(code)

    def constraint(self, exc: IntegrityError) -> ConstraintKind:
        code = sqlstate(exc)
        return "other" if code is None else _CONSTRAINTS.get(code, "other")

    def append_only_guard(self, table: str) -> tuple[str, ...]:
        check_identifier(table)
        function = _trigger_function(table, "append_only")
        return (
            f"CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $$ "
            "BEGIN RAISE EXCEPTION USING ERRCODE = '" + APPEND_ONLY_SQLSTATE + "', "
            f"MESSAGE = 'append-only table {table}: rows cannot be ' || lower(TG_OP) || 'd'; "
            "END $$",
            *(
                f"CREATE TRIGGER {table}_append_only_no_{verb.lower()} BEFORE {verb} ON {table} "
                f"FOR EACH ROW EXECUTE FUNCTION {function}()"
                for verb in ("UPDATE", "DELETE")
            ),
        )

    def existing_key_guard(self, table: str, keys: Sequence[UniqueKey]) -> tuple[str, ...]:
        # PostgreSQL has no INSERT OR REPLACE, and ON CONFLICT DO UPDATE fires the UPDATE
        # guard; this trigger refuses the insert itself, typed as an append-only refusal
        # rather than the unique index's violation, as on SQLite.
        check_identifier(table)
        taken: list[str] = []
        for key in keys:
            match = " AND ".join(f"t.{column} = NEW.{column}" for column in key.columns)
            if key.partial is None:
                taken.append(f"EXISTS (SELECT 1 FROM {table} AS t WHERE {match})")
            else:
                column, value = key.partial
                taken.append(
                    f"(NEW.{column} = '{value}' AND EXISTS (SELECT 1 FROM {table} AS t "
                    f"WHERE {match} AND t.{column} = '{value}'))"
                )
        function = _trigger_function(table, "append_only_key")
        return (
            f"CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $$ "
            f"BEGIN IF {' OR '.join(taken)} THEN RAISE EXCEPTION 'append-only table {table}: "
            "a row with this key already exists' USING ERRCODE = '"
            + APPEND_ONLY_SQLSTATE
            + "'; END IF; RETURN NEW; END $$",
            f"CREATE TRIGGER {table}_append_only_no_existing_key BEFORE INSERT ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION {function}()",
        )

    def rebuild_table(self, table: str, definition: str, columns: Sequence[str]) -> tuple[str, ...]:
        # The old table is renamed away (the references of other tables follow it, by OID),
        # the new one created and filled, then each of those references is made again against
        # the new table (ADD CONSTRAINT checks every row) before the old one is dropped. Its
        # indexes and triggers go with it; the migration creates them again.
        check_identifier(table)
        names = ", ".join(check_identifier(column) for column in columns)
        old = check_identifier(f"{table}__old")
        return (
            f"ALTER TABLE {table} RENAME TO {old}",
            f"CREATE TABLE {table} ({definition})",
            f"INSERT INTO {table} ({names}) SELECT {names} FROM {old}",
            "DO $$ DECLARE r record; BEGIN FOR r IN SELECT conrelid::regclass AS referrer, "
            "conname, pg_get_constraintdef(oid) AS definition FROM pg_constraint "
            f"WHERE contype = 'f' AND confrelid = '{old}'::regclass "
            f"AND conrelid <> '{old}'::regclass LOOP "
            "EXECUTE 'ALTER TABLE ' || r.referrer "
            "|| ' DROP CONSTRAINT ' || quote_ident(r.conname); "
            "EXECUTE 'ALTER TABLE ' || r.referrer "
            "|| ' ADD CONSTRAINT ' || quote_ident(r.conname) "
            f"|| ' ' || replace(r.definition, 'REFERENCES {old}(', 'REFERENCES {table}('); "
            "END LOOP; END $$",
            f"DROP TABLE {old}",
        )

    def suspend_references(self, conn: Connection) -> None:
        # References stay checked throughout: `rebuild_table` re-creates them, checking them.
        return None

    def restore_references(self, conn: Connection) -> None:
        return None

    def dangling_references(self, conn: Connection) -> int:
        return 0  # every reference was checked as it was made again (`rebuild_table`)

    def lift_delete_guards(self, conn: Connection, tables: Sequence[str]) -> tuple[str, ...]:
        # ALTER TABLE is transactional: disabled inside the caller's write, enabled again in
        # it (or never disabled, when it rolls back); no other session sees the table without.
        restore: list[str] = []
        for table in tables:
            name = f"{check_identifier(table)}_append_only_no_delete"
            present = conn.exec_driver_sql(
                "SELECT 1 FROM pg_trigger WHERE tgname = %(name)s "
                "AND tgrelid = to_regclass(%(table)s)",
                {"name": name, "table": table},
            ).scalar_one_or_none()
            if present is None:
                continue
            conn.exec_driver_sql(f"ALTER TABLE {table} DISABLE TRIGGER {name}")
            restore.append(f"ALTER TABLE {table} ENABLE TRIGGER {name}")
        return tuple(restore)

    def purge_mark(self, conn: Connection) -> int | None:
        # The write's transaction ID (none when it wrote nothing): a deleted row stays in the
        # rewritten files while a snapshot as old as this transaction is open.
        found = conn.exec_driver_sql("SELECT pg_current_xact_id_if_assigned()::text").scalar()
        return None if found is None else int(found)

    def purge(self, engine: Engine, *, since: int | None = None) -> bool:
        # VACUUM FULL as the tables' owner, the function migration 23 made as a member (who
        # owns none): `postgresql_purge`. Outside a transaction, as VACUUM must be. What it
        # cannot reach (WAL not yet recycled, replicas, backups) is in docs/team.md.
        connection = engine.raw_connection()
        try:
            dbapi = connection.dbapi_connection
            assert dbapi is not None
            dbapi.autocommit = True
            cursor = dbapi.cursor()
            try:
                return purging.purge(cursor, since=since)
            finally:
                cursor.close()
                dbapi.autocommit = False
        finally:
            connection.close()

    def purge_function(self) -> tuple[str, ...]:
        return purging.purge_function()

    def make_durable(self, engine: Engine) -> None:
        # Every commit is durable when it returns (synchronous_commit, PostgreSQL's default;
        # an administrator who turns it off accepts losing the last commits in a crash).
        return None

    def full_text_table(self, table: str) -> tuple[str, ...]:
        # pg_trgm (a trusted extension: the database's owner may create it) indexes every
        # 3-character window; with a UTF-8 database whose ctype makes CJK characters letters
        # (C.UTF-8), those count too. ILIKE on the trigram index is a case-insensitive
        # substring match, as FTS5's trigram tokenizer is on SQLite.
        check_identifier(table)
        return (
            "CREATE EXTENSION IF NOT EXISTS pg_trgm",
            f"CREATE TABLE {table} (entry_id BIGINT NOT NULL PRIMARY KEY, body TEXT NOT NULL)",
            f"CREATE INDEX {table}_body_trigrams ON {table} USING gin (body gin_trgm_ops)",
        )

    def full_text_key(self) -> str:
        return "entry_id"

    def full_text_min_query(self) -> int:
        return 3

    def full_text_walk(self) -> tuple[int, int]:
        # ILIKE filters any row, so the same fragment filters the walked rows.
        return SEARCH_WALK_FIRST, SEARCH_WALK_MOST

    def full_text_match(self, table: str, query: str) -> tuple[str, str]:
        # The query's LIKE wildcards and the escape character itself are escaped, so no query
        # is a pattern.
        check_identifier(table)
        escaped = query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        return f"{table}.body ILIKE :fts_query ESCAPE '\\'", f"%{escaped}%"

    def full_text_rebuild(self, table: str) -> tuple[str, ...]:
        # A new index built from the table's rows alone (the old one's file is unlinked at
        # commit); the heap's dead rows leave the files at the purge (`postgresql_purge`).
        check_identifier(table)
        return (f"REINDEX TABLE {table}",)

    def full_text_repair(self, table: str) -> tuple[str, ...]:
        return self.full_text_rebuild(table)

    def full_text_compact(self, conn: Connection, table: str) -> None:
        # As the tables' owner, through the function migration 17 made (a person is no owner).
        check_identifier(table)
        conn.exec_driver_sql(f"SELECT {people.REINDEX_FUNCTION}('{table}')")

    def full_text_split(self, table: str, shards: Sequence[str]) -> tuple[str, ...]:
        check_identifier(table)
        count = len(shards)
        return (
            *(
                f"INSERT INTO {check_identifier(shard)} (entry_id, body) "
                f"SELECT entry_id, body FROM {table} WHERE mod(entry_id, {count}) = {number}"
                for number, shard in enumerate(shards)
            ),
            f"DROP TABLE {table}",
        )

    def change_feed(self, engine: Engine) -> ChangeFeed | None:
        return SnapshotFeed(engine)


class SnapshotFeed:
    """The server's current snapshot (`pg_current_snapshot()`: the oldest transaction still
    running, the next transaction ID, the ones in progress) moves when a transaction that
    writes begins and again when it ends, and never for a read: a read-only transaction is given
    no transaction ID. So a commit made by anyone, on any machine, changes it, including one
    that began before a poll and ended after it (it leaves the in-progress list). Transactions
    in the server's other databases move it too: the feed answers "may have changed", and a
    subscriber re-reads for nothing, never misses a change.

    One connection is held for the probe alone, outside the pool and in autocommit, so it never
    sits idle inside a transaction (which would hold back the server's cleanup of dead rows)."""

    def __init__(self, engine: Engine) -> None:
        connection = engine.raw_connection()
        driver = connection.driver_connection
        assert driver is not None
        driver.rollback()  # whatever the pool's checkout began
        driver.autocommit = True
        connection.detach()  # closed at the end, never returned to the pool in autocommit
        self._connection = connection

    def version(self) -> int:
        cursor = self._connection.cursor()
        try:
            cursor.execute("SELECT pg_current_snapshot()::text")
            row = cursor.fetchone()
        finally:
            cursor.close()
        snapshot = str(row[0] if row is not None else "")
        return int.from_bytes(hashlib.blake2b(snapshot.encode(), digest_size=8).digest(), "big")

    def close(self) -> None:
        self._connection.close()
