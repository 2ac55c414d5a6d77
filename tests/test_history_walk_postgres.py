"""History search on PostgreSQL walks the newest rows in key order before it asks the trigram
index (`full_text_walk`), and answers exactly as SQLite's FTS5 index does: the same hits in the
same order, page by page, with the same handles and cursors, whether a page comes from the
walk, from the index, or from both (walks as small as 2 rows force the hand-over in the middle
of pages), for CJK, code identifiers, LIKE's own characters, case, short queries (the bounded
scan), deleted and edited sources, other threads, and other people's user memories, which the
engine keeps away under row-level security."""

from __future__ import annotations

import base64
import json
import random
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import make_url

from rutter_core.app.continuity import AddMessageParams, AddNoteParams, SupersedeNoteParams
from rutter_core.app.facade import Rutter
from rutter_core.app.history import HistoryReadParams, HistorySearchParams
from rutter_core.app.memory import (
    CreateMemoryParams,
    DeleteMemoryParams,
    EditMemoryParams,
    SetMemoryStatusParams,
)
from rutter_core.app.runs import CreateRunParams
from rutter_core.app.workspaces import RegisterWorkspaceParams
from rutter_core.history.model import HistoryHits
from rutter_core.memory.service import create_memory
from rutter_core.store import Store, open_store
from rutter_core.store.admin import initialize
from rutter_core.store.dialects import postgresql as dialect
from tests.postgres import PostgresServer
from tests.testing import write_tree

pytestmark = pytest.mark.postgres

WALKS = {
    "index only": (0, 0),
    "2 rows, then by the rate": (2, 8),
    "5 rows, up to 64": (5, 64),
    "as shipped": (dialect.SEARCH_WALK_FIRST, dialect.SEARCH_WALK_MOST),
}
"""(first, most) walk sizes on PostgreSQL: none (the index alone, as before the walk), small
enough that most pages are handed over from the walk to the index, and the product's own."""

WORDS = (
    "parser", "stream", "parse_input_stream", "input stream", "read_config", "HttpClient",
    "HTTPCLIENT", "删除后不可恢复", "設定を読む", "テスト", "migration", "index", "100%",
    "max_depth", "maxXdepth", "C:\\path", "rollback",
)  # fmt: skip
QUERIES = (
    "stream", "parse_input_stream", "input_stream", "input stream", "migration index",
    "old-only phrase", "不可恢复", "を読む", "テスト", "httpclient", "0%", "max_depth",
    "C:\\pa", "nothing here", "ab", "流", "St",
)  # fmt: skip


def _walk(monkeypatch: pytest.MonkeyPatch, first: int, most: int) -> None:
    monkeypatch.setattr(dialect, "SEARCH_WALK_FIRST", first)
    monkeypatch.setattr(dialect, "SEARCH_WALK_MOST", most)


@dataclass
class Side:
    """One store with the corpus, and the labels that name its sources and runs alike on both
    engines (their IDs differ: each store made its own)."""

    app: Rutter
    store: Store
    run_id: str = ""
    other_run_id: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    answers: dict[Any, list[Any]] = field(default_factory=dict)

    def label(self, value: str, name: str) -> None:
        self.labels[value] = name

    def normal(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.labels.get(value, value)
        if isinstance(value, dict):
            return {key: self.normal(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self.normal(item) for item in value]
        return value

    def search(self, query: str, **fields: Any) -> HistoryHits:
        fields.setdefault("run_id", self.run_id)
        return self.app.history.search(HistorySearchParams(query=query, **fields))

    def pages(self, query: str, limit: int, **fields: Any) -> list[Any]:
        """Every page of the search, as the caller sees it, with IDs by label and each
        handle's and cursor's signed document."""
        pages: list[Any] = []
        cursor = None
        while len(pages) < 500:
            page = self.search(query, limit=limit, cursor=cursor, **fields)
            following = None if page.next_cursor is None else _document(page.next_cursor)
            pages.append(([self.hit(hit) for hit in page.hits], self.normal(following)))
            if page.next_cursor is None:
                return pages
            cursor = page.next_cursor
        raise AssertionError(f"{query!r}: more than 500 pages")

    def hit(self, hit: Any) -> tuple[Any, ...]:
        return (
            hit.source_kind, self.normal(hit.source_id), hit.version, self.normal(hit.thread_id),
            hit.snippet, self.normal(_document(hit.handle)),
        )  # fmt: skip


def _document(token: str) -> dict[str, Any]:
    payload = token.split(".")[1]
    document: dict[str, Any] = json.loads(
        base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
    )
    return document


def _build(side: Side, root: Path) -> None:
    """The corpus, made the same way on each engine (the same operations in the same order,
    so the entry IDs are the same too)."""
    app = side.app
    for name in ("demo", "other"):
        write_tree(root / name, {"AGENTS.md": "rules\n"})
        app.workspaces.register(
            RegisterWorkspaceParams(workspace_id=name, root=str(root / name), cwd="/")
        )
    runs = [
        app.runs.create(
            CreateRunParams(goal="g", workspace_id=name, target=".", mode="auto"), actor="cli"
        )
        for name in ("demo", "other")
    ]
    side.run_id, side.other_run_id = runs[0].run_id, runs[1].run_id
    for number, run in enumerate(runs):
        side.label(run.run_id, f"run{number}")
        side.label(run.thread_id, f"thread{number}")
    rng = random.Random(31)
    notes = []
    memories = []
    for n in range(180):
        words = [rng.choice(WORDS) for _ in range(rng.randint(2, 6))]
        if n < 60 and n % 3 == 0:
            words.append("an old-only phrase")  # common long ago, absent from the newest rows
        if n % 9 == 4:
            words.append("migration index")
        text = f"{n}: {' '.join(words)}"
        thread = runs[1].thread_id if n % 4 == 3 else runs[0].thread_id  # another run's thread
        made = app.continuity.add_message(
            AddMessageParams(thread_id=thread, role="user", text=text), source="cli"
        )
        side.label(made.message_id, f"msg{n}")
        if n % 15 == 0:
            note = app.continuity.add_note(
                AddNoteParams(thread_id=runs[0].thread_id, kind="fact", text=f"note {text}"),
                actor="cli",
            )
            side.label(note.note_id, f"note{n}")
            notes.append(note)
        if n % 6 == 1:
            scope = "user" if n % 12 == 1 else "project"
            memory = app.memory.create(
                CreateMemoryParams(
                    scope=scope, title=f"m{n}", content=text,
                    workspace_id="demo" if scope == "project" else None,
                ),
                actor="cli",
            )  # fmt: skip
            side.label(memory.memory_id, f"mem{n}")
            memories.append(memory)
    # Deleted, superseded, disabled and edited sources, old and new.
    for note in (notes[1], notes[-2]):
        app.continuity.supersede_note(
            SupersedeNoteParams(note_id=note.note_id, version=note.version), actor="cli"
        )
    app.memory.delete(DeleteMemoryParams(id=memories[2].memory_id, version=1), actor="cli")
    app.memory.set_status(
        SetMemoryStatusParams(id=memories[-3].memory_id, version=1, status="disabled"),
        actor="cli",
    )
    app.memory.edit(
        EditMemoryParams(id=memories[5].memory_id, version=1, content="edited stream rollback"),
        actor="cli",
    )


@pytest.fixture(scope="module")
def sides(
    tmp_path_factory: pytest.TempPathFactory, postgres_server: PostgresServer
) -> Iterator[tuple[Side, Side]]:
    database = postgres_server.create_database()
    stores = [
        open_store(f"sqlite:///{tmp_path_factory.mktemp('store') / 'store.db'}"),
        open_store(postgres_server.url(database)),
    ]
    try:
        made = []
        for store in stores:
            side = Side(Rutter(store), store)
            _build(side, tmp_path_factory.mktemp("ws"))
            made.append(side)
        yield made[0], made[1]
    finally:
        for store in stores:
            store.close()
        postgres_server.drop_database(database)


def test_the_engines_build_the_same_corpus(sides: tuple[Side, Side]) -> None:
    reference, server = sides
    assert reference.store.dialect.name != server.store.dialect.name
    assert set(reference.labels.values()) == set(server.labels.values())
    rows = []
    for side in sides:
        with side.store.read() as conn:
            found = conn.exec_driver_sql(
                "SELECT entry_id, source_id, version FROM history_entries ORDER BY entry_id"
            ).all()
        rows.append([(row[0], side.normal(row[1]), row[2]) for row in found])
    assert rows[0] == rows[1]
    assert len(rows[0]) > 150


@pytest.mark.parametrize("walk", list(WALKS), ids=list(WALKS))
@pytest.mark.parametrize("limit", [2, 20])
def test_every_page_is_sqlites_whatever_the_walk(
    sides: tuple[Side, Side], walk: str, limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    reference, server = sides
    _walk(monkeypatch, *WALKS[walk])
    for query in QUERIES:
        for scopes in (None, ("message", "note"), ("memory",)):
            fields = {} if scopes is None else {"scopes": list(scopes)}
            key = (query, limit, scopes)
            if key not in reference.answers:  # SQLite's answer, whatever the walk
                reference.answers[key] = reference.pages(query, limit, **fields)
            assert server.pages(query, limit, **fields) == reference.answers[key], key
    # The other run sees its own thread and none of this one's.
    expected = reference.pages("stream", limit, run_id=reference.other_run_id)
    assert server.pages("stream", limit, run_id=server.other_run_id) == expected
    # Without a run: the workspace's memories.
    for query in ("stream", "migration index"):
        expected = reference.pages(query, limit, run_id=None, workspace_id="demo")
        assert server.pages(query, limit, run_id=None, workspace_id="demo") == expected


def test_the_corpus_has_what_each_path_needs(sides: tuple[Side, Side]) -> None:
    """Hits in the newest rows and only in old ones, rare and common, under escapes and case:
    so the pages above come from the walk, from the index, and from both."""
    reference, _ = sides
    counts = {query: len(_all(reference, query)) for query in QUERIES}
    assert counts["stream"] > 60
    assert 5 <= counts["migration index"] <= 40
    assert counts["nothing here"] == 0
    old = _all(reference, "old-only phrase")
    assert old
    assert all(int(reference.normal(hit.source_id).lstrip("emnotsg")) < 60 for hit in old)
    # `_` and `%` are themselves, not wildcards; case is folded.
    for query in ("max_depth", "input_stream", "0%", "httpclient", "C:\\pa"):
        assert all(query.casefold() in hit.snippet.casefold() for hit in _all(reference, query))
    wildcard = {hit.source_id for hit in _all(reference, "maxXdepth")}
    assert wildcard - {hit.source_id for hit in _all(reference, "max_depth")}
    assert {"HttpClient", "HTTPCLIENT"} <= {
        word for hit in _all(reference, "httpclient") for word in hit.snippet.split()
    }


def _all(side: Side, query: str) -> list[Any]:
    hits: list[Any] = []
    cursor = None
    while True:
        page = side.search(query, limit=50, cursor=cursor)
        hits.extend(page.hits)
        if page.next_cursor is None:
            return hits
        cursor = page.next_cursor


def test_handles_from_the_walk_read_the_same_text(
    sides: tuple[Side, Side], monkeypatch: pytest.MonkeyPatch
) -> None:
    reference, server = sides
    _walk(monkeypatch, 2, 8)
    for query in ("stream", "migration index", "テスト"):
        mine = server.search(query, limit=5).hits
        theirs = reference.search(query, limit=5).hits
        assert [server.normal(hit.source_id) for hit in mine] == [
            reference.normal(hit.source_id) for hit in theirs
        ]
        for ours, sqlite in zip(mine, theirs, strict=True):
            read = server.app.history.read(HistoryReadParams(handle=ours.handle))
            assert (
                read.text
                == reference.app.history.read(HistoryReadParams(handle=sqlite.handle)).text
            )


# -- people ------------------------------------------------------------------------------------

PASSWORD = "pw-walk-7Qx"


def test_another_persons_user_memories_never_appear(
    postgres_server: PostgresServer,
    postgres_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Alice's and Bob's user memories interleaved, all matching: as each of them, every walk
    finds their own and the project's, newest first, never the other's (the engine's policies
    hide the rows from the walk as from the index); the administrator, whom no policy holds,
    finds only the project's."""
    suffix = uuid.uuid4().hex[:10]
    database = str(make_url(postgres_url).database)
    group = f"team_{suffix}"
    with open_store(postgres_url) as store:
        initialize(store, group=group)
    people = [f"alice_{suffix}", f"bob_{suffix}"]
    with postgres_server.connect(database) as conn:
        for person in people:
            conn.execute(f"CREATE ROLE {person} LOGIN PASSWORD '{PASSWORD}'")
            conn.execute(f"GRANT {group} TO {person}")
    urls = [postgres_server.url(database, user=person, password=PASSWORD) for person in people]
    stores = [open_store(url) for url in [*urls, postgres_url]]
    try:
        write_tree(tmp_path / "ws", {"AGENTS.md": "rules\n"})
        Rutter(stores[0]).workspaces.register(
            RegisterWorkspaceParams(workspace_id="demo", root=str(tmp_path / "ws"), cwd="/")
        )
        owned: dict[str, list[str]] = {person: [] for person in [*people, "admin"]}
        made: list[str] = []
        for n in range(40):
            person = people[n % 2]
            scope = "project" if n % 5 == 4 else "user"
            memory = create_memory(
                stores[n % 2], scope=scope, workspace_id="demo" if scope == "project" else None,
                title=f"m{n}", content=f"kiwi of {person if scope == 'user' else 'all'} {n}",
                actor="cli",
            )  # fmt: skip
            owned[person if scope == "user" else "admin"].append(memory.memory_id)
            made.append(memory.memory_id)
        shared = set(owned["admin"])
        for walk in WALKS.values():
            _walk(monkeypatch, *walk)
            for number, person in enumerate([*people, "admin"]):
                mine = set(owned[person])
                expected = {"kiwi": mine | shared, "ki": mine | shared, "of all": shared}
                for someone in people:
                    expected[someone] = mine if someone == person else set()
                for query, found in expected.items():
                    seen = _memories(stores[number], query)
                    # Each once, newest first.
                    wanted = [m for m in reversed(made) if m in found]
                    assert seen == wanted, (walk, person, query)
    finally:
        for store in stores:
            store.close()


def _memories(store: Store, query: str) -> list[str]:
    seen: list[str] = []
    cursor = None
    while True:
        params = HistorySearchParams(query=query, workspace_id="demo", limit=3, cursor=cursor)
        page = Rutter(store).history.search(params)
        seen.extend(hit.source_id for hit in page.hits)
        if page.next_cursor is None:
            return seen
        cursor = page.next_cursor
