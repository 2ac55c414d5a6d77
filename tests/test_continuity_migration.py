"""Migration 5 ("continuity_content"): a store made by main at schema 4 (949c448, with a
workspace, runs and memories: `tests/fixtures/schema4/store.sql`) opens, upgrades in one
checksummed transaction and keeps its data; the new append-only tables refuse every rewrite,
from rutter and from plain sqlite3."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.exc import OperationalError

from rutter_core.app.continuity import AddMessageParams, AddNoteParams, CheckpointParams
from rutter_core.app.facade import Rutter
from rutter_core.app.memory import ListMemoriesParams
from rutter_core.app.runs import ListRunsParams, ShowRunParams
from rutter_core.kernel.errors import ConflictError
from rutter_core.runs.service import latest_revision
from rutter_core.store import MIGRATIONS, Store, migration_checksum, open_store
from tests.conftest import write_tree

DUMP = Path(__file__).parent / "fixtures" / "schema4" / "store.sql"
NEW_TABLES = {"messages", "notes", "continuity_snapshots"}
MAIN_LEDGER = [
    (1, "workspaces", "84050c41c8de4ac7de61c7ff6126f0faa02481e049dd04abdc1ac2b64c7991af"),
    (2, "runs", "b20a78d216606dd03257f1ef8ed2d5cc42396f9cbe29e45d29f5bed697997a1f"),
    (3, "memory", "511463a2e2b1281b3ce857ebaddf49a344460dcc76d8e23218528ec916982f07"),
    (4, "append_only_keys", "299439096381d591c060625656e82b3bb2c609158757bf765867636ea33bfcf4"),
]


def main_store(tmp_path: Path) -> tuple[Path, Path]:
    """The dump loaded into a fresh file, its workspace root pointing at a real directory with
    the instruction files the dump's runs pinned."""
    root = (tmp_path / "demo").resolve()
    write_tree(
        root,
        {
            "AGENTS.md": "Run the tests before committing.\n",
            "services/api/AGENTS.md": "API rules.\n",
        },
    )
    db = tmp_path / "rutter.db"
    conn = sqlite3.connect(db)
    try:
        conn.executescript(DUMP.read_text(encoding="utf-8").replace("@WORKSPACE_ROOT@", str(root)))
    finally:
        conn.close()
    return db, root


def raw(db: Path, sql: str, *params: object) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(db)
    try:
        return [tuple(row) for row in conn.execute(sql, params)]
    finally:
        conn.close()


def tables(db: Path) -> set[str]:
    return {str(name) for (name,) in raw(db, "SELECT name FROM sqlite_master WHERE type='table'")}


@pytest.fixture
def upgraded(tmp_path: Path) -> Iterator[tuple[Store, Path]]:
    db, _root = main_store(tmp_path)
    store = open_store(f"sqlite:///{db}")
    try:
        yield store, db
    finally:
        store.close()


def test_the_dump_is_a_schema_4_store_made_by_main(tmp_path: Path) -> None:
    db, _root = main_store(tmp_path)
    assert raw(db, "SELECT version, name, checksum FROM schema_migrations") == MAIN_LEDGER
    assert not NEW_TABLES & tables(db)
    counts = {
        table: raw(db, f"SELECT count(*) FROM {table}")[0][0]
        for table in ("workspaces", "runs", "memories", "continuity_nodes")
    }
    assert counts == {"workspaces": 1, "runs": 2, "memories": 3, "continuity_nodes": 2}


def test_it_upgrades_to_migration_5_with_its_checksum_and_keeps_its_data(
    tmp_path: Path,
) -> None:
    db, _root = main_store(tmp_path)
    before = {
        table: raw(db, f"SELECT * FROM {table} ORDER BY 1")
        for table in ("workspaces", "missions", "threads", "sessions", "runs",
                      "continuity_nodes", "run_instruction_snapshots", "memories")
    }  # fmt: skip
    with open_store(f"sqlite:///{db}") as store:
        rutter = Rutter(store)
        runs = rutter.runs.list(ListRunsParams(all=True)).runs
        assert [run.goal for run in runs] == ["review the parser", "continue the review"]
        for run in runs:
            assert rutter.runs.show(ShowRunParams(run_id=run.run_id)).revision == 1
            pinned = latest_revision(store, run.run_id)
            assert pinned is not None  # verified against itself and its run
        listed = rutter.memory.list(ListMemoriesParams(workspace_id="demo", all=True))
        assert sorted(m.title for m in listed.items) == ["Editor", "Old", "Tests"]

    ledger = raw(db, "SELECT version, name, checksum FROM schema_migrations ORDER BY version")
    assert ledger[
        : len(MAIN_LEDGER) + 1
    ] == [  # later ones follow (6: tests/test_pins_migration.py)
        *MAIN_LEDGER,
        (5, "continuity_content", migration_checksum(MIGRATIONS[4], "sqlite")),
    ]
    # and every later migration, in order
    assert [row[0] for row in ledger] == [m.version for m in MIGRATIONS]
    assert tables(db) >= NEW_TABLES
    after = {table: raw(db, f"SELECT * FROM {table} ORDER BY 1") for table in before}
    # Not a row changed; migration 16 gave each workspace its own local project, and migration
    # 17 added who owns a memory and which person wrote it: on this engine the old rows name
    # nobody (the store's one person); migration 20 the machine, which no old row has yet.
    before["workspaces"] = [(*row, f"local:{row[0]}", None) for row in before["workspaces"]]
    before["memories"] = [(*row, None, None, None) for row in before["memories"]]
    # Migration 21 added who made each record, beside the surface: null on the old rows.
    added = {"missions": 1, "threads": 1, "sessions": 1, "runs": 2, "continuity_nodes": 1,
             "run_instruction_snapshots": 1}  # fmt: skip
    for table, count in added.items():
        before[table] = [(*row, *(None,) * count) for row in before[table]]
    assert after == before


def test_the_upgraded_store_takes_content_and_checkpoints(
    upgraded: tuple[Store, Path],
) -> None:
    store, _db = upgraded
    rutter = Rutter(store)
    first = rutter.runs.list(ListRunsParams(all=True)).runs[0]
    continuity = rutter.continuity
    continuity.add_message(
        AddMessageParams(thread_id=first.thread_id, role="user", text="after the upgrade"),
        source="cli",
    )
    continuity.add_note(
        AddNoteParams(thread_id=first.thread_id, kind="summary", text="reviewed"), actor="cli"
    )
    node = continuity.checkpoint(
        CheckpointParams(run_id=first.run_id, title="upgraded"), actor="cli"
    )
    assert node.snapshot is not None
    assert node.snapshot.messages.total == 1
    # Two active memories of three (one is disabled): the user's and the project's.
    assert node.snapshot.memory.total_active == 2
    assert node.snapshot.project_configuration.matches_pinned is True


def test_a_failing_migration_5_leaves_the_store_at_4(tmp_path: Path) -> None:
    """One transaction: a statement of migration 5 that fails rolls back every one before it
    and the ledger row."""
    db, _root = main_store(tmp_path)
    conn = sqlite3.connect(db)
    try:  # in the way of migration 5's last statement, after its tables
        conn.execute("CREATE INDEX continuity_nodes_by_run ON continuity_nodes (kind)")
        conn.commit()
    finally:
        conn.close()
    with pytest.raises(OperationalError, match="continuity_nodes_by_run already exists"):
        open_store(f"sqlite:///{db}")
    assert [row[0] for row in raw(db, "SELECT version FROM schema_migrations")] == [1, 2, 3, 4]
    assert not NEW_TABLES & tables(db)


# -- append-only, from any client ---------------------------------------------------------------


def seeded(store: Store) -> tuple[str, str]:
    """A message (with an external ID) and a checkpoint in the upgraded store: (thread, node)."""
    rutter = Rutter(store)
    run = rutter.runs.list(ListRunsParams(all=True)).runs[0]
    rutter.continuity.add_message(
        AddMessageParams(thread_id=run.thread_id, role="user", text="kept", external_id="e1"),
        source="import:codex",
    )
    node = rutter.continuity.checkpoint(CheckpointParams(run_id=run.run_id, title="t"), actor="cli")
    return run.thread_id, node.node_id


REWRITES = (
    "UPDATE messages SET text = 'changed'",
    "DELETE FROM messages",
    "INSERT OR REPLACE INTO messages SELECT * FROM messages",
    "REPLACE INTO messages SELECT * FROM messages",
    # A new row taking a used (thread, source, external ID), or a used (thread, seq).
    "INSERT INTO messages SELECT 'msg_' || substr(message_id, 5, 25) || 'Z', thread_id, seq + 1, "
    "role, text, redacted, source, external_id, created_at, injected, source_person FROM messages",
    "INSERT INTO messages SELECT 'msg_' || substr(message_id, 5, 25) || 'Z', thread_id, seq, "
    "role, text, redacted, source, NULL, created_at, injected, source_person FROM messages",
    "UPDATE continuity_snapshots SET title = 'changed'",
    "DELETE FROM continuity_snapshots",
    "INSERT OR REPLACE INTO continuity_snapshots SELECT * FROM continuity_snapshots",
    "UPDATE continuity_nodes SET kind = 'root' WHERE kind = 'checkpoint'",
    "DELETE FROM continuity_nodes WHERE kind = 'checkpoint'",
)


@pytest.mark.parametrize("statement", REWRITES)
def test_append_only_tables_refuse_rewrites_through_rutter(
    upgraded: tuple[Store, Path], statement: str
) -> None:
    store, db = upgraded
    seeded(store)
    before = raw(db, "SELECT * FROM messages") + raw(db, "SELECT * FROM continuity_snapshots")
    with pytest.raises(ConflictError) as refused, store.write() as conn:
        conn.exec_driver_sql(statement)
    assert refused.value.code == "conflict"
    assert refused.value.details["constraint"] in {"append_only", "unique"}
    assert raw(db, "SELECT * FROM messages") + raw(db, "SELECT * FROM continuity_snapshots") == (
        before
    )


@pytest.mark.parametrize("statement", REWRITES)
def test_append_only_tables_refuse_rewrites_through_plain_sqlite3(
    upgraded: tuple[Store, Path], statement: str
) -> None:
    store, db = upgraded
    seeded(store)
    before = raw(db, "SELECT * FROM messages") + raw(db, "SELECT * FROM continuity_snapshots")
    conn = sqlite3.connect(db)
    try:
        with pytest.raises(sqlite3.IntegrityError):
            conn.execute(statement)
        conn.rollback()
    finally:
        conn.close()
    assert raw(db, "SELECT * FROM messages") + raw(db, "SELECT * FROM continuity_snapshots") == (
        before
    )


def test_notes_are_versioned_records_not_append_only(upgraded: tuple[Store, Path]) -> None:
    """Notes change (edit, supersede): only the CHECKs guard their values."""
    store, db = upgraded
    thread_id, _node = seeded(store)
    note = Rutter(store).continuity.add_note(
        AddNoteParams(thread_id=thread_id, kind="fact", text="x"), actor="cli"
    )
    conn = sqlite3.connect(db)
    try:
        with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
            conn.execute("UPDATE notes SET created_by = 'model' WHERE note_id = ?", (note.note_id,))
        with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
            conn.execute("UPDATE notes SET kind = 'wish' WHERE note_id = ?", (note.note_id,))
        with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
            conn.execute(  # a superseding note only on a superseded one
                "UPDATE notes SET superseded_by = note_id WHERE note_id = ?", (note.note_id,)
            )
    finally:
        conn.close()
