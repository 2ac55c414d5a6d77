"""Migration 21: every audit and actor field records who (docs/team.md "People"). Numbered 21
so that it cannot collide with the migrations of work done beside it; it depends on none after
17. Released: never edit it.

Migration 17 named the person (on PostgreSQL the database role a transaction acts as, on SQLite
the operating-system user) beside the surface (`cli`, `lsp`, `mcp`, `http_control`, ...) on
memories, bearers and assembly audits. This one does it for every other record that names an
actor: beside each such column, a `*_person` column of the same name with `_person` added.

- `missions`, `threads`, `sessions`, `continuity_nodes` (checkpoints and branch markers),
  `transcript_imports`, `branch_operations`, `checkpoint_deliveries`, `delivery_reports`,
  `compactions`: `created_by_person`.
- `runs`, `notes`, `pins`: `created_by_person`, `updated_by_person`.
- `run_instruction_snapshots`: `confirmed_by_person`.
- `pin_proposals`: `proposed_by_person`, `answered_by_person`.
- `context_assembly_reports`: `reported_by_person`.
- `memory_candidates`: `reviewed_by_person`.
- `messages`: `source_person`, beside the surface that received the message (`source`: `cli`,
  `mcp`, `import:<agent>`, ...): whose session it was added or imported in.

Every column is nullable and left null on the rows a store held before: who wrote them was not
recorded, and is shown as unknown (unlike migration 17, nothing is given to the migrating role:
these rows are no one's property, only a record, and a guess would be a false one). Adding a
column rewrites no row, so the append-only tables keep their guards untouched.
"""

from rutter_core.store.migrations.m0017_people import person_column
from rutter_core.store.migrations.migration import Migration

RECORDED: tuple[tuple[str, str], ...] = (
    ("missions", "created_by_person"),
    ("threads", "created_by_person"),
    ("sessions", "created_by_person"),
    ("runs", "created_by_person"),
    ("runs", "updated_by_person"),
    ("continuity_nodes", "created_by_person"),
    ("run_instruction_snapshots", "confirmed_by_person"),
    ("notes", "created_by_person"),
    ("notes", "updated_by_person"),
    ("pin_proposals", "proposed_by_person"),
    ("pin_proposals", "answered_by_person"),
    ("pins", "created_by_person"),
    ("pins", "updated_by_person"),
    ("transcript_imports", "created_by_person"),
    ("context_assembly_reports", "reported_by_person"),
    ("compactions", "created_by_person"),
    ("branch_operations", "created_by_person"),
    ("checkpoint_deliveries", "created_by_person"),
    ("delivery_reports", "created_by_person"),
    ("memory_candidates", "reviewed_by_person"),
    ("messages", "source_person"),
)
"""(table, column) of every person this migration adds."""

MIGRATION = Migration(
    21,
    "record_people",
    tuple(person_column(table, column) for table, column in RECORDED),
)
