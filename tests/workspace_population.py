"""A store with two workspaces and something of every kind in each (this module holds no tests):
what the workspace lifecycle and PostgreSQL tests remove and count (`OWNED`, `populate`), and
the store fixtures they run on."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rutter_core.app.assembly import AssembleParams, ReportParams
from rutter_core.app.branches import ForkParams
from rutter_core.app.continuity import AddMessageParams, AddNoteParams, CheckpointParams
from rutter_core.app.facade import Rutter
from rutter_core.app.memory import CreateMemoryParams
from rutter_core.app.pins import AddPinParams, AnswerProposalParams, ProposePinParams
from rutter_core.app.runs import CreateRunParams
from rutter_core.app.transcripts import ImportTranscriptParams
from rutter_core.app.workspaces import (
    RegisterWorkspaceParams,
)
from rutter_core.discovery.fsread import FileReader
from rutter_core.store import Store, open_store
from tests.conftest import write_tree
from tests.testing import sqlite_file

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
    """The store's SQLite file (`sqlite_file`: fails at once on another engine)."""
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
