"""The store: unit of work, schema, migrations, and the dialects behind them
(docs/reference/store.md).

Callers resolve the URL with `resolve_database_url` (the CLI passes `os.environ`), open it
with `open_store`, and do all work inside `store.read()` / `store.write()` (a write that deletes
or replaces content: `store.purging_write()`). Only
`store/dialects/` knows which database engine is underneath.
"""

from rutter_core.store.dialects import PoolKind, append_only_triggers
from rutter_core.store.engine import (
    DATABASE_FILE_NAME,
    DEFAULT_BUSY_TIMEOUT_MS,
    PurgingWrite,
    Store,
    open_store,
    person_apart,
    person_of,
    resolve_data_home,
    resolve_database_url,
    shareable_database_url,
)
from rutter_core.store.migrations import MIGRATIONS, Migration, migration_checksum

__all__ = [
    "DATABASE_FILE_NAME",
    "DEFAULT_BUSY_TIMEOUT_MS",
    "MIGRATIONS",
    "Migration",
    "PoolKind",
    "PurgingWrite",
    "Store",
    "append_only_triggers",
    "migration_checksum",
    "open_store",
    "person_apart",
    "person_of",
    "resolve_data_home",
    "resolve_database_url",
    "shareable_database_url",
]
