"""An edit that replaces a memory's text says whether that text has left the store's files:
`purged` is false while another process holds a read open past the busy timeout (the old text
is then still in the write-ahead log, the edit committed all the same), true once a checkpoint
completed (nothing of the old text in the database, WAL or SHM file), null when the edit
replaced no text. Real store files and a real second connection."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from rutter_core.app.facade import Rutter
from rutter_core.app.memory import CreateMemoryParams, EditMemoryParams, GetMemoryParams
from rutter_core.store import open_store
from tests.conftest import NAMES_DESCRIPTORS, synced_files

OLD = "old-body-marker-7731"


def _files(db: Path) -> bytes:
    return b"".join(
        Path(f"{db}{suffix}").read_bytes()
        for suffix in ("", "-wal", "-shm")
        if Path(f"{db}{suffix}").exists()
    )


def _read_by_another_client(db: Path, query: str, *params: object) -> tuple[object, ...]:
    other = sqlite3.connect(db, isolation_level=None)
    try:
        return tuple(other.execute(query, params).fetchone())
    finally:
        other.close()


def test_an_edit_reports_whether_the_replaced_text_left_the_store(tmp_path: Path) -> None:
    db = tmp_path / "rutter.db"
    with open_store(f"sqlite:///{db}", busy_timeout_ms=200) as store:
        app = Rutter(store)
        created = app.memory.create(
            CreateMemoryParams(scope="user", title="t", content=f"{OLD} " * 50), actor="cli"
        )
        reader = sqlite3.connect(db, isolation_level=None)
        try:
            reader.execute("BEGIN")
            reader.execute("SELECT count(*) FROM memories").fetchall()  # a snapshot held open
            edited = app.memory.edit(
                EditMemoryParams(id=created.memory_id, version=1, content="new body"),
                actor="cli",
            )
            assert edited.purged is False
            assert edited.to_json()["purged"] is False
            assert edited.content == "new body"
            assert OLD.encode() in _files(db)  # what `purged: false` warns of
            # Committed (and synced: the purge that did not complete left that to an fsync of
            # the WAL): another client reads the new body.
            found = _read_by_another_client(
                db, "SELECT content, version FROM memories WHERE memory_id = ?",
                created.memory_id,
            )  # fmt: skip
            assert found == ("new body", 2)
        finally:
            reader.execute("COMMIT")
            reader.close()
        retitled = app.memory.edit(
            EditMemoryParams(id=created.memory_id, version=2, title="t2"), actor="cli"
        )
        assert retitled.purged is True
        assert OLD.encode() not in _files(db)  # the next checkpoint finished the job
        retention = app.memory.edit(
            EditMemoryParams(id=created.memory_id, version=3, retention="30d"), actor="cli"
        )
        assert retention.purged is None  # no text replaced
        shown = app.memory.get(GetMemoryParams(id=created.memory_id)).to_json()
        assert retention.to_json() == {**shown, "purged": None}  # the record, plus `purged`


@pytest.mark.skipif(not NAMES_DESCRIPTORS, reason="names descriptors via /proc")
def test_an_edit_giving_its_text_unchanged_with_a_new_retention_is_durable_without_a_purge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As an editor saves a memory's document: every field given, only the retention changed.
    # Its transaction was begun as a purge's (committed without its own sync), so it is made
    # durable by fsyncs; no checkpoint (a purge would empty the WAL, and wait for any reader
    # to leave first), as it replaces nothing.
    db = tmp_path / "rutter.db"
    with open_store(f"sqlite:///{db}", busy_timeout_ms=200) as store:
        app = Rutter(store)
        created = app.memory.create(
            CreateMemoryParams(scope="user", title="t", content=OLD, references=["a.md"]),
            actor="cli",
        )
        synced = synced_files(monkeypatch)
        saved = app.memory.edit(
            EditMemoryParams(
                id=created.memory_id, version=1, title="t", content=OLD,
                references=["a.md"], retention="30d",
            ),
            actor="cli",
        )  # fmt: skip
        monkeypatch.undo()
        assert saved.version == 2
        assert saved.retention_until is not None
        assert saved.purged is None  # no text replaced
        # Durable, as after an unfinished purge.
        assert [name for name, _ in synced] == ["rutter.db-wal", "rutter.db"]
        assert Path(f"{db}-wal").stat().st_size > 0  # not checkpointed
        found = _read_by_another_client(
            db, "SELECT version, retention_until IS NOT NULL FROM memories WHERE memory_id = ?",
            created.memory_id,
        )  # fmt: skip
        assert found == (2, 1)
