"""What the store needs from a database engine, and nothing more: the `Dialect` interface.

The rest of the store (the unit of work, the migrations, the change feed) speaks to a `Dialect`
and to dialect-neutral SQL; each engine's module under `store/dialects/` implements it. Full-text
search (history search, issue 16) is a dialect's too: the DDL of a full-text table, how a
substring query is written for it, and how its index is compacted so deleted text leaves it.
"""

from __future__ import annotations

import os
import re
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Protocol

from sqlalchemy.engine import URL, Connection, Engine, RootTransaction
from sqlalchemy.exc import DatabaseError, IntegrityError

from rutter_core.kernel.errors import NotFoundError

TransactionKind = Literal["read", "write", "purge"]
"""`read`: one consistent snapshot that refuses writes. `write`: takes the write lock before
its first statement, so two writers never deadlock halfway through, and is durable once it has
committed. `purge`: a `write` whose commit the dialect may leave to be made durable by what
must follow it before anyone is told it happened: `purge`, then `make_durable` when the purge
did not complete (`Store.purging_write`)."""

PoolKind = Literal["call", "service"]
"""How long the process that opens the store lives, which decides its connection pool: `call`,
one command (the CLI: a connection or two, all closed when the store is); `service`, a long-lived
server (the language server, MCP, HTTP: a bounded pool whose connections are checked before use
and replaced after a while)."""

StoreFailure = Literal["busy", "read_only", "full", "io", "corrupt", "denied"]
"""Why the database could not do its part, when it is a fact about the store rather than about
the statement (an unknown table or a syntax error is a bug, and stays a raw error). `denied`:
the engine refused the connecting role a privilege or a row (row-level security)."""

Grants = Mapping[str, Sequence[str]]
"""The privileges the members' group is given on each table (`Dialect.initialize`)."""

ConstraintKind = Literal["unique", "foreign_key", "append_only", "check", "not_null", "other"]
"""Which kind of rule refused a write: the first three are what a concurrent writer can make a
correct write break (a lost race), the others only a value the code should have refused."""


def local_person() -> str:
    """The operating-system user running rutter: the one person of a store whose engine has no
    roles."""
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_name
    except (ImportError, KeyError):  # no password database (Windows, a bare container uid)
        import getpass

        try:
            return getpass.getuser()
        except Exception:  # no name at all: the uid is who it is
            return f"uid-{os.getuid()}" if hasattr(os, "getuid") else "local-user"


_IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def check_identifier(name: str) -> str:
    """`name`, if it is a plain lowercase SQL identifier (safe to splice into DDL)."""
    if _IDENTIFIER.fullmatch(name) is None:
        raise ValueError(f"not a plain lowercase SQL identifier: {name!r}")
    return name


@dataclass(frozen=True)
class UniqueKey:
    """A key that no two rows of a table share, as an append-only guard must know it.

    `partial` = (column, value) for a key that binds only the rows where that column holds that
    value (a partial unique index, e.g. one root node per run).
    """

    columns: tuple[str, ...]
    partial: tuple[str, str] | None = None

    def __post_init__(self) -> None:
        if not self.columns:
            raise ValueError("a unique key needs at least one column")
        for column in self.columns:
            check_identifier(column)
        if self.partial is not None:
            check_identifier(self.partial[0])
            check_identifier(self.partial[1])  # the value is spliced as a string literal


@dataclass(frozen=True)
class RowOwnership:
    """Rows of `table` that belong to one person: the engine shows and changes them only for
    that person (docs/team.md), where the engine knows people (`Dialect.separates_people`).

    A row is owned when `owned_when` (an SQL condition on the row) holds, and then belongs to
    the person named in `column`; other rows are shared by everyone who may use the store.
    `members`: a person may also see and change the rows of every person whose role they may
    assume (a service that acts for them). `backfill`: the value rows owned before this rule
    existed get (an SQL expression), on an engine that separates people.
    """

    table: str
    column: str
    owned_when: str
    backfill: str | None = None
    members: bool = False

    def __post_init__(self) -> None:
        check_identifier(self.table)
        check_identifier(self.column)


@dataclass(frozen=True)
class RowFollows:
    """Rows of `table` are visible exactly when the row of `parent` with the same `key` is
    (a full-text table's text follows its entry)."""

    table: str
    parent: str
    key: str

    def __post_init__(self) -> None:
        for name in (self.table, self.parent, self.key):
            check_identifier(name)


@dataclass(frozen=True)
class TableSecurity:
    """Row-level security as the engine has it on one table."""

    table: str
    enabled: bool
    forced: bool
    policies: int


@dataclass(frozen=True)
class StoreFacts:
    """What `rutter store check` reads from the engine (docs/team.md). None: the engine has no
    such thing (SQLite has no extensions, row-level security or roles)."""

    encoding: str
    suits_cjk: bool
    role: str
    lc_ctype: str | None = None
    extensions: dict[str, bool] | None = None
    row_security: tuple[TableSecurity, ...] | None = None
    superuser: bool = False
    bypasses_row_security: bool = False
    group_exists: bool | None = None
    member_of_group: bool | None = None
    owns_store: bool | None = None
    """Whether the role owns rutter's tables (the administrator's; None: no roles)."""
    integrity: tuple[str, ...] = ()
    """What the engine's own consistency check found wrong (empty: nothing)."""
    missing_grants: tuple[str, ...] = ()
    """What `initialize` grants the members' group and it lacks, as granted (`SELECT ON t`,
    `EXECUTE ON FUNCTION f(text)`); empty: nothing, or an engine without roles."""


@dataclass(frozen=True)
class InitOutcome:
    """What `rutter store init` did beyond migrating (nothing on an engine without roles)."""

    group: str | None
    group_created: bool
    granted: tuple[str, ...]


class ChangeFeed(Protocol):
    """A cheap counter that moves whenever anyone commits to the store."""

    def version(self) -> int: ...

    def close(self) -> None: ...


class Dialect(ABC):
    """One database engine's answers to what the store needs (docs/reference/store.md)."""

    name: ClassVar[str]
    """The engine's SQLAlchemy backend name, as in the URL's scheme."""

    example_url: ClassVar[str]
    """A URL for messages: what a valid one looks like."""

    read_only_remedy: ClassVar[str] = "give rutter a store it may write to"
    """What to do about `store_read_only`, in this engine's terms."""

    separates_people: ClassVar[bool] = False
    """Whether the engine knows several people (its roles) and keeps their rows apart
    (`RowOwnership`); otherwise the store is one person's."""

    # An engine that does not separate people keeps the defaults: the store is one person's,
    # the operating-system user running rutter, and nobody else may be acted for.

    def person(self, conn: Connection) -> str:
        """Who this connection's transaction acts for: the person its rows are written for."""
        return local_person()

    def act_as(self, conn: Connection, person: str) -> None:
        """Right after `begin`: make the rest of the transaction act for `person` (as the engine
        enforces it), or raise a typed error when this connection may not."""
        self.check_person(conn, person)

    def check_person(self, conn: Connection, person: str) -> None:
        """Raise a typed error unless `person` is someone the store knows."""
        if person != local_person():
            raise NotFoundError(
                "unknown_person",
                f"a {self.name} store is one person's, the operating-system user running "
                "rutter; a store shared between people needs an engine with roles "
                "(docs/team.md)",
                details={"person": person},
            )

    def row_security(
        self, owned: Sequence[RowOwnership], follows: Sequence[RowFollows]
    ) -> tuple[str, ...]:
        """DDL that makes the engine keep owned rows to their person; nothing for an engine
        whose store is one person's."""
        return ()

    @abstractmethod
    def facts(
        self, conn: Connection, *, group: str, secured: Sequence[str], grants: Grants
    ) -> StoreFacts:
        """The engine's facts for `rutter store check`: `group` is the members' role, `secured`
        the tables that should have row-level security, `grants` the privileges `initialize`
        gives the group on each table (`missing_grants` says which it lacks)."""

    def initialize(self, conn: Connection, *, group: str, grants: Grants) -> InitOutcome:
        """For `rutter store init`, inside a write transaction on a migrated store: what an
        engine with roles needs beyond the schema (the members' `group` role and exactly the
        privileges `grants` gives it on each table), idempotently; nothing without roles."""
        return InitOutcome(group=None, group_created=False, granted=())

    @abstractmethod
    def prepare(self, url: URL) -> None:
        """Before the engine exists: e.g. create a missing database file privately. Raises
        `StoreError` when that is impossible."""

    def missing(self, url: URL) -> URL | None:
        """When the database `url` names does not exist yet (opening it would create it): the
        URL of an empty, throwaway database of this engine to read instead, so that a command
        that only reads answers as from an empty store and creates nothing. None when it
        exists, or when opening never creates it (a server's database)."""
        return None

    def absolute(self, url: URL, *, cwd: str) -> URL | None:
        """`url` as any process names the same database with, wherever it starts (a file
        relative to `cwd` made absolute), or None when no other process can reach that
        database (one in memory). A server's database is the same from everywhere."""
        return url

    def pool_options(self, url: URL, pool: PoolKind, *, busy_timeout_ms: int) -> dict[str, Any]:
        """Keyword arguments for the engine's connection pool for a process of kind `pool`
        (none: the engine's own default)."""
        return {}

    @abstractmethod
    def configure(self, engine: Engine, *, busy_timeout_ms: int) -> None:
        """Install what every connection needs (lock wait, integrity settings, journal)."""

    @abstractmethod
    def begin(self, conn: Connection, kind: TransactionKind) -> RootTransaction:
        """Begin a transaction of `kind` on `conn`."""

    @abstractmethod
    def failure(self, exc: DatabaseError) -> StoreFailure | None:
        """Classify a database error; None when it is not a fact about the store."""

    @abstractmethod
    def constraint(self, exc: IntegrityError) -> ConstraintKind:
        """Which kind of rule refused a write."""

    @abstractmethod
    def append_only_guard(self, table: str) -> tuple[str, ...]:
        """DDL that makes `table` refuse every UPDATE and DELETE, from any client."""

    @abstractmethod
    def existing_key_guard(self, table: str, keys: Sequence[UniqueKey]) -> tuple[str, ...]:
        """DDL that makes `table` refuse an INSERT whose key already exists, whatever conflict
        clause it carries (a replace is a delete plus an insert and must not slip past the
        append-only guard)."""

    @abstractmethod
    def rebuild_table(self, table: str, definition: str, columns: Sequence[str]) -> tuple[str, ...]:
        """DDL that replaces `table` by one with the new column `definition`, keeping its rows
        (the table's indexes and triggers are not kept: the migration makes them again)."""

    @abstractmethod
    def suspend_references(self, conn: Connection) -> None:
        """Before a transaction that rebuilds tables: stop checking references on `conn`."""

    @abstractmethod
    def restore_references(self, conn: Connection) -> None:
        """After it (committed or not): check references on `conn` again."""

    @abstractmethod
    def dangling_references(self, conn: Connection) -> int:
        """How many rows refer to a row that does not exist (checked before such a commit)."""

    @abstractmethod
    def lift_delete_guards(self, conn: Connection, tables: Sequence[str]) -> tuple[str, ...]:
        """Inside the caller's write transaction, remove the guards refusing DELETE on `tables`
        and return the statements that put them back exactly as the store had them. Only a
        workspace removal with `--cascade` uses it, and puts them back before it commits: a
        failure in between rolls the removal and the lifting back together."""

    def purge_mark(self, conn: Connection) -> int | None:
        """Inside a purging write, once it has written: what `purge` is given (`since`) to tell
        whether what this write removed can have been left behind (an engine's transaction
        ID); None when the engine needs nothing."""
        return None

    @abstractmethod
    def purge(self, engine: Engine, *, since: int | None = None) -> bool:
        """Make sure content deleted by committed transactions is left in none of the store's
        files, and that those transactions are durable; False when something (a long reader)
        kept that from completing, and a later purge will finish the job. A `StoreError` says
        the transactions are durable but the removal could not be made so (a failed sync).
        `since`: the `purge_mark` of the write whose removal this purge completes; None: every
        write committed before the purge began."""

    def purge_function(self) -> tuple[str, ...]:
        """DDL that lets a person who owns none of the store's tables have them rewritten by
        `purge` (a function run as their owner, for an engine whose rewrite needs the owner);
        nothing for an engine whose store is one person's."""
        return ()

    @abstractmethod
    def make_durable(self, engine: Engine) -> None:
        """Make every committed transaction durable, a `purge` one included (after a purge
        that did not complete). Raises `StoreError` when the store cannot say it is."""

    @abstractmethod
    def full_text_table(self, table: str) -> tuple[str, ...]:
        """DDL of a full-text table `table` with one searchable column `body` and an integer
        key the caller chooses (`full_text_key`), matching substrings case-insensitively."""

    @abstractmethod
    def full_text_key(self) -> str:
        """The column name of a full-text table's integer key."""

    @abstractmethod
    def full_text_min_query(self) -> int:
        """The shortest query (in characters) the full-text index can answer; shorter ones are
        the caller's bounded scan."""

    @abstractmethod
    def full_text_match(self, table: str, query: str) -> tuple[str, str]:
        """A WHERE fragment with one `:fts_query` parameter matching rows of `table` whose body
        holds `query` as a substring (case-insensitive), and the value to bind to it."""

    @abstractmethod
    def full_text_rebuild(self, table: str) -> tuple[str, ...]:
        """Statements that rewrite `table`'s index from its rows alone, so that no text of a
        deleted row remains in its pages (the freed pages are overwritten per the store's
        secure-delete setting) and an index the engine reports damaged is whole again."""

    @abstractmethod
    def full_text_repair(self, table: str) -> tuple[str, ...]:
        """Statements that make `table`'s index whole again even when the engine can no longer
        open it, rebuilt from its rows (a migration's `full_text_rebuilds`)."""

    @abstractmethod
    def full_text_split(self, table: str, shards: Sequence[str]) -> tuple[str, ...]:
        """Statements that move every row of the full-text table `table` into the existing
        full-text tables `shards` (the row with key k into `shards[k % len(shards)]`, key kept)
        and then drop `table` with its index (a migration's `full_text_splits`)."""

    def full_text_walk(self) -> tuple[int, int]:
        """(first, most): a search first examines the newest `first` rows below its cursor in
        key order, each filtered by `full_text_match` (a dialect that walks writes that
        fragment so it also applies to rows read that way, named by their alias), and walks on
        while the hits found so far say the page fills within `most` rows in all; the index
        answers for the older rows. (0, 0), the default: never, the index itself answers in
        key order."""
        return (0, 0)

    def full_text_join(self) -> str:
        """The join keyword for a full-text table and the entries it indexes, written so that
        the engine loops over the left-hand table (the index's hits) first."""
        return "JOIN"

    def full_text_compact(self, conn: Connection, table: str) -> None:
        """Rewrite `table`'s index (`full_text_rebuild`) inside the caller's transaction."""
        for statement in self.full_text_rebuild(table):
            conn.exec_driver_sql(statement)

    def change_feed(self, engine: Engine) -> ChangeFeed | None:
        """A change counter, or None when the engine has none (callers then re-read)."""
        return None
