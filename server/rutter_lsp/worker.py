"""The disk worker: one thread that does every filesystem and store operation.

Handlers stay on the event loop and mutate server state only there; they hand immutable
inputs to this worker and await the result. One thread keeps the shared `FileReader` (whose
caches are plain dicts) confined to a single thread, and runs jobs in submission order, so an
invalidation submitted before a discovery is applied before it. Long work is submitted in
chunks, so requests interleave with it instead of waiting for all of it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


class DiskWorker:
    def __init__(self) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rutter-disk")

    async def run(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, lambda: fn(*args, **kwargs))

    def shutdown(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
