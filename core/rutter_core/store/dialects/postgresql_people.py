"""PostgreSQL's people (docs/team.md): a person is a role; the rows that are one person's are
kept to that role by row-level security, forced on the tables' owner too; a transaction acts
for a person by taking that role (`SET LOCAL ROLE`, as `set_config`); `rutter store init`
makes the members' group role and exactly its grants (the functions a member runs as the
tables' owner among them: the full-text reindex here, the purge's in `postgresql_purge`), and
`rutter store check` reads the catalog. The rest of the dialect is `postgresql`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError

from rutter_core.kernel.errors import NotFoundError, RejectedError
from rutter_core.store.dialects.base import (
    InitOutcome,
    RowFollows,
    RowOwnership,
    StoreFacts,
    TableSecurity,
    check_identifier,
)
from rutter_core.store.dialects.postgresql_codes import sqlstate
from rutter_core.store.dialects.postgresql_purge import PURGE_FUNCTION

REINDEX_FUNCTION = "rutter_reindex_text"
"""Rewrites one of rutter's full-text indexes as the tables' owner (SECURITY DEFINER): REINDEX
needs the owner, and a person editing a memory is a member of the store's group, never its
owner (an owner could switch row-level security off)."""

_TEXT_TABLES = "^history_(memory_)?text(_[0-9][0-9])?$"
"""The only tables `REINDEX_FUNCTION` rewrites (rutter's full-text tables)."""

_MEMBER_OF = "(SELECT rolname FROM pg_roles WHERE pg_has_role(current_user, oid, 'MEMBER'))"
"""The roles the current role may act as (itself included); a role dropped since is in none."""


def suits_search(encoding: str, ctype: str) -> bool:
    """UTF-8 with a character-class locale in which letters beyond ASCII have a case and CJK
    characters count as letters (not C or POSIX)."""
    return encoding.upper() in ("UTF8", "UTF-8") and ctype.upper() not in ("C", "POSIX")


def _unknown_person(person: str) -> NotFoundError:
    return NotFoundError(
        "unknown_person",
        "the store has no such person (a PostgreSQL role): its administrator creates one with "
        "CREATE ROLE name LOGIN IN ROLE the members' group, see docs/team.md",
        details={"person": person},
    )


def person(conn: Connection) -> str:
    return str(conn.exec_driver_sql("SELECT current_user").scalar_one())


_SESSION_ROLE = "rutter_session_role"
"""Key of `session_role`'s answer in the pool's record of a database connection."""


def session_role(conn: Connection) -> str:
    """The role each transaction on `conn`'s database connection starts as (its login role,
    or the one the role's settings give), asked once per database connection: only a SET ROLE
    for the whole session could change it, and the store never sends one."""
    info = conn.connection.info  # kept with the database connection across checkouts
    role = info.get(_SESSION_ROLE)
    if role is None:
        role = info[_SESSION_ROLE] = person(conn)
    return str(role)


def act_as(conn: Connection, person: str) -> None:
    if person == session_role(conn):
        # The transaction is that role already (a bearer of the service's own role): taking
        # it again would be a round trip for nothing.
        return
    # set_config('role', ..., true) is SET LOCAL ROLE with the name as a value (never
    # spliced into SQL): the rest of the transaction runs as that role, so its row-level
    # security policies apply, and the role is the login role's again at its end.
    try:
        conn.exec_driver_sql("SELECT set_config('role', %(person)s, true)", {"person": person})
    except DBAPIError as exc:
        code = sqlstate(exc)
        if code in ("22023", "42704"):
            raise _unknown_person(person) from exc
        if code == "42501":
            raise RejectedError(
                "person_not_allowed",
                "the store's connecting role may not act as this person: grant the "
                "person's role to it (GRANT person TO service_role), see docs/team.md",
                details={"person": person},
            ) from exc
        raise


def check_person(conn: Connection, person: str) -> None:
    found = conn.exec_driver_sql(
        "SELECT 1 FROM pg_roles WHERE rolname = %(person)s", {"person": person}
    ).scalar_one_or_none()
    if found is None:
        raise _unknown_person(person)


def row_security(owned: Sequence[RowOwnership], follows: Sequence[RowFollows]) -> tuple[str, ...]:
    # FORCE: the tables' owner is held to the policies too (only superusers and roles
    # with BYPASSRLS are not; `rutter store check` reports a role that is either).
    statements: list[str] = []
    for rule in owned:
        table, column = rule.table, rule.column
        if rule.backfill is not None:
            statements.append(
                f"UPDATE {table} SET {column} = {rule.backfill} "
                f"WHERE {column} IS NULL AND ({rule.owned_when})"
            )
        mine = f"{column} = current_user"
        if rule.members:
            mine = f"({mine} OR {column} IN {_MEMBER_OF})"
        condition = f"(NOT ({rule.owned_when}) OR {mine})"
        statements += [
            f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY",
            f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY",
            f"CREATE POLICY {table}_people ON {table} USING {condition} WITH CHECK {condition}",
        ]
    for follow in follows:
        table = follow.table
        condition = (
            f"(EXISTS (SELECT 1 FROM {follow.parent} AS parent "
            f"WHERE parent.{follow.key} = {table}.{follow.key}))"
        )
        statements += [
            f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY",
            f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY",
            f"CREATE POLICY {table}_people ON {table} USING {condition} WITH CHECK {condition}",
        ]
    statements.append(
        f"CREATE OR REPLACE FUNCTION {REINDEX_FUNCTION}(name text) RETURNS void "
        "LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$ BEGIN "
        f"IF name !~ '{_TEXT_TABLES}' THEN RAISE EXCEPTION 'not a full-text table of "
        "rutter'; END IF; EXECUTE 'REINDEX TABLE ' || quote_ident(name); END $$"
    )
    statements.append(f"REVOKE ALL ON FUNCTION {REINDEX_FUNCTION}(text) FROM PUBLIC")
    return tuple(statements)


FUNCTIONS: tuple[str, ...] = (f"{REINDEX_FUNCTION}(text)", f"{PURGE_FUNCTION}(text)")
"""The functions members run as the tables' owner (`EXECUTE` granted to the group only)."""


def _missing_grants(
    conn: Connection, group: str, grants: Mapping[str, Sequence[str]]
) -> tuple[str, ...]:
    """What `initialize` grants `group` and it lacks, worded as granted (objects that do not
    exist yet, on a schema behind, are left to `schema_behind`)."""
    missing: list[str] = []
    schema, usage = conn.exec_driver_sql(
        "SELECT quote_ident(current_schema()), "
        "has_schema_privilege(%(group)s, current_schema(), 'USAGE')",
        {"group": group},
    ).one()
    if not usage:
        missing.append(f"USAGE ON SCHEMA {schema}")
    for table, allowed in grants.items():
        lacking = conn.exec_driver_sql(
            "SELECT privilege FROM unnest(%(privileges)s::text[]) AS privilege "
            "WHERE to_regclass(%(table)s) IS NOT NULL "
            "AND NOT has_table_privilege(%(group)s, to_regclass(%(table)s), privilege)",
            {"group": group, "table": check_identifier(table), "privileges": list(allowed)},
        ).all()
        if lacking:
            missing.append(f"{', '.join(str(row[0]) for row in lacking)} ON {table}")
    for function in FUNCTIONS:
        executable = conn.exec_driver_sql(
            "SELECT has_function_privilege(%(group)s, to_regprocedure(%(function)s), 'EXECUTE') "
            "WHERE to_regprocedure(%(function)s) IS NOT NULL",
            {"group": group, "function": function},
        ).scalar_one_or_none()
        if executable is False:
            missing.append(f"EXECUTE ON FUNCTION {function}")
    return tuple(missing)


def facts(
    conn: Connection,
    *,
    group: str,
    secured: Sequence[str],
    grants: Mapping[str, Sequence[str]],
) -> StoreFacts:
    encoding, ctype, role = conn.exec_driver_sql(
        "SELECT current_setting('server_encoding'), current_setting('lc_ctype'), current_user"
    ).one()
    superuser, bypass = conn.exec_driver_sql(
        "SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user"
    ).one()
    trigram = conn.exec_driver_sql(
        "SELECT count(*) FROM pg_extension WHERE extname = 'pg_trgm'"
    ).scalar_one()
    security = []
    for table in secured:
        row = conn.exec_driver_sql(
            "SELECT c.relrowsecurity, c.relforcerowsecurity, "
            "(SELECT count(*) FROM pg_policy AS p WHERE p.polrelid = c.oid) "
            "FROM pg_class AS c WHERE c.oid = to_regclass(%(table)s)",
            {"table": table},
        ).first()
        security.append(
            TableSecurity(table, False, False, 0)
            if row is None
            else TableSecurity(table, bool(row[0]), bool(row[1]), int(row[2]))
        )
    group_oid = conn.exec_driver_sql(
        "SELECT oid FROM pg_roles WHERE rolname = %(group)s", {"group": group}
    ).scalar_one_or_none()
    member = None
    if group_oid is not None:
        member = bool(
            conn.exec_driver_sql(
                "SELECT pg_has_role(current_user, %(oid)s, 'MEMBER')", {"oid": group_oid}
            ).scalar_one()
        )
    owns = conn.exec_driver_sql(
        "SELECT pg_has_role(current_user, relowner, 'USAGE') FROM pg_class "
        "WHERE oid = to_regclass('memories')"
    ).scalar_one_or_none()
    return StoreFacts(
        owns_store=None if owns is None else bool(owns),
        encoding=str(encoding),
        lc_ctype=str(ctype),
        suits_cjk=suits_search(str(encoding), str(ctype)),
        extensions={"pg_trgm": bool(trigram)},
        row_security=tuple(security),
        role=str(role),
        superuser=bool(superuser),
        bypasses_row_security=bool(bypass),
        group_exists=group_oid is not None,
        member_of_group=member,
        missing_grants=() if group_oid is None else _missing_grants(conn, group, grants),
        integrity=(),
    )


def initialize(conn: Connection, *, group: str, grants: Mapping[str, Sequence[str]]) -> InitOutcome:
    check_identifier(group)
    conn.exec_driver_sql("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    exists = conn.exec_driver_sql(
        "SELECT 1 FROM pg_roles WHERE rolname = %(group)s", {"group": group}
    ).scalar_one_or_none()
    if exists is None:
        # NOLOGIN: a group, never a person; people are roles granted membership in it.
        conn.exec_driver_sql(f"CREATE ROLE {group} NOLOGIN")
    schema = str(conn.exec_driver_sql("SELECT quote_ident(current_schema())").scalar_one())
    granted = [f"USAGE ON SCHEMA {schema}"]
    conn.exec_driver_sql(f"GRANT USAGE ON SCHEMA {schema} TO {group}")
    for table, allowed in grants.items():
        check_identifier(table)
        # Exactly these privileges, whatever was granted before (no TRUNCATE, REFERENCES
        # or TRIGGER: a member could otherwise empty or alter a table past its guards).
        privileges = ", ".join(allowed)
        conn.exec_driver_sql(f"REVOKE ALL ON TABLE {table} FROM {group}")
        conn.exec_driver_sql(f"GRANT {privileges} ON TABLE {table} TO {group}")
        granted.append(f"{privileges} ON {table}")
    for function in FUNCTIONS:
        conn.exec_driver_sql(f"GRANT EXECUTE ON FUNCTION {function} TO {group}")
        granted.append(f"EXECUTE ON FUNCTION {function}")
    return InitOutcome(group=group, group_created=exists is None, granted=tuple(granted))
