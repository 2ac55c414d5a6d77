"""The store: SQLAlchemy engine, transaction discipline, migrations (contract section 2).

Callers resolve the URL with `resolve_database_url` (the CLI passes `os.environ`), open it
with `open_store`, and do all work inside `store.read()` / `store.write()`.
"""

from rutter_core.store.engine import (
    DATABASE_FILE_NAME,
    DEFAULT_BUSY_TIMEOUT_MS,
    Store,
    open_store,
    resolve_data_home,
    resolve_database_url,
)
from rutter_core.store.migrations import MIGRATIONS, Migration, migration_checksum
from rutter_core.store.sqlite import append_only_triggers

__all__ = [
    "DATABASE_FILE_NAME",
    "DEFAULT_BUSY_TIMEOUT_MS",
    "MIGRATIONS",
    "Migration",
    "Store",
    "append_only_triggers",
    "migration_checksum",
    "open_store",
    "resolve_data_home",
    "resolve_database_url",
]
