"""`rutter store init` and `rutter store check`: preparing a store for its people and saying what
state it is in (docs/team.md). Engine facts come from the dialect (`Dialect.facts`,
`Dialect.initialize`); what they mean, and the documents, are here, the same on every engine.

`init` is for an administrator: the schema (the migrations, applied when the store was opened),
then on an engine with roles the `pg_trgm` extension, the members' group role and exactly the
grants members need; the row-level security policies come with the schema (migration 17), so
no store is ever without them. Running it again changes nothing that is already right.

`check` never changes the store (it opens it without migrating): the engine, the schema's
version against the code's, the extensions, whether the text settings suit CJK search, the
row-level security of the tables that hold one person's rows, and the connecting role. Each
thing wrong is a problem with a stable code; a fact that weakens what the store promises but
is a legitimate set-up (an administrator's role that bypasses row-level security) is a warning.
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import inspect, select

from rutter_core.kernel.errors import RutterError, UsageError
from rutter_core.store.dialects import StoreFacts
from rutter_core.store.dialects.base import check_identifier
from rutter_core.store.engine import Store
from rutter_core.store.migrations import MIGRATIONS, migration_checksum
from rutter_core.store.migrations.m0017_people import FOLLOWS, OWNED
from rutter_core.store.schema import full_text_tables, metadata, schema_migrations

DEFAULT_GROUP: Final = "rutter_member"
"""The members' group role `rutter store init` makes unless told another name."""

SECURED_TABLES: Final[tuple[str, ...]] = tuple(
    [rule.table for rule in OWNED] + [rule.table for rule in FOLLOWS]
)
"""The tables whose rows the engine keeps to their person (where it knows people)."""


class StoreDocument(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class SchemaState(StoreDocument):
    version: int | None = Field(description="the newest migration the store has (null: none)")
    code_version: int = Field(description="the newest migration this rutter knows")
    pending: tuple[int, ...] = Field(description="migrations this rutter would still apply")
    unknown: tuple[int, ...] = Field(description="migrations the store has and rutter does not")
    altered: tuple[int, ...] = Field(description="migrations whose recorded checksum differs")


class TextSettings(StoreDocument):
    encoding: str
    lc_ctype: str | None = Field(
        description="the database's character classes (null: the engine has no locale)"
    )
    suits_cjk: bool = Field(description="CJK characters count as letters for search")


class TableSecurityState(StoreDocument):
    table: str
    enabled: bool
    forced: bool = Field(description="the tables' owner is held to the policies too")
    policies: int


class RoleState(StoreDocument):
    name: str = Field(
        description="the connecting role (an engine without roles: the operating-system user)"
    )
    superuser: bool
    bypasses_row_security: bool
    group: str | None = Field(description="the members' group role (null: an engine without roles)")
    group_exists: bool | None
    member_of_group: bool | None
    owns_store: bool | None = Field(
        description="the role owns rutter's tables (the administrator's; null: no roles)"
    )


class StoreProblem(StoreDocument):
    code: str
    message: str


class StoreCheck(StoreDocument):
    """`rutter store check`: the store's state; `ok` when `problems` is empty."""

    protocol_version: str = "store_check.v1"
    engine: str
    store: str = Field(description="the store's URL, without any password")
    ok: bool
    schema_state: SchemaState = Field(alias="schema")
    text: TextSettings | None = Field(description="null when the store could not be read")
    extensions: dict[str, bool] | None = Field(description="null: the engine has none")
    row_security: tuple[TableSecurityState, ...] | None = Field(
        description="null: the engine has none (its store is one person's)"
    )
    role: RoleState | None
    integrity: tuple[str, ...] = Field(description="what the engine's own check found wrong")
    problems: tuple[StoreProblem, ...]
    warnings: tuple[StoreProblem, ...]

    model_config = ConfigDict(
        extra="forbid", frozen=True, validate_by_name=True, serialize_by_alias=True
    )


class StoreInit(StoreDocument):
    """`rutter store init`: what the store has now (nothing is made twice)."""

    protocol_version: str = "store_init.v1"
    engine: str
    store: str
    schema_version: int
    group: str | None = Field(description="the members' group role (null: an engine without roles)")
    group_created: bool = Field(description="made by this run (false: it existed)")
    granted: tuple[str, ...] = Field(description="the group's privileges, as granted")
    row_security: tuple[str, ...] = Field(
        description="the tables whose rows the engine keeps to their person (empty: its "
        "store is one person's)"
    )


def _group(name: str) -> str:
    try:
        return check_identifier(name)
    except ValueError:
        raise UsageError(
            "invalid_group",
            "the group role's name is a plain lowercase SQL identifier (letters, digits and "
            "underscores, at most 63, not starting with a digit)",
        ) from None


_READ_WRITE: Final = ("SELECT", "INSERT", "UPDATE", "DELETE")
_APPEND: Final = ("SELECT", "INSERT")


def _grants() -> dict[str, tuple[str, ...]]:
    """Exactly what members need on each table: the ledger read only (migrating is the
    administrator's), append-only tables read and added to (their guards refuse the rest;
    removing a workspace with its history is the administrator's), the others read and
    written."""
    grants: dict[str, tuple[str, ...]] = {}
    for name, table in sorted(metadata.tables.items()):
        if name == schema_migrations.name:
            grants[name] = ("SELECT",)
        else:
            grants[name] = _APPEND if table.info.get("append_only") else _READ_WRITE
    for name in full_text_tables:
        grants[name] = _READ_WRITE
    return grants


def initialize(store: Store, *, group: str = DEFAULT_GROUP) -> StoreInit:
    """Prepare a migrated store for its members (idempotent)."""
    _group(group)
    with store.write() as conn:
        outcome = store.dialect.initialize(conn, group=group, grants=_grants())
    with store.read() as conn:
        version = conn.execute(
            select(schema_migrations.c.version).order_by(schema_migrations.c.version.desc())
        ).scalar()
    separated = store.dialect.separates_people
    return StoreInit(
        engine=store.dialect.name,
        store=store.missing or store.display_url,
        schema_version=int(version or 0),
        group=outcome.group,
        group_created=outcome.group_created,
        granted=outcome.granted,
        row_security=SECURED_TABLES if separated else (),
    )


def _schema(conn: Any, store: Store) -> SchemaState:
    known = {m.version: m for m in MIGRATIONS}
    code_version = MIGRATIONS[-1].version
    if schema_migrations.name not in set(inspect(conn).get_table_names()):
        return SchemaState(
            version=None,
            code_version=code_version,
            pending=tuple(known),
            unknown=(),
            altered=(),
        )
    rows = conn.execute(select(schema_migrations.c.version, schema_migrations.c.checksum)).all()
    applied = {int(row[0]): str(row[1]) for row in rows}
    altered = tuple(
        version
        for version, checksum in sorted(applied.items())
        if version in known and checksum != migration_checksum(known[version], store.dialect)
    )
    return SchemaState(
        version=max(applied) if applied else None,
        code_version=code_version,
        pending=tuple(v for v in known if v not in applied),
        unknown=tuple(v for v in sorted(applied) if v not in known),
        altered=altered,
    )


def _schema_problems(schema: SchemaState) -> list[StoreProblem]:
    problems = []
    if schema.version is None:
        problems.append(
            StoreProblem(
                code="schema_missing",
                message="the store has no rutter schema: run `rutter store init`",
            )
        )
    elif schema.pending:
        problems.append(
            StoreProblem(
                code="schema_behind",
                message=f"the store's schema is at migration {schema.version}, this rutter's at "
                f"{schema.code_version}: run `rutter store init` (as the administrator)",
            )
        )
    if schema.unknown:
        problems.append(
            StoreProblem(
                code="schema_ahead",
                message="the store has migrations this rutter does not know: upgrade rutter",
            )
        )
    if schema.altered:
        problems.append(
            StoreProblem(
                code="migration_checksum_mismatch",
                message="migrations recorded in the store differ from this rutter's: "
                + ", ".join(str(v) for v in schema.altered)
                + " (edited after release): use the rutter release that applied them, or "
                "restore their original statements",
            )
        )
    return problems


def _fact_problems(
    facts: StoreFacts, schema: SchemaState, separated: bool
) -> tuple[list[StoreProblem], list[StoreProblem]]:
    problems: list[StoreProblem] = []
    warnings: list[StoreProblem] = []
    if not facts.suits_cjk:
        problems.append(
            StoreProblem(
                code="locale_unsuitable",
                message=f"the database's text settings (encoding {facts.encoding}, LC_CTYPE "
                f"{facts.lc_ctype}) make CJK characters no letters: create it with UTF8 and a "
                "UTF-8 LC_CTYPE such as C.UTF-8",
            )
        )
    for name, present in (facts.extensions or {}).items():
        if not present:
            problems.append(
                StoreProblem(
                    code="extension_missing",
                    message=f"the extension {name} is missing: history search needs it; run "
                    "`rutter store init` (or CREATE EXTENSION as the database's owner)",
                )
            )
    if facts.integrity:
        problems.append(
            StoreProblem(
                code="integrity_failed",
                message="the engine's consistency check found damage: restore from a backup",
            )
        )
    if not separated:
        return problems, warnings
    if schema.version is not None and not schema.pending:
        unsecured = [
            t.table for t in facts.row_security or () if not (t.enabled and t.forced and t.policies)
        ]
        if unsecured:
            problems.append(
                StoreProblem(
                    code="row_security_missing",
                    message="row-level security is not enabled, forced and given its policy "
                    "on: " + ", ".join(unsecured),
                )
            )
    if facts.group_exists is False:
        problems.append(
            StoreProblem(
                code="group_missing",
                message="the members' group role does not exist: run `rutter store init`",
            )
        )
    elif facts.member_of_group is False and not facts.owns_store:
        problems.append(
            StoreProblem(
                code="not_a_member",
                message=f"the role {facts.role} is not a member of the group role: the "
                "administrator grants it (GRANT group TO role)",
            )
        )
    if facts.missing_grants:
        problems.append(
            StoreProblem(
                code="grant_missing",
                message="the members' group role lacks "
                + "; ".join(facts.missing_grants)
                + ": run `rutter store init` (as the administrator)",
            )
        )
    if facts.superuser or facts.bypasses_row_security:
        warnings.append(
            StoreProblem(
                code="row_security_bypassed",
                message=f"the role {facts.role} bypasses row-level security (superuser or "
                "BYPASSRLS): it sees every person's user memories and bearers; people should "
                "connect as their own roles",
            )
        )
    return problems, warnings


def check(store: Store, *, group: str = DEFAULT_GROUP) -> StoreCheck:
    """The store's state (it is opened without migrating, and nothing is changed)."""
    _group(group)
    separated = store.dialect.separates_people
    try:
        with store.read() as conn:
            facts = store.dialect.facts(conn, group=group, secured=SECURED_TABLES, grants=_grants())
    except RutterError as error:
        if error.code != "unsupported_database":
            raise
        # The engine's text settings refuse every connection: that is the finding.
        return StoreCheck(
            engine=store.dialect.name,
            store=store.missing or store.display_url,
            ok=False,
            schema_state=SchemaState(
                version=None,
                code_version=MIGRATIONS[-1].version,
                pending=(),
                unknown=(),
                altered=(),
            ),
            text=None,
            extensions=None,
            row_security=None,
            role=None,
            integrity=(),
            problems=(StoreProblem(code="locale_unsuitable", message=error.message),),
            warnings=(),
        )
    unreadable = False
    try:
        with store.read() as conn:
            schema = _schema(conn, store)
    except RutterError as error:
        if error.code != "store_permission_denied":
            raise
        # A role outside the group may not read the ledger: what it is told is why.
        unreadable = True
        schema = SchemaState(
            version=None, code_version=MIGRATIONS[-1].version, pending=(), unknown=(), altered=()
        )
    problems = [] if unreadable else _schema_problems(schema)
    more, warnings = _fact_problems(facts, schema, separated)
    problems += more
    if unreadable and not any(p.code in ("not_a_member", "group_missing") for p in problems):
        problems.append(
            StoreProblem(
                code="schema_unreadable",
                message=f"the role {facts.role} may not read the store's schema ledger: the "
                "administrator grants the group role (`rutter store init`)",
            )
        )
    return StoreCheck(
        engine=store.dialect.name,
        store=store.missing or store.display_url,
        ok=not problems,
        schema_state=schema,
        text=TextSettings(
            encoding=facts.encoding, lc_ctype=facts.lc_ctype, suits_cjk=facts.suits_cjk
        ),
        extensions=facts.extensions,
        row_security=None
        if facts.row_security is None
        else tuple(
            TableSecurityState(
                table=t.table, enabled=t.enabled, forced=t.forced, policies=t.policies
            )
            for t in facts.row_security
        ),
        role=RoleState(
            name=facts.role,
            superuser=facts.superuser,
            bypasses_row_security=facts.bypasses_row_security,
            group=group if separated else None,
            group_exists=facts.group_exists,
            member_of_group=facts.member_of_group,
            owns_store=facts.owns_store,
        ),
        integrity=facts.integrity,
        problems=tuple(problems),
        warnings=tuple(warnings),
    )


__all__ = [
    "DEFAULT_GROUP",
    "SECURED_TABLES",
    "RoleState",
    "SchemaState",
    "StoreCheck",
    "StoreInit",
    "StoreProblem",
    "TableSecurityState",
    "TextSettings",
    "check",
    "initialize",
]
