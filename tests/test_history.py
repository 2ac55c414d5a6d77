"""History search and read (issue 16, docs/reference/history.md) through the app facade on a real
store: substring queries in Chinese, Japanese and code identifiers, the bounded scan of short
queries, visibility by run lineage and workspace, keyset pagination across 10,000 hits with
deletes and inserts between pages, versioned handles after edit / disable / expiry / delete,
forged handles and cursors, and a memory body that leaves no trace in the store's files."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from rutter_core.app.branches import ForkParams, ResumeParams
from rutter_core.app.continuity import (
    AddMessageParams,
    AddNoteParams,
    CheckpointParams,
    EditNoteParams,
    SupersedeNoteParams,
)
from rutter_core.app.facade import Rutter
from rutter_core.app.history import HistoryReadParams, HistorySearchParams
from rutter_core.app.memory import (
    CreateMemoryParams,
    DeleteMemoryParams,
    EditMemoryParams,
    SetMemoryStatusParams,
)
from rutter_core.app.runs import CreateRunParams
from rutter_core.app.workspaces import RegisterWorkspaceParams, RemoveWorkspaceParams
from rutter_core.continuity import repo as continuity_repo
from rutter_core.history import repo as history_repo
from rutter_core.history import service as history_service
from rutter_core.history.model import HistoryHits
from rutter_core.kernel.errors import ConflictError, NotFoundError, UsageError
from rutter_core.kernel.ids import new_id
from rutter_core.store import Store, open_store
from rutter_core.store.schema import memory_text_shards
from tests.conftest import write_tree
from tests.schema5_store import main_store
from tests.testing import refused

# The tests whose store is the `store` fixture run on SQLite and on PostgreSQL.
pytestmark = pytest.mark.both_dialects


@dataclass
class World:
    app: Rutter
    store: Store
    run_id: str
    thread_id: str

    def search(self, query: str, **fields: Any) -> HistoryHits:
        fields.setdefault("run_id", self.run_id)
        return self.app.history.search(HistorySearchParams(query=query, **fields))

    def read(self, handle: str, page: int = 1) -> Any:
        return self.app.history.read(HistoryReadParams(handle=handle, page=page))

    def say(self, text: str, role: str = "user") -> Any:
        return self.app.continuity.add_message(
            AddMessageParams(thread_id=self.thread_id, role=role, text=text), source="cli"
        )

    def note(self, text: str, kind: str = "fact") -> Any:
        return self.app.continuity.add_note(
            AddNoteParams(thread_id=self.thread_id, kind=kind, text=text), actor="cli"
        )

    def remember(self, content: str, scope: str = "project", **fields: Any) -> Any:
        if scope == "project":
            fields.setdefault("workspace_id", "demo")
        return self.app.memory.create(
            CreateMemoryParams(scope=scope, title="t", content=content, **fields), actor="cli"
        )


def _world(store: Store, root: Path, workspace_id: str = "demo") -> World:
    write_tree(root, {"AGENTS.md": "rules\n"})
    app = Rutter(store)
    app.workspaces.register(
        RegisterWorkspaceParams(workspace_id=workspace_id, root=str(root), cwd="/")
    )
    run = app.runs.create(
        CreateRunParams(goal="g", workspace_id=workspace_id, target=".", mode="auto"),
        actor="cli",
    )
    return World(app, store, run.run_id, run.thread_id)


@pytest.fixture
def world(store: Store, workspace_root: Path) -> World:
    return _world(store, workspace_root)


def ids(hits: HistoryHits) -> list[str]:
    return [hit.source_id for hit in hits.hits]


# -- queries -----------------------------------------------------------------------------------


def test_substring_queries_match_cjk_japanese_and_code_identifiers(world: World) -> None:
    chinese = world.say("这条记录删除后不可恢复的。请谨慎操作")
    japanese = world.say("設定ファイルを読み込みます", role="assistant")
    code = world.say("def parse_input_stream(buf): return buf", role="tool")
    other = world.say("nothing to see here")
    assert ids(world.search("不可恢复")) == [chinese.message_id]
    assert ids(world.search("ファイル")) == [japanese.message_id]
    found = world.search("input_stream")
    assert ids(found) == [code.message_id]
    assert found.hits[0].source_kind == "receipt"
    assert "parse_input_stream" in found.hits[0].snippet
    assert ids(world.search("INPUT_Stream")) == [code.message_id]  # case-insensitive
    # Shorter than a trigram: the bounded scan still finds it.
    assert ids(world.search("恢复")) == [chinese.message_id]
    assert ids(world.search("設定")) == [japanese.message_id]
    assert ids(world.search("EE")) == [other.message_id]
    assert world.search("不可恢复x").hits == ()


def test_every_scope_is_searched_and_scopes_narrow_it(world: World) -> None:
    marker = "kestrel"
    memory = world.remember(f"{marker} project memory")
    user = world.remember(f"{marker} user memory", scope="user")
    note = world.note(f"{marker} decision", kind="decision")
    summary = world.note(f"{marker} summary", kind="summary")
    message = world.say(f"{marker} says hi")
    receipt = world.say(f"{marker} tool output", role="tool")
    node = world.app.continuity.checkpoint(
        CheckpointParams(run_id=world.run_id, title="cp", summary=f"{marker} checkpoint"),
        actor="cli",
    )
    found = world.search(marker)
    kinds = {hit.source_id: hit.source_kind for hit in found.hits}
    assert kinds == {
        memory.memory_id: "memory",
        user.memory_id: "memory",
        note.note_id: "note",
        summary.note_id: "summary",
        message.message_id: "message",
        receipt.message_id: "receipt",
        node.node_id: "checkpoint",
    }
    assert found.next_cursor is None
    # Memories first, then the thread's content, newest first.
    assert ids(found)[:2] == [user.memory_id, memory.memory_id]
    assert ids(world.search(marker, scopes=["receipt", "summary"])) == [
        receipt.message_id,
        summary.note_id,
    ]
    # A workspace alone sees memories only.
    alone = world.app.history.search(HistorySearchParams(query=marker, workspace_id="demo"))
    assert set(ids(alone)) == {memory.memory_id, user.memory_id}


def test_other_workspaces_and_threads_are_invisible(
    world: World, store: Store, tmp_path: Path
) -> None:
    other = _world(store, tmp_path / "other", "other")
    mine = world.say("heron in my thread")
    other.say("heron in another thread")
    theirs = other.remember("heron in their project", workspace_id="other")
    assert ids(world.search("heron")) == [mine.message_id]
    assert ids(other.search("heron"))[0] == theirs.memory_id
    refused(
        UsageError,
        "run_not_in_workspace",
        lambda: world.search("heron", workspace_id="other"),
    )
    refused(NotFoundError, "run_not_found", lambda: world.search("heron", run_id="run_x"))


def test_bad_queries_scopes_and_limits_are_typed_errors(world: World) -> None:
    refused(UsageError, "invalid_query", lambda: world.search("   "))
    refused(UsageError, "invalid_query", lambda: world.search("x" * 257))
    refused(UsageError, "invalid_limit", lambda: world.search("abc", limit=51))
    refused(UsageError, "invalid_limit", lambda: world.search("abc", limit=0))
    error = refused(UsageError, "invalid_scope", lambda: world.search("abc", scopes=["bogus"]))
    assert "bogus" not in error.message
    refused(UsageError, "invalid_page", lambda: world.read("rh1.a.b", page=0))
    with pytest.raises(ValidationError, match="extra_forbidden"):
        HistorySearchParams(query="a", surprise=1)  # type: ignore[call-arg]


# -- pagination --------------------------------------------------------------------------------


def test_pages_across_10000_hits_skip_and_repeat_nothing_under_deletes_and_inserts(
    world: World,
) -> None:
    """9,000 messages and 1,000 notes match; between pages notes are superseded (some already
    seen, some not yet) and new matching messages are added: the old cursor keeps its source
    set, so every hit comes exactly once, minus the ones deleted before they were reached."""
    with world.store.write() as conn:
        for n in range(9000):
            continuity_repo.insert_message(
                conn, message_id=new_id("msg"), thread_id=world.thread_id, seq=n + 1,
                role="user", text=f"needle message {n}", redacted=False, source="cli",
                external_id=None, now="2026-01-01T00:00:00Z",
            )  # fmt: skip
            if n % 9 == 0:
                continuity_repo.insert_note(
                    conn, note_id=new_id("note"), thread_id=world.thread_id, kind="fact",
                    text=f"needle note {n}", redacted=False, actor="cli",
                    now="2026-01-01T00:00:00Z",
                )  # fmt: skip
    everything = set()
    notes: list[tuple[str, int]] = []
    with world.store.read() as conn:
        for row in conn.exec_driver_sql("SELECT source_id, version FROM history_entries"):
            everything.add(str(row[0]))
            if str(row[0]).startswith("note_"):
                notes.append((str(row[0]), int(row[1])))
    assert len(everything) == 10000
    seen: list[str] = []
    deleted_unseen: set[str] = set()
    added: set[str] = set()
    cursor = None
    pages = 0
    while True:
        page = world.search("needle", limit=50, cursor=cursor)
        seen.extend(ids(page))
        pages += 1
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
        if pages % 20 == 0:
            # Supersede one note already seen (if any) and one not reached yet; add a message.
            seen_set = set(seen)
            for note_id, version in notes[:]:
                if note_id in seen_set:
                    _supersede(world, note_id, version)
                    notes.remove((note_id, version))
                    break
            for note_id, version in notes[:]:
                if note_id not in seen_set:
                    _supersede(world, note_id, version)
                    notes.remove((note_id, version))
                    deleted_unseen.add(note_id)
                    break
            added.add(world.say("needle added later").message_id)
    assert len(seen) == len(set(seen))  # nothing repeated
    assert set(seen) == everything - deleted_unseen  # nothing skipped, nothing new
    assert not added & set(seen)
    assert deleted_unseen
    assert added
    # A new search sees the new ones and not the superseded.
    fresh = {hit.source_id for hit in world.search("needle added later", limit=50).hits}
    assert fresh == added


def _supersede(world: World, note_id: str, version: int) -> None:
    world.app.continuity.supersede_note(
        SupersedeNoteParams(note_id=note_id, version=version), actor="cli"
    )


def test_short_queries_page_through_the_bounded_scan(world: World) -> None:
    made = [world.say(f"第{n}条消息 ab") for n in range(5)]
    seen = []
    cursor = None
    for _ in range(20):
        page = world.search("ab", limit=2, cursor=cursor, scopes=["message"])
        seen.extend(ids(page))
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == [m.message_id for m in reversed(made)]


def test_the_bounded_scan_examines_only_what_the_run_may_see(
    world: World, store: Store, tmp_path: Path
) -> None:
    """2,500 newer entries of another workspace's thread do not push this run's hits past the
    first page (the scan walks the visible owners' entries), and a thread with more entries
    than the bound pages on with a cursor until its hits are all found."""
    memory = world.remember("记忆 里的 设定")
    mine = world.say("设定 in my thread")
    other = _world(store, tmp_path / "other", "other")
    with store.write() as conn:
        for n in range(2500):
            continuity_repo.insert_message(
                conn, message_id=new_id("msg"), thread_id=other.thread_id, seq=n + 1,
                role="user", text=f"设定 {n}", redacted=False, source="cli",
                external_id=None, now="2026-01-01T00:00:00Z",
            )  # fmt: skip
    first = world.search("设定")
    assert ids(first) == [memory.memory_id, mine.message_id]
    assert first.next_cursor is None
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        page = other.search("设定", limit=50, cursor=cursor, scopes=["message"])
        seen.extend(ids(page))
        pages += 1
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert len(seen) == len(set(seen)) == 2500
    assert pages == 50


# -- handles -----------------------------------------------------------------------------------


def test_a_handle_reads_in_pages_and_is_rechecked_on_every_page(world: World) -> None:
    long_text = "osprey " + "x" * 9000
    note = world.note(long_text)
    (hit,) = world.search("osprey").hits
    first = world.read(hit.handle)
    assert (first.page, first.pages) == (1, 3)
    assert first.text == long_text[:4000]
    assert world.read(hit.handle, 3).text == long_text[8000:]
    refused(UsageError, "page_out_of_range", lambda: world.read(hit.handle, 4))
    world.app.continuity.edit_note(
        EditNoteParams(note_id=note.note_id, version=1, text="osprey changed"), actor="cli"
    )
    error = refused(ConflictError, "conflict", lambda: world.read(hit.handle, 2))
    assert "osprey" not in error.message
    (again,) = world.search("osprey").hits
    assert world.read(again.handle).text == "osprey changed"
    _supersede(world, note.note_id, 2)
    refused(NotFoundError, "gone", lambda: world.read(again.handle))


def test_memory_handles_after_edit_disable_expiry_and_delete(world: World) -> None:
    memory = world.remember("plover memory body", retention="30d")
    (hit,) = world.search("plover").hits
    assert world.read(hit.handle).text == "t\nplover memory body"
    # Expiry: read as of after the retention.
    with pytest.raises(NotFoundError) as gone:
        history_service.read(
            world.store, handle=hit.handle, page=1, now="2999-01-01T00:00:00Z",
            visibility=lambda conn, r, w: history_service.Visibility(
                memory_owners=("local-user", "demo"), thread_owners=()
            ),
        )  # fmt: skip
    assert gone.value.code == "gone"
    world.app.memory.edit(
        EditMemoryParams(id=memory.memory_id, version=1, content="plover edited"), actor="cli"
    )
    refused(ConflictError, "conflict", lambda: world.read(hit.handle))
    (edited,) = world.search("plover").hits
    world.app.memory.set_status(
        SetMemoryStatusParams(id=memory.memory_id, version=2, status="disabled"), actor="cli"
    )
    error = refused(NotFoundError, "gone", lambda: world.read(edited.handle))
    assert error.to_json().get("details") in (None, {})
    assert world.search("plover").hits == ()
    world.app.memory.set_status(
        SetMemoryStatusParams(id=memory.memory_id, version=3, status="active"), actor="cli"
    )
    (enabled,) = world.search("plover").hits
    world.app.memory.delete(DeleteMemoryParams(id=memory.memory_id, version=4), actor="cli")
    refused(NotFoundError, "gone", lambda: world.read(enabled.handle))


def test_forged_and_garbled_handles_and_cursors_are_typed_errors(
    world: World, store: Store, tmp_path: Path
) -> None:
    world.remember("secretive project fact")
    (hit,) = world.search("secretive").hits
    head, payload, mac = hit.handle.split(".")
    forged = (
        "",
        "garbage",
        f"{head}.{payload}",
        f"{head}.{payload}.AAAA",
        f"{head}.{payload[:-2]}.{mac}",
        "rh1.!!.!!",
        f"rc1.{payload}.{mac}",
    )
    for bad in forged:
        refused(UsageError, "invalid_handle", lambda bad=bad: world.read(bad))
    # A handle of another store (another secret) names nothing here.
    with open_store(f"sqlite:///{tmp_path / 'second.db'}") as second:
        elsewhere = _world(second, tmp_path / "second")
        elsewhere.remember("secretive elsewhere")
        (foreign,) = elsewhere.search("secretive").hits
    refused(UsageError, "invalid_handle", lambda: world.read(foreign.handle))
    for _ in range(3):
        world.say("paged secretive message")
    page = world.search("secretive", limit=1)
    assert page.next_cursor is not None
    refused(UsageError, "invalid_cursor", lambda: world.search("secretive", cursor="rc1.x.y"))
    refused(
        UsageError,
        "invalid_cursor",
        lambda: world.search("secretive message", limit=1, cursor=page.next_cursor),
    )
    refused(
        UsageError,
        "invalid_cursor",
        lambda: world.search("secretive", limit=1, cursor=page.next_cursor, scopes=["memory"]),
    )


# -- no trace ----------------------------------------------------------------------------------

MARKER = "鼷鼶鼵鼴鼳鼲"
"""Characters no other text here holds: each trigram of it is a term of its own in the index,
stored with at least its last two characters whole."""


def _windows() -> list[bytes]:
    return [MARKER[i + 1 : i + 3].encode() for i in range(len(MARKER) - 2)]


def _files(db: Path) -> bytes:
    return b"".join(
        Path(f"{db}{suffix}").read_bytes()
        for suffix in ("", "-wal", "-shm")
        if Path(f"{db}{suffix}").exists()
    )


def test_a_deleted_or_disabled_memory_leaves_no_trace_in_the_index_or_the_files(
    tmp_path: Path,
) -> None:
    db = tmp_path / "rutter.db"
    with open_store(f"sqlite:///{db}") as store:
        world = _world(store, tmp_path / "ws")
        for n in range(30):
            world.remember(f"unrelated memory {n}")
        kept = world.remember(f"{MARKER} disabled one")
        assert ids(world.search(MARKER)) == [kept.memory_id]
        store.purge()
        before = _files(db)
        # The memory row, the index's copy and its terms: several of each window.
        assert all(before.count(window) >= 2 for window in _windows())
        world.app.memory.set_status(
            SetMemoryStatusParams(id=kept.memory_id, version=1, status="disabled"), actor="cli"
        )
        after = _files(db)
        # Only the memories row keeps its body (a disabled memory is still listed with --all).
        assert all(after.count(window) == 1 for window in _windows()), [
            after.count(w) for w in _windows()
        ]
        assert world.search(MARKER).hits == ()
        world.app.memory.delete(DeleteMemoryParams(id=kept.memory_id, version=2), actor="cli")
        gone = _files(db)
        assert all(window not in gone for window in _windows())
        # Deleted while indexed (active) too.
        active = world.remember(f"{MARKER} deleted while active")
        assert all(_files(db).count(window) >= 2 for window in _windows())
        world.app.memory.delete(DeleteMemoryParams(id=active.memory_id, version=1), actor="cli")
        final = _files(db)
        assert all(window not in final for window in _windows())
    raw = sqlite3.connect(db)
    try:
        indexed = sum(
            raw.execute(f"SELECT count(*) FROM {shard}").fetchone()[0]
            for shard in memory_text_shards
        )
        assert indexed == 30
    finally:
        raw.close()


def test_removing_a_workspace_removes_its_entries(
    world: World, store: Store, tmp_path: Path
) -> None:
    other = _world(store, tmp_path / "other", "other")
    world.say("egret here")
    world.remember("egret project")
    world.remember("egret user", scope="user")
    other.say("egret there")
    world.app.workspaces.remove(RemoveWorkspaceParams(workspace_id="demo", cascade=True))
    with store.read() as conn:
        owners = {
            str(row[0]) for row in conn.exec_driver_sql("SELECT owner_id FROM history_entries")
        }
    assert owners == {"local-user", other.thread_id}
    assert [hit.source_kind for hit in other.search("egret").hits] == ["memory", "message"]


def test_an_upgraded_store_indexes_what_it_held_before_on_the_first_search(
    tmp_path: Path,
) -> None:
    """A store made at schema 5 (tests/fixtures/schema5: memories, a message, a summary note
    and a checkpoint) upgrades to the index; its first search indexes every active source
    once, in one write; a disabled memory stays out."""
    db = main_store(tmp_path)
    run_id = "run_01M8Y38PRJECZBCTHKHTWD47FX"
    with open_store(f"sqlite:///{db}") as store:
        app = Rutter(store)
        with store.read() as conn:
            assert conn.exec_driver_sql("SELECT count(*) FROM history_entries").scalar() == 0
        # A write after the upgrade indexes itself; the backfill does not repeat it.
        app.continuity.add_message(
            AddMessageParams(
                thread_id="thr_01M8Y38PRGQ72NFGXDV3RRH9N1", role="tool", text="parser ok"
            ),
            source="cli",
        )
        found = app.history.search(HistorySearchParams(query="parser", run_id=run_id))
        # Backfilled entries come after the ones written since the upgrade.
        assert [hit.source_kind for hit in found.hits] == ["summary", "message", "receipt"]
        checkpoint = app.history.search(HistorySearchParams(query="reviewed", run_id=run_id))
        assert [hit.source_kind for hit in checkpoint.hits] == ["checkpoint", "summary"]
        memories = app.history.search(HistorySearchParams(query="e", run_id=run_id))
        assert {hit.source_id for hit in memories.hits if hit.source_kind == "memory"} == {
            "mem_01M8Y38PS2TM4B16M0NAYAYWYS",
            "mem_01M8Y38PS7HSVEEAXXV47S5P09",
        }
        with store.read() as conn:
            count = conn.exec_driver_sql("SELECT count(*) FROM history_entries").scalar()
            pending = conn.exec_driver_sql("SELECT backfill_pending FROM history_state").scalar()
        assert (count, pending) == (6, 0)
        assert app.history.read(HistoryReadParams(handle=found.hits[0].handle)).text == (
            "parser reviewed"
        )


def test_a_forked_run_sees_its_lineage_and_its_source_does_not_see_the_fork(
    world: World,
) -> None:
    before = world.say("ibis before the fork")
    node = world.app.continuity.checkpoint(
        CheckpointParams(run_id=world.run_id, title="cp"), actor="cli"
    )
    fork = world.app.branches.fork(ForkParams(node_id=node.node_id, goal="alt"), actor="cli")
    forked = World(world.app, world.store, fork.run_id, fork.thread_id)
    after = forked.say("ibis in the fork")
    grandchild = world.app.branches.resume(ResumeParams(node_id=fork.node_id), actor="cli")
    assert ids(forked.search("ibis")) == [after.message_id, before.message_id]
    assert ids(world.search("ibis")) == [before.message_id]
    third = World(world.app, world.store, grandchild.run_id, grandchild.thread_id)
    assert ids(third.search("ibis")) == [after.message_id, before.message_id]
    # A handle of the fork's search reads the source thread's message; the source run's
    # handle for the fork's message does not exist, and a forged one would not verify.
    (hit,) = [h for h in forked.search("ibis").hits if h.source_id == before.message_id]
    assert forked.read(hit.handle).text == "ibis before the fork"


def test_memories_in_every_shard_page_newest_first_once_each(world: World) -> None:
    """Memories are indexed in shards by entry ID; a search merges them: paged with a cursor,
    by the index (a 3+ character query) and by the bounded scan (shorter), every memory comes
    exactly once, newest first, and an edited one only by its new text."""
    made = [world.remember(f"sharded kiwi {n:03d}", scope="user") for n in range(3 * 16 + 5)]
    shards = {history_repo.shard_of(entry_id) for entry_id in _entry_ids(world, made)}
    assert shards == set(memory_text_shards)
    edited = world.app.memory.edit(
        EditMemoryParams(id=made[7].memory_id, version=1, content="sharded plum"), actor="cli"
    )
    world.app.memory.delete(DeleteMemoryParams(id=made[8].memory_id, version=1), actor="cli")
    gone = {made[7].memory_id, made[8].memory_id}
    expected = [m.memory_id for m in reversed(made) if m.memory_id not in gone]
    for query in ("sharded kiwi", "ki"):
        seen: list[str] = []
        cursor = None
        while True:
            page = world.search(query, limit=7, cursor=cursor, scopes=["memory"])
            seen.extend(ids(page))
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        assert seen == expected, query
    assert ids(world.search("sharded plum", scopes=["memory"])) == [edited.memory_id]


def _entry_ids(world: World, memories: list[Any]) -> list[int]:
    with world.store.read() as conn:
        found = [history_repo.find_entry_id(conn, m.memory_id) for m in memories]
    return [entry[0] for entry in found if entry is not None]
