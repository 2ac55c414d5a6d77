"""Noticing commits to the store made by anyone (another process, another connection).

The language server shows runs and memories that the CLI creates while it runs. Re-reading
them on a timer would cost a query per table per tick; a dialect's change feed is one cheap
counter instead (see `Dialect.change_feed`).
"""

from __future__ import annotations

from rutter_core.store.dialects import ChangeFeed
from rutter_core.store.engine import Store


class StoreChanges:
    """`poll()` answers whether the store may have changed since the previous `poll()`.

    The first call answers True (nothing was seen yet). On dialects without a change feed
    every call answers True, so callers re-read: correct, only slower. Not thread-safe: poll
    from one thread at a time.
    """

    def __init__(self, store: Store) -> None:
        self._store = store
        self._feed: ChangeFeed | None = None
        self._last: int | None = None

    def poll(self) -> bool:
        if self._feed is None:
            self._feed = self._store.dialect.change_feed(self._store.engine)
            if self._feed is None:
                return True
        version = self._feed.version()
        changed = version != self._last
        self._last = version
        return changed

    def close(self) -> None:
        if self._feed is not None:
            self._feed.close()
            self._feed = None
            self._last = None
