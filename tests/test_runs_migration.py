"""Migration 2 ("runs"): a store written by the previous schema upgrades and keeps its data."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from rutter_core.discovery.fsread import FileReader
from rutter_core.runs.service import create_run, get_run, latest_revision
from rutter_core.store import MIGRATIONS, migration_checksum, open_store
from rutter_core.workspaces.service import list_workspaces, register_workspace
from tests.conftest import write_tree

RUNS_TABLES = {"missions", "threads", "sessions", "runs", "continuity_nodes",
               "run_instruction_snapshots"}  # fmt: skip
# Released migrations never change (stores record their checksums): a new schema step is a
# new migration. This pins migration 2 as released.
RUNS_MIGRATION_CHECKSUM = "b20a78d216606dd03257f1ef8ed2d5cc42396f9cbe29e45d29f5bed697997a1f"


def url(path: Path) -> str:
    return f"sqlite:///{path}"


def schema(path: Path) -> tuple[list[int], set[str], set[str]]:
    """Ledger versions, tables and triggers, read without rutter."""
    conn = sqlite3.connect(path)
    try:
        versions = [v for (v,) in conn.execute("SELECT version FROM schema_migrations ORDER BY 1")]
        tables = {n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        triggers = {
            n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type='trigger'")
        }
    finally:
        conn.close()
    return versions, tables, triggers


def test_runs_migration_is_version_2() -> None:
    runs = MIGRATIONS[1]
    assert (runs.version, runs.name) == (2, "runs")
    assert set(runs.append_only) == {"continuity_nodes", "run_instruction_snapshots"}
    assert migration_checksum(runs, "sqlite") == RUNS_MIGRATION_CHECKSUM


def test_store_of_schema_1_upgrades_and_keeps_its_workspaces(tmp_path: Path) -> None:
    db = tmp_path / "rutter.db"
    for name in ("app", "lib"):
        (tmp_path / name).mkdir()
    with open_store(url(db), migrations=MIGRATIONS[:1]) as old:
        register_workspace(old, "app", tmp_path / "app", cwd=tmp_path)
        register_workspace(old, "lib", tmp_path / "lib", cwd=tmp_path)
        before = list_workspaces(old)
    versions, tables, _ = schema(db)
    assert versions == [1]
    assert not RUNS_TABLES & tables

    with open_store(url(db)) as upgraded:
        assert list_workspaces(upgraded) == before
        write_tree(tmp_path / "app", {"AGENTS.md": "app rules\n"})
        created = create_run(upgraded, workspace_id="app", goal="after the upgrade",
                             reader=FileReader(), actor="cli")  # fmt: skip
    versions, tables, triggers = schema(db)
    assert versions == [m.version for m in MIGRATIONS]
    assert tables >= RUNS_TABLES
    assert triggers >= {
        f"{table}_append_only_no_{verb}"
        for table in ("continuity_nodes", "run_instruction_snapshots")
        for verb in ("update", "delete", "existing_key")
    }

    # Reopening changes nothing and still reads everything.
    with open_store(url(db)) as reopened:
        assert schema(db)[0] == versions
        assert list_workspaces(reopened) == before
        assert get_run(reopened, created.run_id).revision == 1
        pinned = latest_revision(reopened, created.run_id)
        assert pinned is not None
        assert pinned.snapshot.sources[0].content == "app rules\n"


def test_store_of_schema_2_keeps_its_runs_through_later_migrations(tmp_path: Path) -> None:
    db = tmp_path / "rutter.db"
    root = tmp_path / "app"
    write_tree(root, {"AGENTS.md": "app rules\n"})
    with open_store(url(db), migrations=MIGRATIONS[:2]) as old:
        register_workspace(old, "app", root, cwd=tmp_path)
        created = create_run(old, workspace_id="app", goal="before", reader=FileReader(),
                             actor="cli")  # fmt: skip
        before = get_run(old, created.run_id)
    with open_store(url(db)) as upgraded:
        assert get_run(upgraded, created.run_id) == before
        pinned = latest_revision(upgraded, created.run_id)
        assert pinned is not None
        assert pinned.fingerprint == created.fingerprint
    assert schema(db)[0] == [m.version for m in MIGRATIONS]
