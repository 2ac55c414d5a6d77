"""Migration 17: people (docs/team.md). Released: never edit it.

User-scope memory and HTTP bearers belong to a person: on PostgreSQL the database role, on
SQLite the operating-system user (the store is one person's).

- `memories.owner`: the person whose user memory it is (null for project memory, shared by
  everyone who may use the store; null also for a user memory written before this migration on
  SQLite, the store's one person's). `created_by_person` / `updated_by_person`: who made the
  memory and who changed it last, beside the surface (`created_by`, `updated_by`).
- `http_tokens.owner`: the person a bearer acts for; `created_by_person`: who made it.
- `context_assemblies.created_by_person`: who assembled a run's context (the audit), beside the
  surface.
- `history_entries.person`: the owner of a user memory's index entry, so that the index keeps
  it to that person as the memory is.

On PostgreSQL, rows existing before are given to the role that applies this migration (the one
role that used the store until now), and row-level security, forced on the tables' owner too,
makes the engine show and change a user memory, its index entry and text, and a bearer only to
its person (a bearer also to a role that may act as that person: the HTTP service). The
dialect renders that (`Dialect.row_security`); SQLite renders nothing.
"""

from rutter_core.store.dialects import RowFollows, RowOwnership
from rutter_core.store.migrations.m0012_memory_index_shards import SHARDS
from rutter_core.store.migrations.migration import Migration

_PERSON = "TEXT CHECK ({column} IS NULL OR length({column}) BETWEEN 1 AND 256)"


def person_column(table: str, column: str) -> str:
    """The statement adding a person's column `column` to `table` (migration 21's too)."""
    return f"ALTER TABLE {table} ADD COLUMN {column} {_PERSON.format(column=column)}"


OWNED: tuple[RowOwnership, ...] = (
    RowOwnership("memories", "owner", "scope = 'user'", backfill="current_user"),
    RowOwnership(
        "history_entries",
        "person",
        "source_kind = 'memory' AND owner_id = 'local-user'",
        backfill=(
            "(SELECT m.owner FROM memories AS m WHERE m.memory_id = history_entries.source_id "
            "AND m.scope = 'user')"
        ),
    ),
    RowOwnership("http_tokens", "owner", "true", backfill="current_user", members=True),
)
"""The rows that are one person's."""

FOLLOWS: tuple[RowFollows, ...] = tuple(
    RowFollows(shard, "history_entries", "entry_id") for shard in SHARDS
)
"""A memory's indexed text is visible exactly when its index entry is."""

MIGRATION = Migration(
    17,
    "people",
    (
        person_column("memories", "owner"),
        person_column("memories", "created_by_person"),
        person_column("memories", "updated_by_person"),
        person_column("http_tokens", "owner"),
        person_column("http_tokens", "created_by_person"),
        person_column("context_assemblies", "created_by_person"),
        person_column("history_entries", "person"),
    ),
    row_owners=OWNED,
    row_follows=FOLLOWS,
)
