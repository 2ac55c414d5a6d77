"""`StoreWatch`: the one watcher of the store's commits in the language server.

Run drift (`features.runs`), continuity notifications (`features.sessions`) and pin proposals
(`features.pins`) all follow commits made by any process. They share this watcher, owned by
the session, rather than each opening its own change feed and polling it on its own timer:

- every `POLL_SECONDS` (or at once after `wake()`: this server wrote), on the disk worker, one
  poll of the store's change feed (`StoreChanges`: one `PRAGMA data_version` on SQLite), only
  while a store is open and a folder is served;
- a burst of commits (a script adding twenty messages) is one change: once a change is seen
  the feed is polled again every `SETTLE_SECONDS` until it stays quiet (at most
  `MAX_SETTLE_ROUNDS` times);
- then every subscriber is called, in subscription order, with whether the store changed (a
  tick that saw no change still calls them with False, so a subscriber can react to what is
  not a commit, such as a newly served workspace). The first poll of a store answers True
  (nothing was seen yet), so subscribers read their baseline; a new store (the settings
  changed it) gets a new feed and the same first True.

Features subscribe in their `setup`; `features.lifecycle` starts the watcher once the server
is ready and closes it at shutdown. A subscriber that fails is logged and does not stop the
others. Event loop only, like every send.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Final

from rutter_core.store import Store
from rutter_core.store.changes import StoreChanges
from rutter_lsp.worker import DiskWorker

logger = logging.getLogger("rutter_lsp")

POLL_SECONDS: Final = 0.5
SETTLE_SECONDS: Final = 0.15
MAX_SETTLE_ROUNDS: Final = 10

Subscriber = Callable[[bool], Awaitable[None]]
"""Called after each tick with whether the store changed since the previous tick."""


class StoreWatch:
    def __init__(
        self,
        worker: DiskWorker,
        store: Callable[[], Store | None],
        active: Callable[[], bool],
    ) -> None:
        """`store`: the store open now (None: none); `active`: whether anything is served
        (nothing is polled otherwise)."""
        self._worker = worker
        self._store = store
        self._active = active
        self._subscribers: list[Subscriber] = []
        self._watched: Store | None = None
        self._changes: StoreChanges | None = None
        self._task: asyncio.Task[None] | None = None
        self._wake: asyncio.Event | None = None
        self.polls = 0
        """Polls of the change feed so far (what the features used to do three times)."""

    def subscribe(self, subscriber: Subscriber) -> None:
        self._subscribers.append(subscriber)

    def start(self) -> None:
        if self._task is None:
            self._wake = asyncio.Event()
            self._task = asyncio.get_running_loop().create_task(self._run())

    def wake(self) -> None:
        """This server committed: tick now rather than at the next `POLL_SECONDS`."""
        if self._wake is not None:
            self._wake.set()

    def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None
        changes, self._changes, self._watched = self._changes, None, None
        if changes is not None:
            changes.close()

    async def _run(self) -> None:
        assert self._wake is not None
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), POLL_SECONDS)
            self._wake.clear()
            try:
                await self.tick()
            except asyncio.CancelledError:
                raise
            except Exception:  # a bug here must not stop the server's other work
                logger.exception("cannot follow the store's changes")

    async def tick(self) -> None:
        """One poll (settled when it saw a change), then every subscriber."""
        changed = await self._poll()
        if changed is None:
            return
        if changed:
            for _ in range(MAX_SETTLE_ROUNDS):  # one change per burst
                await asyncio.sleep(SETTLE_SECONDS)
                if not await self._poll():
                    break
        for subscriber in list(self._subscribers):
            try:
                await subscriber(changed)
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.exception("a store change subscriber failed")

    async def _poll(self) -> bool | None:
        """Whether the store changed since the last poll (None: no store, nothing served, or
        the poll failed; the next tick retries)."""
        store = self._store()
        if store is None or not self._active():
            return None
        if self._changes is None or self._watched is not store:
            if self._changes is not None:
                await self._worker.run(self._changes.close)
            self._watched, self._changes = store, StoreChanges(store)
        changes = self._changes
        try:
            self.polls += 1
            return await self._worker.run(changes.poll)
        except Exception as error:  # the store went away
            logger.debug("store change poll failed: %s", error)
            return None
