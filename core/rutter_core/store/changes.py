"""Noticing commits to the store made by anyone (another process, another connection).

The language server shows runs and memories that the CLI creates while it runs. Re-reading
them on a timer would cost a query per table per tick; SQLite keeps a counter instead:
`PRAGMA data_version` on a connection changes whenever any *other* connection commits to the
database file. One connection is held for the probe alone, so every commit counts, including
the server's own writes through its pooled connections.
"""

from __future__ import annotations

from typing import Any

from rutter_core.store.engine import Store


class StoreChanges:
    """`poll()` answers whether the store may have changed since the previous `poll()`.

    The first call answers True (nothing was seen yet). On dialects without a change counter
    every call answers True, so callers re-read: correct, only slower. Not thread-safe: poll
    from one thread at a time.
    """

    def __init__(self, store: Store) -> None:
        self._store = store
        self._connection: Any | None = None
        self._last: int | None = None

    def poll(self) -> bool:
        if not self._store.is_sqlite:
            return True
        if self._connection is None:
            self._connection = self._store.engine.raw_connection()
        cursor = self._connection.cursor()
        try:
            version = int(cursor.execute("PRAGMA data_version").fetchone()[0])
        finally:
            cursor.close()
        changed = version != self._last
        self._last = version
        return changed

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
            self._last = None
