"""`StoreWatch`, the language server's one watcher of store commits, in process against a real
SQLite store: every subscriber hears each tick, a commit by another connection is one change
for all of them (a burst settled into one), idle ticks poll once and report no change, nothing
is polled while nothing is served, and a replaced store starts with a change."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from rutter_core.app.facade import Rutter
from rutter_core.app.workspaces import RegisterWorkspaceParams
from rutter_core.store import Store, open_store
from rutter_lsp import store_watch
from rutter_lsp.store_watch import StoreWatch
from rutter_lsp.worker import DiskWorker

pytestmark = pytest.mark.asyncio


class Heard:
    def __init__(self) -> None:
        self.ticks: list[bool] = []

    async def __call__(self, changed: bool) -> None:
        self.ticks.append(changed)


def register(url: str, root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    with open_store(url) as other:  # another connection, as another process would
        Rutter(other).workspaces.register(
            RegisterWorkspaceParams(workspace_id=root.name, root=str(root), cwd=str(root))
        )


async def test_every_subscriber_hears_one_change_per_commit(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'rutter.db'}"
    worker = DiskWorker()
    with open_store(url) as store:
        current: list[Store | None] = [store]
        served = [True]
        watch = StoreWatch(worker, lambda: current[0], lambda: served[0])
        first, second, third = Heard(), Heard(), Heard()
        for subscriber in (first, second, third):
            watch.subscribe(subscriber)
        await watch.tick()  # the first poll of a store: read your baseline
        await watch.tick()  # nothing committed since
        register(url, tmp_path / "a")
        register(url, tmp_path / "b")  # a burst: settled into one change
        await watch.tick()
        await watch.tick()
        assert first.ticks == second.ticks == third.ticks == [True, False, True, False]
        polls = watch.polls
        served[0] = False  # nothing served: no poll, nobody called
        register(url, tmp_path / "c")
        await watch.tick()
        assert (watch.polls, first.ticks[4:]) == (polls, [])
        served[0] = True
        await watch.tick()
        assert first.ticks[4:] == [True]
        with open_store(url) as replaced:  # the settings named another store
            current[0] = replaced
            await watch.tick()
            assert first.ticks[5:] == [True]
            watch.close()
    worker.shutdown()


async def test_wake_ticks_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With an hour between polls, only `wake()` (this server committed) makes a tick."""
    monkeypatch.setattr(store_watch, "POLL_SECONDS", 3600.0)
    url = f"sqlite:///{tmp_path / 'rutter.db'}"
    worker = DiskWorker()
    with open_store(url) as store:
        watch = StoreWatch(worker, lambda: store, lambda: True)
        heard = Heard()
        watch.subscribe(heard)
        watch.start()
        watch.wake()
        await asyncio.wait_for(_until(lambda: heard.ticks == [True]), 30)
        register(url, tmp_path / "a")
        watch.wake()
        await asyncio.wait_for(_until(lambda: heard.ticks == [True, True]), 30)
        watch.close()
    worker.shutdown()


async def _until(predicate: object) -> None:
    assert callable(predicate)
    while not predicate():
        await asyncio.sleep(0.01)
