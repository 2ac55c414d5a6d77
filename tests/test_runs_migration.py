"""Migration 2 ("runs"): a store written by the previous schema upgrades and keeps its data."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from types import SimpleNamespace

from sqlalchemy import text

from rutter_core.discovery.fsread import FileReader
from rutter_core.discovery.walk import discover
from rutter_core.kernel.ids import new_id
from rutter_core.runs.service import create_run, get_run, latest_revision
from rutter_core.store import MIGRATIONS, Store, migration_checksum, open_store
from rutter_core.workspaces.model import Workspace
from rutter_core.workspaces.service import list_workspaces
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


T0 = "2026-01-01T00:00:00Z"


def old_rows(store: Store, *statements: tuple[str, dict[str, object]]) -> None:
    """Rows as an older rutter wrote them: today's code speaks the current schema only."""
    with store.write() as conn:
        for statement, values in statements:
            conn.execute(text(statement), values)


def old_workspace(workspace_id: str, root: Path) -> tuple[str, dict[str, object]]:
    return (
        "INSERT INTO workspaces (workspace_id, root, created_at) VALUES (:w, :r, :t)",
        {"w": workspace_id, "r": str(root), "t": T0},
    )


def test_store_of_schema_1_upgrades_and_keeps_its_workspaces(tmp_path: Path) -> None:
    db = tmp_path / "rutter.db"
    for name in ("app", "lib"):
        (tmp_path / name).mkdir()
    with open_store(url(db), migrations=MIGRATIONS[:1]) as old:
        old_rows(
            old, old_workspace("app", tmp_path / "app"), old_workspace("lib", tmp_path / "lib")
        )
    before = [
        Workspace(
            workspace_id=name, root=str(tmp_path / name), created_at=T0,
            project_id=f"local:{name}", project_source="local",
        )
        for name in ("app", "lib")
    ]  # fmt: skip
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
    snapshot = discover("app", str(root), ".", reader=FileReader())
    ids = {p: new_id(p) for p in ("msn", "thr", "ses", "run", "node")}
    actor = {"a": "cli", "t": T0}
    with open_store(url(db), migrations=MIGRATIONS[:2]) as old:
        old_rows(
            old,
            old_workspace("app", root),
            ("INSERT INTO missions VALUES (:msn, 'app', 'before', 'active', :a, :t, :t)",
             {**ids, **actor}),
            ("INSERT INTO threads VALUES (:thr, 'app', 'active', :a, :t, :t)", {**ids, **actor}),
            ("INSERT INTO sessions VALUES (:ses, 'app', :thr, 'active', :a, :t, :t)",
             {**ids, **actor}),
            ("INSERT INTO runs VALUES (:run, 'app', :msn, :ses, :thr, NULL, 'ask', '.', "
             "'created', :a, :a, :t, :t)", {**ids, **actor}),
            ("INSERT INTO continuity_nodes VALUES (:node, :run, :ses, :thr, NULL, 'root', :a, :t)",
             {**ids, **actor}),
            ("INSERT INTO run_instruction_snapshots VALUES (:run, 1, :json, :fp, :a, :t, NULL)",
             {**ids, **actor, "json": json.dumps(snapshot.to_json()), "fp": snapshot.fingerprint}),
        )  # fmt: skip
    created = SimpleNamespace(run_id=ids["run"], fingerprint=snapshot.fingerprint)
    with open_store(url(db)) as upgraded:
        before = get_run(upgraded, created.run_id)
        assert (before.goal, before.workspace_id, before.revision) == ("before", "app", 1)
        pinned = latest_revision(upgraded, created.run_id)
        assert pinned is not None
        assert pinned.fingerprint == created.fingerprint
    assert schema(db)[0] == [m.version for m in MIGRATIONS]
