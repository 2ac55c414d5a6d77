"""The disk worker: one thread that does every filesystem and store operation.

Handlers stay on the event loop and mutate server state only there; they hand immutable
inputs to this worker and await the result. One thread keeps the shared `FileReader` (whose
caches are plain dicts) confined to a single thread.

Two lanes: `run` (requests, invalidations, store work: short jobs, run in submission order)
and `run_background` (refresh work, submitted in time-sliced pieces of ~15 ms). A queued
`run` job always goes before any queued background job, so a request waits at most for the
background slice that is running, not for the whole refresh. Jobs within a lane run in
submission order, so an invalidation submitted before a request's discovery is applied
before it.

No job sleeps on the worker for a file that must settle (one written moments ago,
`fsread.SETTLE_NS`): the reader leaves that wait to the lane, which waits on the event loop and
queues the job again in the same lane (other jobs run meanwhile), at most `SETTLE_ROUNDS`
times; the last attempt waits in place. Every answer comes from an attempt whose reads did the
full settle check. A job may therefore run more than once: store writes roll back when it is
interrupted, and background jobs are pure functions of their inputs.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, Final, ParamSpec, TypeVar

from rutter_core.discovery.fsread import FileReader, NotSettled, SettleLater

P = ParamSpec("P")
T = TypeVar("T")

_Job = tuple[Future[Any], Callable[[], Any]]

SETTLE_ROUNDS: Final = 3
"""Attempts of a job that may wait on the event loop for files to settle."""


class DiskWorker:
    def __init__(self, reader: FileReader | None = None) -> None:
        self._reader = reader
        """The reader whose settle waits `run` takes off the worker (None: none are)."""
        self._urgent: deque[_Job] = deque()
        self._background: deque[_Job] = deque()
        self._ready = threading.Condition(threading.Lock())
        self._closed = False
        self._thread: threading.Thread | None = None

    async def run(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """Run `fn` on the worker ahead of queued background work (again, after waiting on
        the event loop, when a file it reads must settle first)."""
        return await self._attempts(self._urgent, lambda: fn(*args, **kwargs))

    async def run_background(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """Run `fn` on the worker once no `run` job is waiting (keep `fn` short: ~15 ms), again
        after waiting on the event loop when a file it reads must settle first."""
        return await self._attempts(self._background, lambda: fn(*args, **kwargs))

    async def _attempts(self, lane: deque[_Job], call: Callable[[], T]) -> T:
        reader = self._reader
        if reader is None:
            return await self._submit(lane, call)
        later = SettleLater()

        def attempt() -> T:
            with reader.settling_later(later):
                return call()

        for _ in range(SETTLE_ROUNDS):
            try:
                return await self._submit(lane, attempt)
            except NotSettled as pending:
                await asyncio.sleep(pending.wait_s)
        later.defer = False
        return await self._submit(lane, attempt)

    def discard(self, box: list[Any]) -> None:
        """Empty `box` on the worker, in the background lane: for big structures whose last
        reference it holds (freeing them costs time the event loop should not spend)."""
        with self._ready:
            if self._closed:
                return
            self._background.append((Future(), box.clear))
            self._start()
            self._ready.notify()

    async def _submit(self, lane: deque[_Job], call: Callable[[], T]) -> T:
        future: Future[T] = Future()
        with self._ready:
            if self._closed:
                raise RuntimeError("the disk worker is shut down")
            lane.append((future, call))
            self._start()
            self._ready.notify()
        return await asyncio.wrap_future(future)

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="rutter-disk", daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        while True:
            with self._ready:
                while not (self._urgent or self._background or self._closed):
                    self._ready.wait()
                if self._urgent:
                    future, call = self._urgent.popleft()
                elif self._background:
                    future, call = self._background.popleft()
                else:
                    return  # closed and drained
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(call())
                except BaseException as exc:
                    future.set_exception(exc)
            del future, call  # the job's references die here, on this thread

    def shutdown(self) -> None:
        """Stop taking jobs; queued ones are cancelled, the running one finishes."""
        with self._ready:
            self._closed = True
            for lane in (self._urgent, self._background):
                while lane:
                    future, _ = lane.popleft()
                    future.cancel()
            self._ready.notify_all()
