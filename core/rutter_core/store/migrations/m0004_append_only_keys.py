"""Migration 4: append-only tables also refuse an INSERT whose key already exists
(docs/reference/store.md), `INSERT OR REPLACE` included: a replace is a delete plus an insert, and
the delete half does not fire the guard of migration 2.

Every key a replace could match on is listed: the primary keys, and the one root node per run.
"""

from rutter_core.store.dialects import UniqueKey
from rutter_core.store.migrations.migration import KeyGuard, Migration

MIGRATION = Migration(
    4,
    "append_only_keys",
    (),
    key_guards=(
        KeyGuard(
            "continuity_nodes",
            (UniqueKey(("node_id",)), UniqueKey(("run_id",), partial=("kind", "root"))),
        ),
        KeyGuard("run_instruction_snapshots", (UniqueKey(("run_id", "revision")),)),
    ),
)
