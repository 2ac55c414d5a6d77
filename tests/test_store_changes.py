"""`StoreChanges`: commits by other processes and connections are noticed, idle polls are not."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sqlalchemy import text

from rutter_core.store import Store, open_store
from rutter_core.store.changes import StoreChanges


def _url(path: Path) -> str:
    return f"sqlite:///{path / 'rutter.db'}"


def _write(store: Store, workspace_id: str) -> None:
    with store.write() as conn:
        conn.execute(
            text(
                "INSERT INTO workspaces (workspace_id, root, created_at) "
                "VALUES (:id, :root, '2026-12-02T00:00:00Z')"
            ),
            {"id": workspace_id, "root": f"/nowhere/{workspace_id}"},
        )


def test_first_poll_reports_a_change_then_idle_polls_do_not(tmp_path: Path) -> None:
    with open_store(_url(tmp_path)) as store:
        changes = StoreChanges(store)
        try:
            assert changes.poll() is True
            assert changes.poll() is False
            with store.read() as conn:  # reads are not changes
                conn.execute(text("SELECT count(*) FROM workspaces")).scalar_one()
            assert changes.poll() is False
        finally:
            changes.close()


def test_commit_through_the_same_store_is_noticed(tmp_path: Path) -> None:
    with open_store(_url(tmp_path)) as store:
        changes = StoreChanges(store)
        try:
            changes.poll()
            _write(store, "a")
            assert changes.poll() is True
            assert changes.poll() is False
        finally:
            changes.close()


def test_commit_by_another_process_is_noticed(tmp_path: Path) -> None:
    url = _url(tmp_path)
    with open_store(url) as store:
        changes = StoreChanges(store)
        try:
            changes.poll()
            script = (
                "import sys; from rutter_core.store import open_store\n"
                "from rutter_core.workspaces.service import register_workspace\n"
                "from pathlib import Path\n"
                "with open_store(sys.argv[1]) as s:\n"
                "    register_workspace(s, 'other', sys.argv[2], cwd=Path.cwd())\n"
            )
            subprocess.run([sys.executable, "-c", script, url, str(tmp_path)], check=True)
            assert changes.poll() is True
            assert changes.poll() is False
        finally:
            changes.close()


def test_rolled_back_write_is_not_a_change(tmp_path: Path) -> None:
    with open_store(_url(tmp_path)) as store:
        changes = StoreChanges(store)
        try:
            changes.poll()
            try:
                with store.write() as conn:
                    conn.execute(
                        text(
                            "INSERT INTO workspaces (workspace_id, root, created_at) "
                            "VALUES ('b', '/nowhere/b', '2026-12-02T00:00:00Z')"
                        )
                    )
                    raise RuntimeError("abandon")
            except RuntimeError:
                pass
            assert changes.poll() is False
        finally:
            changes.close()
