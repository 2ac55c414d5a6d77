"""Workspace lifecycle (docs/reference/workspaces.md): `move` to a new root, and `remove` refused
while things belong to the workspace, or `--cascade` with everything of it, in one transaction, with
the append-only guards back in place and deleted text in none of the store's files."""

from __future__ import annotations

import os
import sqlite3
import uuid
from pathlib import Path

import pytest
from pydantic import ValidationError

from rutter_cli.errors import message_of
from rutter_core.app.memory import CreateMemoryParams, GetMemoryParams
from rutter_core.app.runs import InspectRunParams, ShowRunParams
from rutter_core.app.workspaces import (
    MoveWorkspaceParams,
    RemoveWorkspaceParams,
    ShowWorkspaceParams,
)
from rutter_core.kernel.errors import ConflictError, NotFoundError, RejectedError, RutterError
from rutter_core.store import Store
from tests.testing import THIS_MACHINE
from tests.workspace_population import (
    files,
    owned,
    populate,
    raw,
    rutter,
    store,
    store_url,
    triggers,
    two,
)

__all__ = ["store", "store_url", "two"]  # the fixtures

# Every table that holds something of a workspace, and the column or query that finds it.

# -- remove ------------------------------------------------------------------------------------


def test_a_refused_remove_names_what_it_has_and_both_ways_out(
    store: Store, two: tuple[Path, Path]
) -> None:
    populate(store, "demo", "x")
    with pytest.raises(ConflictError) as info:
        rutter(store).workspaces.remove(RemoveWorkspaceParams(workspace_id="demo"))
    error = info.value
    assert error.message == (
        "workspace 'demo' still has 2 runs, 2 sessions, 1 project memory and 1 thread; it is "
        "removed only with them"
    )
    assert error.details == {"workspace_id": "demo", "runs": 2, "sessions": 2,
                             "project_memories": 1, "threads": 1}  # fmt: skip
    assert message_of(error).endswith(
        "; if its directory moved, point it there with `rutter workspace move demo NEWROOT`; "
        "to delete it with all of that, `rutter workspace remove demo --cascade` (see "
        "`rutter run list --workspace demo --all` first)"
    )
    assert owned(store, "demo")["runs"] == 2


def test_cascade_deletes_everything_of_the_workspace_and_nothing_else(
    store: Store, two: tuple[Path, Path]
) -> None:
    secret = f"cascade-{uuid.uuid4().hex}"
    ids = populate(store, "demo", secret)
    populate(store, "other", "kept", transcript=False)
    app = rutter(store)
    user = app.memory.create(CreateMemoryParams(scope="user", title="mine", content="keep"),
                             actor="cli")  # fmt: skip
    other_before = owned(store, "other")
    guards = triggers(store)
    # Another connection holds the database open, as a running language server would: the
    # WAL stays, and the deleted text must be in none of the files all the same.
    other = raw(store)
    try:
        other.execute("SELECT count(*) FROM memories").fetchall()
        assert any(secret.encode() in data for data in files(store).values())
        removed = app.workspaces.remove(RemoveWorkspaceParams(workspace_id="demo", cascade=True))
        body = removed.to_json()
        assert (body["cascade"], body["removed"], body["purged"]) == (True, True, True)
        assert body["deleted"] == {
            "runs": 2, "missions": 2, "revisions": 2, "sessions": 2, "threads": 3,
            "checkpoints": 1, "nodes": 3, "messages": 1 + ids["imported"], "notes": 1,
            "pins": 2, "pin_proposals": 1, "transcript_imports": 1, "assemblies": 1,
            "project_memories": 1,
        }  # fmt: skip
        found = files(store)
        assert {"db", "-wal"} <= set(found)
        for name, data in found.items():
            assert secret.encode() not in data, f"deleted text still in {name}"
        assert len(found["-wal"]) == 0
    finally:
        other.close()
    assert set(owned(store, "demo").values()) == {0}
    assert owned(store, "other") == other_before
    # The guards are back exactly as they were, and refuse again.
    assert triggers(store) == guards
    conn = raw(store)
    try:
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            conn.execute("DELETE FROM continuity_nodes")
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            conn.execute("DELETE FROM messages")
    finally:
        conn.close()
    # None of it is readable any more.
    for run_id in (ids["run"], ids["fork"]):
        with pytest.raises(NotFoundError):
            app.runs.show(ShowRunParams(run_id=run_id))
    with pytest.raises(NotFoundError):
        app.memory.get(GetMemoryParams(id=ids["memory"]))
    with pytest.raises(NotFoundError):
        app.workspaces.show(ShowWorkspaceParams(workspace_id="demo"))
    assert app.memory.get(GetMemoryParams(id=user.memory_id)).content == "keep"


def test_a_cascade_that_fails_leaves_everything_and_the_guards(
    store: Store, two: tuple[Path, Path]
) -> None:
    populate(store, "demo", "x")
    before, guards = owned(store, "demo"), triggers(store)
    with store.write() as conn:
        # A record rutter does not know refers to a run: the foreign key refuses the cascade
        # halfway (after the guards were lifted and continuity's rows deleted).
        conn.exec_driver_sql(
            "CREATE TABLE planted (id TEXT PRIMARY KEY, run_id TEXT REFERENCES runs (run_id))"
        )
        conn.exec_driver_sql("INSERT INTO planted SELECT 'p', min(run_id) FROM runs")
    with pytest.raises(ConflictError) as info:
        rutter(store).workspaces.remove(RemoveWorkspaceParams(workspace_id="demo", cascade=True))
    assert info.value.details == {"constraint": "foreign_key"}
    assert owned(store, "demo") == before
    assert triggers(store) == guards


@pytest.mark.both_dialects
def test_cascade_of_an_unknown_workspace_is_not_registered(store: Store) -> None:
    with pytest.raises(NotFoundError) as info:
        rutter(store).workspaces.remove(RemoveWorkspaceParams(workspace_id="nope", cascade=True))
    assert info.value.code == "not_registered"


# -- move --------------------------------------------------------------------------------------


@pytest.mark.both_dialects
def test_move_keeps_the_id_and_runs_see_drift_against_the_new_root(
    store: Store, two: tuple[Path, Path], tmp_path: Path
) -> None:
    demo, _ = two
    ids = populate(store, "demo", "x")
    app = rutter(store)
    moved_to = tmp_path / "elsewhere" / "demo"
    moved_to.parent.mkdir()
    demo.rename(moved_to)  # os.rename: the directory itself moves
    gone = app.runs.inspect(InspectRunParams(run_id=ids["run"])).to_json()
    assert gone["live"]["error"]["code"] == "not_found"
    assert gone["live"]["error"]["hint"] == {"fix": "move_workspace"}

    moved = app.workspaces.move(
        MoveWorkspaceParams(workspace_id="demo", root="elsewhere/demo", cwd=str(tmp_path))
    )
    assert moved.to_json() == {
        "workspace_id": "demo",
        "root": os.path.realpath(moved_to),
        "created_at": moved.created_at,
        "project_id": "local:demo",
        "project_source": "local",
        "machine_id": THIS_MACHINE,
        "previous_root": str(demo),
        "moved": True,
    }
    # Same files: nothing stale. Then a change at the new root is drift, as usual.
    assert app.runs.inspect(InspectRunParams(run_id=ids["run"])).to_json()["stale"] is False
    (moved_to / "src" / "AGENTS.md").write_text("src rules, changed\n", encoding="utf-8")
    drift = rutter(store).runs.inspect(InspectRunParams(run_id=ids["run"])).to_json()
    assert drift["stale"] is True
    assert drift["diff"]["changed"] == ["src/AGENTS.md"]
    assert app.memory.get(GetMemoryParams(id=ids["memory"])).workspace_id == "demo"
    again = app.workspaces.move(
        MoveWorkspaceParams(workspace_id="demo", root=str(moved_to), cwd=str(tmp_path))
    )
    assert (again.moved, again.previous_root) == (False, again.root)


@pytest.mark.both_dialects
def test_move_refusals(store: Store, two: tuple[Path, Path], tmp_path: Path) -> None:
    demo, other = two
    app = rutter(store)

    def refused(workspace_id: str, root: str) -> RutterError:
        with pytest.raises(RutterError) as info:
            app.workspaces.move(
                MoveWorkspaceParams(workspace_id=workspace_id, root=root, cwd=str(tmp_path))
            )
        return info.value

    taken = refused("demo", str(other))
    assert isinstance(taken, ConflictError)
    assert taken.details == {"workspace_id": "other", "root": str(other), "moving": "demo"}
    assert message_of(taken).endswith(
        "; use that ID, or free the root with `rutter workspace remove other` (it says what "
        "belongs to it)"
    )
    missing = refused("demo", "no-such-dir")
    assert isinstance(missing, NotFoundError)
    assert missing.code == "not_found"
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    assert isinstance(refused("demo", "a-file"), RejectedError)
    assert refused("nope", str(tmp_path)).code == "not_registered"
    assert refused("Bad ID", str(tmp_path)).code == "invalid_workspace_id"
    assert app.workspaces.show(ShowWorkspaceParams(workspace_id="demo")).root == str(demo)


def test_cascade_is_a_real_boolean() -> None:
    # A surface that sends "yes" or 1 must not delete a workspace's history by accident.
    for value in ("yes", "true", 1):
        with pytest.raises(ValidationError):
            RemoveWorkspaceParams.model_validate({"workspace_id": "demo", "cascade": value})
    assert RemoveWorkspaceParams(workspace_id="demo", cascade=True).cascade is True
