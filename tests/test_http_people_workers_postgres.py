"""Per-person bearers against `rutter http --workers 2` on PostgreSQL (docs/team.md): the
service connects as a role of its own that may act as two people; each person's bearer makes
every request act as that person, whichever worker process serves it. Requests go over many
connections at once until both workers have served both people (which worker holds a
connection is read from the kernel's socket table, tests/http_server.py `serving_worker`);
on every worker each person lists, finds and changes only their own user memories, writes
as themselves, and gets a 404 for the other's, as a person who does not exist would. A bearer
of the service's own role changes no role at all."""

from __future__ import annotations

import http.client
import json
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psycopg
import pytest
from sqlalchemy import event
from sqlalchemy.engine import make_url

from rutter_core.memory.service import create_memory
from rutter_core.store import open_store
from rutter_core.store.admin import initialize
from tests.http_server import API, serving, serving_worker, workers_of
from tests.postgres import PostgresServer
from tests.testing import Cli

pytestmark = pytest.mark.postgres

PASSWORD = "pw-workers-8Tq"
CONNECTIONS = 16
"""Connections a batch opens at once (each a few requests as one person)."""
BATCHES = 12
"""At most this many batches until both workers have served both people."""


@dataclass
class Person:
    role: str
    word: str
    """In each of their memories' content, and in no one else's."""
    bearer: str = ""
    memories: set[str] = field(default_factory=set)


def _role(server: PostgresServer, database: str, name: str, group: str) -> str:
    with server.connect(database) as conn:
        conn.execute(f"CREATE ROLE {name} LOGIN PASSWORD '{PASSWORD}' IN ROLE {group}")
    return name


class Client:
    """One keep-alive connection, as one person's bearer."""

    def __init__(self, port: int, bearer: str) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.bearer = bearer

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        headers = {"Authorization": f"Bearer {self.bearer}"}
        payload = None
        if body is not None:
            payload = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        self.conn.request(method, f"{API}/{path}", payload, headers)
        response = self.conn.getresponse()
        return response.status, json.loads(response.read())


def _as(person: Person, other: Person, others: frozenset[str], client: Client, n: int) -> str:
    """A few requests as `person`: a write, a search, their list, and reaches for the other's
    memories (`others`: the other's IDs known before this batch); the ID written."""
    status, made = client.call(
        "POST", "memories",
        {"scope": "user", "title": f"note {n}", "content": f"{person.word} number {n}"},
    )  # fmt: skip
    assert status == 201, made
    assert (made["owner"], made["created_by_person"]) == (person.role, person.role)
    assert made["created_by"] == "http_control"
    status, found = client.call("GET", f"history/search?query={quote(person.word)}&limit=50")
    assert status == 200, found
    hits = {hit["source_id"] for hit in found["hits"]}
    # Listed after the search: the person's other connections may have written meanwhile.
    status, listed = client.call("GET", "memories?scope=user&limit=500")
    assert status == 200, listed
    assert {item["owner"] for item in listed["items"]} == {person.role}
    ids = {item["id"] for item in listed["items"]}
    assert made["id"] in ids
    assert not ids & others
    assert made["id"] in hits
    assert hits <= ids
    status, found = client.call("GET", f"history/search?query={quote(other.word)}")
    assert (status, found["hits"]) == (200, [])
    for theirs in sorted(others)[:3]:
        status, shown = client.call("GET", f"memories/{theirs}")
        assert (status, shown["error"]["code"]) == (404, "not_found")
        status, edited = client.call(
            "PATCH", f"memories/{theirs}", {"expected_version": 1, "content": "taken over"}
        )
        assert (status, edited["error"]["code"]) == (404, "not_found")
    memory_id: str = made["id"]
    return memory_id


@dataclass
class Team:
    """A database prepared by `store init`, two people and the service's role, which may act
    as both (docs/team.md)."""

    database: str
    alice: Person
    bob: Person
    service: str


@pytest.fixture
def team(postgres_server: PostgresServer, postgres_url: str) -> Team:
    suffix = uuid.uuid4().hex[:10]
    database = str(make_url(postgres_url).database)
    group = f"team_{suffix}"
    with open_store(postgres_url) as store:
        initialize(store, group=group)
    alice = Person(_role(postgres_server, database, f"alice_{suffix}", group), "tabsquietly")
    bob = Person(_role(postgres_server, database, f"bob_{suffix}", group), "spacesloudly")
    service = _role(postgres_server, database, f"svc_{suffix}", group)
    with postgres_server.connect(database) as conn:
        conn.execute(f"GRANT {alice.role}, {bob.role} TO {service}")
    return Team(database, alice, bob, service)


def test_each_persons_bearer_acts_as_them_on_every_worker(
    postgres_server: PostgresServer, postgres_url: str, team: Team, tmp_path: Path
) -> None:
    database, alice, bob, service = team.database, team.alice, team.bob, team.service
    admin = Cli(tmp_path / "admin", tmp_path, database_url=postgres_url)
    for person in (alice, bob):
        made = admin.json("http", "token", "create", "--scope", "control", "--user", person.role)
        assert made["owner"] == person.role
        person.bearer = made["secret"]
        url = postgres_server.url(database, user=person.role, password=PASSWORD)
        with open_store(url) as store:  # one made before the service, as the person
            record = create_memory(
                store, scope="user", title="mine", content=f"{person.word} first", actor="cli"
            )
        person.memories.add(record.memory_id)

    cli = Cli(
        tmp_path / "home", tmp_path,
        database_url=postgres_server.url(database, user=service, password=PASSWORD),
    )  # fmt: skip
    served: dict[int, set[str]] = {}
    with serving(cli, "--workers", "2") as server:
        workers = workers_of(server.process)
        assert len(workers) == 2

        def connection(n: int, known: dict[str, frozenset[str]]) -> tuple[str, int, str]:
            person, other = (alice, bob) if n % 2 == 0 else (bob, alice)
            client = Client(server.port, person.bearer)
            try:
                made = _as(person, other, known[other.role], client, n)
                # The connection is still open: the worker holding it served all of it.
                return person.role, serving_worker(server.port, client.conn, workers), made
            finally:
                client.conn.close()

        for batch in range(BATCHES):
            known = {p.role: frozenset(p.memories) for p in (alice, bob)}
            numbers = range(batch * CONNECTIONS, (batch + 1) * CONNECTIONS)
            with ThreadPoolExecutor(max_workers=CONNECTIONS // 2) as pool:
                outcomes = list(pool.map(connection, numbers, [known] * CONNECTIONS))
            for role, worker, made in outcomes:
                served.setdefault(worker, set()).add(role)
                (alice if role == alice.role else bob).memories.add(made)
            if len(served) == 2 and all(len(roles) == 2 for roles in served.values()):
                break
    assert served == {worker: {alice.role, bob.role} for worker in workers}, served

    # What the engine holds: each person's memories are theirs, written as them, and each
    # person's own SQL sees exactly those.
    with postgres_server.connect(database) as conn:
        rows = conn.execute(
            "SELECT memory_id, owner, created_by_person FROM memories WHERE scope = 'user'"
        ).fetchall()
    assert {row[0] for row in rows} == alice.memories | bob.memories
    for memory_id, owner, by in rows:
        expected = alice.role if memory_id in alice.memories else bob.role
        assert (owner, by) == (expected, expected)
    for person in (alice, bob):
        with psycopg.connect(
            host=str(postgres_server.socket_dir), dbname=database, user=person.role,
            password=PASSWORD,
        ) as conn:  # fmt: skip
            mine = conn.execute("SELECT memory_id FROM memories WHERE scope = 'user'").fetchall()
        assert {row[0] for row in mine} == person.memories


def test_acting_as_the_connections_own_role_changes_no_role(
    postgres_server: PostgresServer, team: Team
) -> None:
    """What a bearer of the service's own role makes its requests do: each transaction is that
    role already, so none sends a role change; acting as a person sends one each."""
    url = postgres_server.url(team.database, user=team.service, password=PASSWORD)
    with open_store(url, pool="service") as store:
        sent: list[str] = []

        def record(*args: Any) -> None:
            sent.append(str(args[2]))  # (conn, cursor, statement, ...)

        event.listen(store.engine, "before_cursor_execute", record)
        for person, changes in ((team.service, 0), (team.alice.role, 1)):
            sent.clear()
            acting = store.acting_as(person)
            for _ in range(3):
                with acting.read() as conn:
                    assert conn.exec_driver_sql("SELECT current_user").scalar_one() == person
                with acting.write() as conn:
                    assert conn.exec_driver_sql("SELECT current_user").scalar_one() == person
            assert sum("set_config('role'" in statement for statement in sent) == 6 * changes
