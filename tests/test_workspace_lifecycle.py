"""Workspace lifecycle (docs/reference/workspaces.md): `move` to a new root, and `remove` refused
while things belong to the workspace, or `--cascade` with everything of it, in one transaction, with
the append-only guards back in place and deleted text in none of the store's files."""

from __future__ import annotations

import os
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from rutter_cli.errors import message_of
from rutter_core.app.assembly import AssembleParams, ReportParams
from rutter_core.app.branches import ForkParams
from rutter_core.app.continuity import AddMessageParams, AddNoteParams, CheckpointParams
from rutter_core.app.facade import Rutter
from rutter_core.app.memory import CreateMemoryParams, GetMemoryParams
from rutter_core.app.pins import AddPinParams, AnswerProposalParams, ProposePinParams
from rutter_core.app.runs import CreateRunParams, InspectRunParams, ShowRunParams
from rutter_core.app.transcripts import ImportTranscriptParams
from rutter_core.app.workspaces import (
    MoveWorkspaceParams,
    RegisterWorkspaceParams,
    RemoveWorkspaceParams,
    ShowWorkspaceParams,
)
from rutter_core.discovery.fsread import FileReader
from rutter_core.kernel.errors import ConflictError, NotFoundError, RejectedError, RutterError
from rutter_core.store import Store, open_store
from tests.conftest import write_tree
from tests.testing import sqlite_file

# Every table that holds something of a workspace, and the column or query that finds it.
OWNED = {
    "workspaces": "SELECT count(*) FROM workspaces WHERE workspace_id = ?",
    "missions": "SELECT count(*) FROM missions WHERE workspace_id = ?",
    "runs": "SELECT count(*) FROM runs WHERE workspace_id = ?",
    "sessions": "SELECT count(*) FROM sessions WHERE workspace_id = ?",
    "threads": "SELECT count(*) FROM threads WHERE workspace_id = ?",
    "memories": "SELECT count(*) FROM memories WHERE workspace_id = ?",
    "run_instruction_snapshots": "SELECT count(*) FROM run_instruction_snapshots WHERE run_id IN "
    "(SELECT run_id FROM runs WHERE workspace_id = ?)",
    "continuity_nodes": "SELECT count(*) FROM continuity_nodes WHERE thread_id IN "
    "(SELECT thread_id FROM threads WHERE workspace_id = ?)",
    "continuity_snapshots": "SELECT count(*) FROM continuity_snapshots JOIN continuity_nodes "
    "USING (node_id) JOIN threads USING (thread_id) WHERE threads.workspace_id = ?",
    "messages": "SELECT count(*) FROM messages WHERE thread_id IN "
    "(SELECT thread_id FROM threads WHERE workspace_id = ?)",
    "notes": "SELECT count(*) FROM notes WHERE thread_id IN "
    "(SELECT thread_id FROM threads WHERE workspace_id = ?)",
    "pins": "SELECT count(*) FROM pins WHERE thread_id IN "
    "(SELECT thread_id FROM threads WHERE workspace_id = ?)",
    "pin_proposals": "SELECT count(*) FROM pin_proposals WHERE workspace_id = ?",
    "transcript_imports": "SELECT count(*) FROM transcript_imports WHERE thread_id IN "
    "(SELECT thread_id FROM threads WHERE workspace_id = ?)",
    "context_assemblies": "SELECT count(*) FROM context_assemblies WHERE workspace_id = ?",
    "context_assembly_reports": "SELECT count(*) FROM context_assembly_reports WHERE "
    "workspace_id = ?",
}
TRANSCRIPT = Path(__file__).parent / "fixtures" / "transcripts" / "claude-code-session.jsonl"


@pytest.fixture
def store_url(store_dialect: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    if store_dialect == "postgresql":
        return str(request.getfixturevalue("postgres_url"))
    return f"sqlite:///{tmp_path / 'rutter.db'}"


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    with open_store(store_url) as opened:
        yield opened


def db_path(store: Store) -> Path:
    return sqlite_file(store)


def raw(store: Store) -> sqlite3.Connection:
    return sqlite3.connect(db_path(store), timeout=5, isolation_level=None)


def owned(store: Store, workspace_id: str) -> dict[str, int]:
    conn = raw(store)
    try:
        return {
            table: int(conn.execute(query, (workspace_id,)).fetchone()[0])
            for table, query in OWNED.items()
        }
    finally:
        conn.close()


def triggers(store: Store) -> dict[str, str]:
    conn = raw(store)
    try:
        rows = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")
        return {str(name): str(sql) for name, sql in rows}
    finally:
        conn.close()


def files(store: Store) -> dict[str, bytes]:
    found = {}
    for suffix in ("", "-wal", "-shm"):
        path = Path(f"{db_path(store)}{suffix}")
        if path.exists():
            found[suffix or "db"] = path.read_bytes()
    return found


def rutter(store: Store) -> Rutter:
    return Rutter(store, FileReader())


def register(store: Store, workspace_id: str, root: Path) -> None:
    rutter(store).workspaces.register(
        RegisterWorkspaceParams(workspace_id=workspace_id, root=str(root), cwd=str(root))
    )


def populate(
    store: Store, workspace_id: str, secret: str, *, transcript: bool = True
) -> dict[str, Any]:
    """A run with a checkpoint, a fork of it, a message, a note, a pin, a pin proposed by an
    agent and pinned, a project memory, and an imported transcript in a thread of its own."""
    app = rutter(store)
    run = app.runs.create(
        CreateRunParams(workspace_id=workspace_id, goal="fix the parser", target="src"),
        actor="cli",
    )
    app.continuity.add_message(
        AddMessageParams(thread_id=run.thread_id, role="user", text=f"message {secret}"),
        source="cli",
    )
    app.continuity.add_note(
        AddNoteParams(thread_id=run.thread_id, kind="decision", text=f"note {secret}"),
        actor="cli",
    )
    node = app.continuity.checkpoint(
        CheckpointParams(run_id=run.run_id, title=f"checkpoint {secret}"), actor="cli"
    )
    forked = app.branches.fork(
        ForkParams(node_id=node.node_id, goal="try another way"), actor="cli"
    )
    memory = app.memory.create(
        CreateMemoryParams(
            scope="project",
            workspace_id=workspace_id,
            title=f"title {secret}",
            content=f"body {secret} " * 300,  # overflow pages too
        ),
        actor="cli",
    )
    app.pins.add(AddPinParams(thread_id=run.thread_id, text=f"pin {secret}"), actor="cli")
    proposal = app.pins.propose(
        ProposePinParams(run_id=run.run_id, text=f"proposed {secret}"), actor="mcp"
    )
    app.pins.answer(AnswerProposalParams(proposal_id=proposal.proposal_id, choice="pin"),
                    actor="cli")  # fmt: skip
    assembled = app.assembly.assemble(AssembleParams(run_id=run.run_id), actor="cli")
    app.assembly.report(
        ReportParams(assembly_id=assembled.assembly_id, followed=("AGENTS.md",)), actor="mcp"
    )
    imported = 0
    if transcript:  # one agent session lives in one thread, of one workspace
        imported = app.transcripts.import_transcript(
            ImportTranscriptParams(
                agent="claude-code", path=str(TRANSCRIPT), workspace_id=workspace_id
            ),
            actor="cli",
        ).imported
    return {
        "run": run.run_id,
        "fork": forked.run_id,
        "memory": memory.memory_id,
        "imported": imported,
    }


@pytest.fixture
def two(store: Store, tmp_path: Path) -> tuple[Path, Path]:
    demo, other = tmp_path / "demo", tmp_path / "other"
    write_tree(demo, {"AGENTS.md": "root rules\n", "src/AGENTS.md": "src rules\n"})
    write_tree(other, {"AGENTS.md": "other rules\n"})
    register(store, "demo", demo)
    register(store, "other", other)
    return demo, other


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
