"""The memory index of history search survives many edits, and a store whose index the old
compaction damaged is whole again after migration 11. Real store files, real SQLite.

On SQLite 3.40, FTS5 `optimize` (the compaction before issue 12) makes the index report itself
corrupt after about 1,000 merges, whatever the table's size; every memory write failed from
then on with `store_corrupt`."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from rutter_core.app.facade import Rutter
from rutter_core.app.history import HistorySearchParams
from rutter_core.app.memory import CreateMemoryParams, EditMemoryParams
from rutter_core.kernel.clock import rfc3339, utc_now
from rutter_core.kernel.ids import new_id
from rutter_core.store import open_store
from rutter_core.store.migrations import MIGRATIONS
from rutter_core.store.schema import memory_text_shards

BODY = "Prefer table-driven tests; keep fixtures next to the test that uses them. "


def test_more_than_a_thousand_edits_keep_the_memory_index_whole(tmp_path: Path) -> None:
    with open_store(f"sqlite:///{tmp_path / 'rutter.db'}") as store:
        app = Rutter(store)
        versions: dict[str, int] = {}
        for n in range(20):
            made = app.memory.create(
                CreateMemoryParams(scope="user", title=f"m{n}", content=BODY), actor="cli"
            )
            versions[made.memory_id] = made.version
        ids = list(versions)
        for turn in range(1, 1_201):
            memory_id = ids[turn % len(ids)]
            edited = app.memory.edit(
                EditMemoryParams(
                    id=memory_id, version=versions[memory_id], content=f"{BODY}turn{turn:05d}"
                ),
                actor="cli",
            )
            versions[memory_id] = edited.version
        found = app.history.search(HistorySearchParams(query="turn01200"))
        assert [hit.source_id for hit in found.hits] == [ids[1_200 % len(ids)]]
        old = app.history.search(HistorySearchParams(query="turn01180"))
        assert old.hits == ()  # replaced by turn 1200 (same memory), so gone from the index


def _remember_as_before_12(db: Path, *, title: str, content: str) -> str:
    """A user memory written as rutter did before migration 12 (one memory index table)."""
    memory_id = new_id("mem")
    body = f"{title}\n{content}"
    now = rfc3339(utc_now())
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(
            "INSERT INTO memories (memory_id, scope, scope_id, workspace_id, title, content, "
            "content_sha256, status, source_kind, references_json, retention_until, redacted, "
            "created_by, updated_by, version, created_at, updated_at) VALUES "
            "(?, 'user', 'local-user', NULL, ?, ?, ?, 'active', 'operator_explicit', '[]', NULL,"
            " 0, 'cli', 'cli', 1, ?, ?)",
            (memory_id, title, content, _sha256(content), now, now),
        )
        entry_id = conn.execute("SELECT last_entry_id + 1 FROM history_state").fetchone()[0]
        conn.execute("UPDATE history_state SET last_entry_id = ?", (entry_id,))
        conn.execute(
            "INSERT INTO history_entries (entry_id, source_kind, source_id, owner_id, "
            "workspace_id, version, content_sha256, expires_at) "
            "VALUES (?, 'memory', ?, 'local-user', NULL, 1, ?, NULL)",
            (entry_id, memory_id, _sha256(body)),
        )
        conn.execute(
            "INSERT INTO history_memory_text (rowid, body) VALUES (?, ?)", (entry_id, body)
        )
        conn.execute("COMMIT")
    finally:
        conn.close()
    return memory_id


def _tables_named(db: Path, name: str) -> list[str]:
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE name = ?", (name,)).fetchall()
    finally:
        conn.close()
    return [str(row[0]) for row in rows]


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _damage_memory_index(db: Path) -> None:
    """What the old compaction did to a busy store: delete, insert and `optimize`, ~1,000 times
    over a few dozen memories (rows of no entry's, which search never shows)."""
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        rows = range(999_000, 999_030)
        conn.executemany(
            "INSERT INTO history_memory_text (rowid, body) VALUES (?, ?)",
            [(row, BODY * 4) for row in rows],
        )
        for turn in range(3_000):
            row = rows[turn % len(rows)]
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("DELETE FROM history_memory_text WHERE rowid = ?", (row,))
            conn.execute(
                "INSERT INTO history_memory_text (rowid, body) VALUES (?, ?)",
                (row, f"{BODY * 4}{turn}"),
            )
            try:
                conn.execute(
                    "INSERT INTO history_memory_text (history_memory_text) VALUES ('optimize')"
                )
            except sqlite3.DatabaseError:
                conn.execute("ROLLBACK")
                return
            conn.execute("COMMIT")
        raise AssertionError("this SQLite's FTS5 did not fail; the repair has nothing to repair")
    finally:
        conn.close()


def _index_is_whole(db: Path, table: str = "history_memory_text") -> bool:
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute(f"INSERT INTO {table} ({table}) VALUES ('integrity-check')")
        return True
    except sqlite3.DatabaseError:
        return False
    finally:
        conn.close()


def test_migration_11_makes_a_damaged_memory_index_whole(tmp_path: Path) -> None:
    db = tmp_path / "rutter.db"
    before = tuple(m for m in MIGRATIONS if m.version < 11)
    open_store(f"sqlite:///{db}", migrations=before).close()
    made_id = _remember_as_before_12(db, title="kept", content=f"{BODY} survivor-4417")
    if sqlite3.sqlite_version_info >= (3, 42, 0):
        pytest.skip("this SQLite's FTS5 does not break this way: nothing to damage")
    _damage_memory_index(db)
    assert not _index_is_whole(db)
    through_11 = tuple(m for m in MIGRATIONS if m.version <= 11)
    with open_store(f"sqlite:///{db}", migrations=through_11) as store:  # 11 runs here
        app = Rutter(store)
        assert _index_is_whole(db)
    with open_store(f"sqlite:///{db}") as store:  # and the later ones (12 shards the index)
        app = Rutter(store)
        assert all(_index_is_whole(db, shard) for shard in memory_text_shards)
        assert not _tables_named(db, "history_memory_text")  # moved into the shards, dropped
        hits = app.history.search(HistorySearchParams(query="survivor-4417")).hits
        assert [hit.source_id for hit in hits] == [made_id]
        edited = app.memory.edit(
            EditMemoryParams(id=made_id, version=1, content="after repair"), actor="cli"
        )
        assert edited.version == 2
        assert app.history.search(HistorySearchParams(query="survivor-4417")).hits == ()
