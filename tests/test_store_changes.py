"""`StoreChanges` on both engines: commits by other processes and connections are noticed, idle
polls and reads are not. On PostgreSQL the feed is the server's snapshot, so a transaction that
was still running at one poll and commits before the next is noticed too, and the probe never
sits inside a transaction."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest
from sqlalchemy import text

from rutter_core.store import Store, open_store
from rutter_core.store.changes import StoreChanges

pytestmark = pytest.mark.both_dialects


def _insert(workspace_id: str) -> tuple[object, dict[str, str]]:
    statement = text(
        "INSERT INTO workspaces (workspace_id, root, created_at) "
        "VALUES (:id, :root, '2026-12-02T00:00:00Z')"
    )
    return statement, {"id": workspace_id, "root": f"/nowhere/{workspace_id}"}


def _write(store: Store, workspace_id: str) -> None:
    statement, values = _insert(workspace_id)
    with store.write() as conn:
        conn.execute(statement, values)  # type: ignore[call-overload]


def test_first_poll_reports_a_change_then_idle_polls_do_not(store: Store) -> None:
    changes = StoreChanges(store)
    try:
        assert changes.poll() is True
        assert changes.poll() is False
        with store.read() as conn:  # reads are not changes
            conn.execute(text("SELECT count(*) FROM workspaces")).scalar_one()
        assert changes.poll() is False
        with store.write():  # nor is a write transaction that writes nothing
            pass
        assert changes.poll() is False
    finally:
        changes.close()


def test_commit_through_the_same_store_is_noticed(store: Store) -> None:
    changes = StoreChanges(store)
    try:
        changes.poll()
        _write(store, "a")
        assert changes.poll() is True
        assert changes.poll() is False
    finally:
        changes.close()


def test_commit_by_another_process_is_noticed(store: Store, store_url: str, tmp_path: Path) -> None:
    changes = StoreChanges(store)
    try:
        changes.poll()
        script = (
            "import sys; from rutter_core.store import open_store\n"
            "from rutter_core.workspaces.service import register_workspace\n"
            "from pathlib import Path\n"
            "with open_store(sys.argv[1]) as s:\n"
            "    register_workspace(s, 'other', sys.argv[2], cwd=Path.cwd(), machine='ab' * 16)\n"
        )
        subprocess.run(
            [sys.executable, "-c", script, store_url, str(tmp_path)], check=True, timeout=120
        )
        assert changes.poll() is True
        assert changes.poll() is False
    finally:
        changes.close()


def test_a_write_running_across_a_poll_is_noticed_when_it_commits(store_url: str) -> None:
    """A poll while another connection's write is in flight, then one after it committed: the
    second sees the change, whatever the first answered."""
    with open_store(store_url) as store, open_store(store_url) as writer:
        changes = StoreChanges(store)
        inserted = threading.Event()
        release = threading.Event()

        def write() -> None:
            statement, values = _insert("slow")
            with writer.write() as conn:
                conn.execute(statement, values)  # type: ignore[call-overload]
                inserted.set()
                assert release.wait(60)

        try:
            changes.poll()
            thread = threading.Thread(target=write)
            thread.start()
            assert inserted.wait(60)
            changes.poll()  # during the write: a change or not, it is not committed yet
            release.set()
            thread.join(60)
            assert changes.poll() is True
            with store.read() as conn:
                found = conn.execute(text("SELECT count(*) FROM workspaces")).scalar_one()
            assert found == 1
        finally:
            release.set()
            changes.close()


@pytest.mark.sqlite_only
def test_rolled_back_write_is_not_a_change(store: Store) -> None:
    """On SQLite only a commit moves the counter. (On PostgreSQL a write that rolls back may be
    reported as a change: its transaction had an ID. A re-read for nothing, never a miss.)"""
    changes = StoreChanges(store)
    try:
        changes.poll()
        statement, values = _insert("b")

        def abandoned_write() -> None:
            with store.write() as conn:
                conn.execute(statement, values)  # type: ignore[call-overload]
                raise RuntimeError("abandon")

        with pytest.raises(RuntimeError):
            abandoned_write()
        assert changes.poll() is False
    finally:
        changes.close()


@pytest.mark.postgres
def test_the_probe_never_waits_inside_a_transaction(postgres_url: str) -> None:
    """The feed's connection is idle between polls, not "idle in transaction" (which would hold
    back the server's cleanup of dead rows)."""
    store = open_store(postgres_url)
    changes = StoreChanges(store)
    try:
        changes.poll()
        changes.poll()
        with store.read() as conn:
            states = conn.execute(
                text(
                    "SELECT state FROM pg_stat_activity WHERE datname = current_database() "
                    "AND pid <> pg_backend_pid() AND application_name = 'rutter'"
                )
            ).scalars()
            assert "idle in transaction" not in list(states)
    finally:
        changes.close()
        store.close()
