"""PostgreSQL's purge (docs/team.md): after a deletion, each of rutter's tables is written into
new files, its indexes and TOAST data with it, and the old files are removed, so a deleted row's
text is in no table file (plain VACUUM only marks its space free).

Rewriting a table needs its owner, the administrator's role. The owner runs `VACUUM (FULL)` on
the tables at once (each rewritten in a transaction of its own). A member owns nothing: rutter
calls `rutter_purge_table(name)` for each table, a SECURITY DEFINER function owned by the
administrator (made by migration 23, `EXECUTE` granted to the members' group by `rutter store
init`) that runs `CLUSTER table USING` its primary key, a full rewrite PostgreSQL allows inside
a function (VACUUM runs in no transaction). `CLUSTER` writes the table, its TOAST data and every
index into new files as `VACUUM FULL` does (it sorts the rows by the key as well), under the
same lock (ACCESS EXCLUSIVE, while that table is rewritten), and like it copies every row an
open snapshot may still read. The function rewrites a table of the store's schema owned by its
own owner and nothing else.

So a deleted row stays in the new files while a snapshot taken before the deletion is open (a
read under way, a writer waiting for the write lock since then, a session idle in a
transaction): the purge waits for such snapshots to end, up to lock_timeout, rewrites all the
same, and says whether the deletion it was asked to complete (`since`, the deleting
transaction's ID) is gone. rutter's own waits hold no snapshot: a purge waits for its turn and
for older snapshots by asking again and again (`pg_try_advisory_lock`, `pg_stat_activity`),
never in a statement, since a statement waiting holds a snapshot (tested: a purge waiting in
`pg_advisory_lock` made another purge under way keep the row).

One purge at a time: a purge holds an advisory lock (`PURGE_LOCK_KEY`) for its session, and the
function takes it for its transaction too (a session that holds it already is granted it at
once), so a call made outside rutter waits for a purge as well. A lock held by a reader past
lock_timeout (or a statement past statement_timeout) leaves the purge incomplete (False): the
next purge finishes the job.
"""

from __future__ import annotations

import time
from typing import Any

from rutter_core.store.dialects.postgresql_codes import BUSY, sqlstate

PURGE_LOCK_KEY = 0x72757474_6572_0002
"""The advisory lock a purge holds (one purge at a time: two would wait on each other's
tables): "rutter" in ASCII, then 2 (the store's write lock is 1)."""

PURGE_FUNCTION = "rutter_purge_table"
"""Rewrites one of rutter's tables as their owner (SECURITY DEFINER), for a member."""

PURGE_REFUSED_SQLSTATE = "42R01"
"""What `PURGE_FUNCTION` raises for a name that is not one of rutter's tables (or a table
without a primary key): a code of rutter's own in the class of access rule violations, told by
its code; its message never repeats the name."""

_REFUSED = ("42501", "42883", PURGE_REFUSED_SQLSTATE)
"""A member's call the server refused: no EXECUTE (the group was not granted it: `rutter store
init`), no such function, or a table the function does not rewrite."""


def purge_function() -> tuple[str, ...]:
    """The DDL of `PURGE_FUNCTION` (migration 23 renders it: never change its text).

    The table is looked up by name, compared as a value (never spliced), among the plain tables
    of the store's schema (the function's search_path, fixed when it was made) owned by the
    function's owner: a system catalog, another schema's table or another role's is refused,
    whatever the name holds. Its primary key's index is read from the catalog; both names are
    quoted (`quote_ident`) where they are spliced. The table is left unmarked afterwards
    (`SET WITHOUT CLUSTER`), as it was."""
    refuse = (
        "RAISE EXCEPTION USING ERRCODE = '" + PURGE_REFUSED_SQLSTATE + "', MESSAGE = '{message}'"
    )
    return (
        f"CREATE OR REPLACE FUNCTION {PURGE_FUNCTION}(name text) RETURNS void "
        "LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$ "
        "DECLARE target oid; primary_key text; BEGIN "
        "SELECT c.oid INTO target FROM pg_catalog.pg_class AS c "
        "WHERE c.relname = $1 AND c.relkind = 'r' "
        "AND c.relnamespace = pg_catalog.to_regnamespace(pg_catalog.current_schema()) "
        "AND c.relowner = (SELECT r.oid FROM pg_catalog.pg_roles AS r "
        "WHERE r.rolname = current_user); "
        "IF target IS NULL THEN "
        + refuse.format(message="not a table of this rutter store")
        + "; END IF; "
        "SELECT i.relname INTO primary_key FROM pg_catalog.pg_index AS x "
        "JOIN pg_catalog.pg_class AS i ON i.oid = x.indexrelid "
        "WHERE x.indrelid = target AND x.indisprimary; "
        "IF primary_key IS NULL THEN "
        + refuse.format(message="the table has no primary key to rewrite it by")
        + "; END IF; "
        f"PERFORM pg_catalog.pg_advisory_xact_lock({PURGE_LOCK_KEY}); "
        "EXECUTE 'CLUSTER ' || pg_catalog.quote_ident($1) "
        "|| ' USING ' || pg_catalog.quote_ident(primary_key); "
        "EXECUTE 'ALTER TABLE ' || pg_catalog.quote_ident($1) || ' SET WITHOUT CLUSTER'; "
        "END $$",
        f"REVOKE ALL ON FUNCTION {PURGE_FUNCTION}(text) FROM PUBLIC",
    )


_FIRST_TRY_SECONDS = 0.005
_LAST_TRY_SECONDS = 0.1
"""How long a purge waits between two looks at what it waits for (its lock, older snapshots
ending): doubled from the first up to the last."""

_OLDER_SNAPSHOTS = (
    "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid <> pg_backend_pid() "
    "AND (datid IS NULL OR datname = current_database()) "
    "AND (age(backend_xmin) >= age(%(deletion)s::xid8::xid) "
    "OR age(backend_xid) >= age(%(deletion)s::xid8::xid))) "
    "OR EXISTS (SELECT 1 FROM pg_replication_slots "
    "WHERE age(xmin) >= age(%(deletion)s::xid8::xid)) "
    "OR EXISTS (SELECT 1 FROM pg_prepared_xacts WHERE database = current_database() "
    "AND age(transaction) >= age(%(deletion)s::xid8::xid))"
)
"""Whether a row deleted by the transaction `deletion` may still be read by someone, and so
would be copied into the rewritten files (VACUUM FULL and CLUSTER keep every row an open
snapshot may read): a snapshot (`backend_xmin`) or a transaction (`backend_xid`) as old as it in
a session of this database (or of none: a standby's feedback), a replication slot's or a
prepared transaction's. Every role may read these columns."""


def _deadline(cursor: Any) -> float | None:
    """When the session's lock_timeout from now has passed (None: it waits for ever)."""
    cursor.execute("SELECT setting::bigint FROM pg_settings WHERE name = 'lock_timeout'")
    row = cursor.fetchone()
    timeout_ms = int(row[0]) if row is not None else 0
    return None if timeout_ms <= 0 else time.monotonic() + timeout_ms / 1000


def _until(cursor: Any, query: str, params: dict[str, str], deadline: float | None) -> bool:
    """Run `query` (one boolean) again and again until it answers true (True) or `deadline`
    has passed (False). No statement waits, so the session holds no snapshot meanwhile."""
    pause = _FIRST_TRY_SECONDS
    while True:
        cursor.execute(query, params)
        row = cursor.fetchone()
        if row is not None and bool(row[0]):
            return True
        if deadline is not None and time.monotonic() >= deadline:
            return False
        time.sleep(pause)
        pause = min(pause * 2, _LAST_TRY_SECONDS)


def purge(cursor: Any, *, since: int | None = None) -> bool:
    """Rewrite every table of the store's schema on `cursor` (a psycopg cursor in autocommit:
    VACUUM runs in no transaction, and each function call is a transaction of its own). False
    when what the transaction `since` deleted (None: any transaction committed before now) may
    be left in a file: a snapshot as old still open after lock_timeout, a table's lock held
    that long, a table this role cannot have rewritten."""
    # The tables of the store's schema: this role's own (VACUUM FULL), those the function's
    # owner owns (the function), and any other (nobody here may rewrite it: incomplete).
    cursor.execute(
        "SELECT quote_ident(t.tablename), t.tablename, "
        "pg_has_role(current_user, t.tableowner, 'USAGE'), "
        "t.tableowner = (SELECT pg_get_userbyid(p.proowner) FROM pg_proc AS p "
        f"WHERE p.oid = to_regprocedure('{PURGE_FUNCTION}(text)')) "
        "FROM pg_tables AS t WHERE t.schemaname = current_schema() ORDER BY t.tablename"
    )
    rows = cursor.fetchall()
    owned = ", ".join(str(row[0]) for row in rows if row[2])
    through_function = [str(row[1]) for row in rows if not row[2] and row[3]]
    complete = all(bool(row[2]) or bool(row[3]) for row in rows)
    if not owned and not through_function:
        return complete
    try:
        deadline = _deadline(cursor)
        if not _until(cursor, f"SELECT pg_try_advisory_lock({PURGE_LOCK_KEY})", {}, deadline):
            return False
    except Exception as exc:
        if sqlstate(exc) in BUSY:
            return False
        raise
    try:
        if since is None:
            cursor.execute("SELECT pg_snapshot_xmax(pg_current_snapshot())::text")
            row = cursor.fetchone()
            since = int(row[0]) - 1 if row is not None else 0
        # A snapshot taken before the deletion may still be open (a read under way, a writer
        # waiting for the write lock since then): wait for it to end, up to lock_timeout, and
        # rewrite all the same (what else was deleted leaves the files), saying so. A snapshot
        # taken once this wait is over cannot keep the row (see `_OLDER_SNAPSHOTS`).
        settled = _until(
            cursor, f"SELECT NOT ({_OLDER_SNAPSHOTS})", {"deletion": str(since)}, deadline
        )
        if owned:
            cursor.execute(f"VACUUM (FULL) {owned}")
        for table in through_function:
            cursor.execute(f"SELECT {PURGE_FUNCTION}(%(table)s)", {"table": table})
    except Exception as exc:
        if sqlstate(exc) in BUSY or sqlstate(exc) in _REFUSED:
            return False
        raise
    finally:
        cursor.execute(f"SELECT pg_advisory_unlock({PURGE_LOCK_KEY})")
    return complete and settled
