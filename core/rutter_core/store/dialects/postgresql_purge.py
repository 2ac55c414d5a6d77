"""PostgreSQL's purge (docs/team.md): after a deletion, each of rutter's tables is written into
new files, its indexes and TOAST data with it, and the old files are removed, so a deleted row's
text is in no table file (plain VACUUM only marks its space free).

Rewriting a table needs its owner, the administrator's role. The owner runs `VACUUM (FULL)` on
the tables at once (each rewritten in a transaction of its own). A member owns nothing: rutter
calls `rutter_purge_table(name)` for each table, a SECURITY DEFINER function owned by the
administrator (made by migration 23, `EXECUTE` granted to the members' group by `rutter store
init`) that runs `CLUSTER table USING` its primary key, the one full rewrite PostgreSQL allows
inside a function (VACUUM runs in no transaction). `CLUSTER` writes the table, its TOAST data
and every index into new files as `VACUUM FULL` does (it sorts the rows by the key as well),
under the same lock (ACCESS EXCLUSIVE, while that table is rewritten) and leaves the same dead
rows behind: only those no open snapshot may still see. The function rewrites a table of the
store's schema owned by its own owner and nothing else.

One purge at a time: a purge holds an advisory lock (`PURGE_LOCK_KEY`) for its session, and the
function takes it for its transaction too (a session that holds it already is granted it at
once), so a call made outside rutter waits for a purge as well. rutter waits for it by trying
again and again (`pg_try_advisory_lock`) rather than in one statement: a statement waiting holds
a snapshot, and a snapshot older than a deletion makes the purge under way copy the deleted
row into the new file (tested: it keeps the row while a waiter's snapshot is older). A lock
held by a reader past lock_timeout (or a statement past statement_timeout) leaves the purge
incomplete (False): the next purge finishes the job.
"""

from __future__ import annotations

import time
from typing import Any

PURGE_LOCK_KEY = 0x72757474_6572_0002
"""The advisory lock a purge holds (one purge at a time: two would wait on each other's
tables): "rutter" in ASCII, then 2 (the store's write lock is 1)."""

PURGE_FUNCTION = "rutter_purge_table"
"""Rewrites one of rutter's tables as their owner (SECURITY DEFINER), for a member."""

PURGE_REFUSED_SQLSTATE = "42R01"
"""What `PURGE_FUNCTION` raises for a name that is not one of rutter's tables (or a table
without a primary key): a code of rutter's own in the class of access rule violations, told by
its code; its message never repeats the name."""

_BUSY = ("55P03", "57014")  # lock_not_available (lock_timeout), query_canceled (timeout)

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


def _sqlstate(exc: BaseException) -> str | None:
    code = getattr(exc, "sqlstate", None)
    return code if isinstance(code, str) else None


_FIRST_TRY_SECONDS = 0.005
_LAST_TRY_SECONDS = 0.1
"""How long a purge waits between two tries for the purge lock: doubled from the first up to
the last (a purge takes a fraction of a second to seconds)."""


def _take_purge_lock(cursor: Any) -> bool:
    """Take the purge lock for the session, trying until the session's lock_timeout has passed
    (False then); no statement of it waits, so the waiting session holds no snapshot."""
    cursor.execute("SELECT setting::bigint FROM pg_settings WHERE name = 'lock_timeout'")
    row = cursor.fetchone()
    timeout_ms = int(row[0]) if row is not None else 0
    deadline = None if timeout_ms <= 0 else time.monotonic() + timeout_ms / 1000
    pause = _FIRST_TRY_SECONDS
    while True:
        cursor.execute(f"SELECT pg_try_advisory_lock({PURGE_LOCK_KEY})")
        taken = cursor.fetchone()
        if taken is not None and bool(taken[0]):
            return True
        if deadline is not None and time.monotonic() >= deadline:
            return False
        time.sleep(pause)
        pause = min(pause * 2, _LAST_TRY_SECONDS)


def purge(cursor: Any) -> bool:
    """Rewrite every table of the store's schema on `cursor` (a psycopg cursor in autocommit:
    VACUUM runs in no transaction, and each function call is a transaction of its own); False
    when a table could not be rewritten (a lock held past lock_timeout, a table this role
    cannot have rewritten)."""
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
        if not _take_purge_lock(cursor):
            return False
    except Exception as exc:
        if _sqlstate(exc) in _BUSY:
            return False
        raise
    try:
        if owned:
            cursor.execute(f"VACUUM (FULL) {owned}")
        for table in through_function:
            cursor.execute(f"SELECT {PURGE_FUNCTION}(%(table)s)", {"table": table})
    except Exception as exc:
        if _sqlstate(exc) in _BUSY or _sqlstate(exc) in _REFUSED:
            return False
        raise
    finally:
        cursor.execute(f"SELECT pg_advisory_unlock({PURGE_LOCK_KEY})")
    return complete
