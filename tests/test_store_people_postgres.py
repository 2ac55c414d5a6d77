"""People on a real PostgreSQL server (tests/postgres.py): each person is a role, and the engine
itself (row-level security) keeps a person's user memories, their index and their bearers from
every other person, whatever SQL they send; `rutter store init` prepares the group role and its
grants, idempotently; `rutter store check` says what is wrong; a bearer made for a person makes
the HTTP API act as that person (docs/team.md)."""

from __future__ import annotations

import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from sqlalchemy.engine import make_url

from rutter_core.access.service import create_token, list_tokens
from rutter_core.app.branches import TreeParams
from rutter_core.app.continuity import AddMessageParams, ListNotesParams, ShowNodeParams
from rutter_core.app.facade import Rutter
from rutter_core.app.history import HistorySearchParams
from rutter_core.app.pins import ListPinsParams, ListProposalsParams, ProposePinParams
from rutter_core.app.runs import InspectRunParams, ListDeliveryReportsParams, ShowRunParams
from rutter_core.kernel.errors import RutterError
from rutter_core.memory.service import create_memory, edit_memory, list_memories
from rutter_core.store import MIGRATIONS, open_store
from rutter_core.store.admin import check, initialize
from rutter_core.workspaces.service import register_workspace
from tests.http_server import Server, wait_serving
from tests.postgres import PostgresServer
from tests.testing import BEFORE_PEOPLE, LEGACY_USER_MEMORY, THIS_MACHINE, Cli, git, write_tree

pytestmark = pytest.mark.postgres

PASSWORD = "pw-people-4Rk"


@dataclass
class Team:
    """A database prepared by `store init` (as the superuser, its administrator), with a group
    role and two people in it."""

    server: PostgresServer
    database: str
    group: str
    alice: str
    bob: str

    def url(self, user: str | None = None) -> str:
        if user is None:
            return self.server.url(self.database)
        return self.server.url(self.database, user=user, password=PASSWORD)

    def raw(self, user: str) -> psycopg.Connection[tuple[Any, ...]]:
        return self.server.connect_as(self.database, user, PASSWORD)

    def role(self, name: str, *, member: bool = True) -> str:
        group = self.group if member else None
        return self.server.create_role(self.database, name, PASSWORD, group=group)


def _suffix() -> str:
    return uuid.uuid4().hex[:10]


@pytest.fixture
def team(postgres_server: PostgresServer, postgres_url: str) -> Team:
    suffix = _suffix()
    database = str(make_url(postgres_url).database)
    group = f"team_{suffix}"
    with open_store(postgres_url) as store:
        initialize(store, group=group)
    made = Team(postgres_server, database, group, "", "")
    made.alice = made.role(f"alice_{suffix}")
    made.bob = made.role(f"bob_{suffix}")
    return made


def _user_memory(url: str, title: str, content: str) -> str:
    with open_store(url) as store:
        record = create_memory(store, scope="user", title=title, content=content, actor="cli")
    return record.memory_id


def test_each_person_sees_and_changes_only_their_own_user_memories(
    team: Team, tmp_path: Path
) -> None:
    alices = _user_memory(team.url(team.alice), "Alice's editor", "alice prefers tabs quietly")
    bobs = _user_memory(team.url(team.bob), "Bob's editor", "bob prefers spaces loudly")
    root = tmp_path / "ws"
    root.mkdir()
    with open_store(team.url(team.alice)) as store:
        register_workspace(store, "demo", root, cwd=tmp_path, machine=THIS_MACHINE)
        shared = create_memory(
            store, scope="project", workspace_id="demo", title="Shared", content="run the tests",
            actor="cli",
        ).memory_id  # fmt: skip

    # Through rutter: each lists their own user memory and the shared project memory.
    with open_store(team.url(team.alice)) as store:
        mine = list_memories(store, scope="user").items
        assert [(m.memory_id, m.owner) for m in mine] == [(alices, team.alice)]
        assert mine[0].created_by_person == team.alice
        project = list_memories(store, scope="project", workspace_id="demo").items
        assert [m.memory_id for m in project] == [shared]
        assert project[0].owner is None
        assert project[0].created_by_person == team.alice
    with open_store(team.url(team.bob)) as store:
        assert [m.memory_id for m in list_memories(store, scope="user").items] == [bobs]
        # Bob may change the shared project memory: his name is what the record keeps.
        edited = edit_memory(store, shared, version=1, content="run all the tests", actor="cli")
        assert (edited.created_by_person, edited.updated_by_person) == (team.alice, team.bob)
        with pytest.raises(RutterError) as refused:
            edit_memory(store, alices, version=1, content="hijacked", actor="cli")
        assert refused.value.code == "not_found"
        # History search finds his own words and the shared ones, never Alice's.
        search = Rutter(store).history.search
        found = search(HistorySearchParams(query="prefers", workspace_id="demo"))
        assert [hit.source_id for hit in found.hits] == [bobs]
        assert search(HistorySearchParams(query="tabs quietly", workspace_id="demo")).hits == ()
        found = search(HistorySearchParams(query="all the tests", workspace_id="demo"))
        assert [hit.source_id for hit in found.hits] == [shared]
    with open_store(team.url(team.alice)) as store:
        found = Rutter(store).history.search(
            HistorySearchParams(query="prefers", workspace_id="demo")
        )
        assert [hit.source_id for hit in found.hits] == [alices]

    # Raw SQL as Bob: the engine shows him none of Alice's rows and changes none of them.
    with team.raw(team.bob) as conn:
        assert conn.execute("SELECT memory_id FROM memories WHERE scope = 'user'").fetchall() == [
            (bobs,)
        ]
        assert (
            conn.execute("SELECT 1 FROM memories WHERE memory_id = %s", (alices,)).fetchall() == []
        )
        updated = conn.execute("UPDATE memories SET title = 'x' WHERE memory_id = %s", (alices,))
        assert updated.rowcount == 0
        deleted = conn.execute(
            "DELETE FROM memories WHERE scope = 'user' AND owner <> current_user"
        )
        assert deleted.rowcount == 0
        # Nor can he give one of his rows to Alice, or write one as her.
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("UPDATE memories SET owner = %s WHERE memory_id = %s", (team.alice, bobs))
        # The history index holds Alice's text, and Bob sees none of it.
        texts = " ".join(
            str(row[0])
            for number in range(16)
            for row in conn.execute(f"SELECT body FROM history_memory_text_{number:02d}")
        )
        assert "bob prefers spaces" in texts
        assert "alice prefers tabs" not in texts
        entries = conn.execute(
            "SELECT source_id FROM history_entries WHERE source_kind = 'memory'"
        ).fetchall()
        assert sorted(row[0] for row in entries) == sorted([bobs, shared])
        # The shared project memory is the group's.
        assert conn.execute("SELECT count(*) FROM memories WHERE scope = 'project'").fetchone() == (
            1,
        )
    # The administrator, a superuser, is held by no policy; rutter still shows them only their
    # own user memories (none), never Alice's, in a list, by ID or in a search.
    with open_store(team.url()) as store:
        assert list_memories(store, scope="user").items == ()
        with pytest.raises(RutterError) as hidden:
            edit_memory(store, alices, version=1, content="hijacked", actor="cli")
        assert hidden.value.code == "not_found"
        found = Rutter(store).history.search(
            HistorySearchParams(query="prefers", workspace_id="demo")
        )
        assert found.hits == ()
    # Alice's memory is untouched, and the administrator's raw SQL sees both.
    with team.server.connect(team.database) as conn:
        rows = conn.execute("SELECT memory_id, title, owner FROM memories WHERE scope = 'user' "
                            "ORDER BY owner").fetchall()  # fmt: skip
        assert rows == [(alices, "Alice's editor", team.alice), (bobs, "Bob's editor", team.bob)]


def test_an_insert_of_a_user_memory_for_another_person_is_refused_by_the_engine(
    team: Team,
) -> None:
    bobs = _user_memory(team.url(team.bob), "Bob's", "bob's own text")
    with team.raw(team.bob) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute(
            "INSERT INTO memories (memory_id, scope, scope_id, workspace_id, title, content, "
            "content_sha256, status, source_kind, references_json, retention_until, "
            "redacted, created_by, updated_by, version, created_at, updated_at, owner) "
            "SELECT 'mem_' || repeat('X', 26), scope, scope_id, workspace_id, title, "
            "content, content_sha256, status, source_kind, references_json, "
            "retention_until, redacted, created_by, updated_by, version, created_at, "
            "updated_at, %s FROM memories WHERE memory_id = %s",
            (team.alice, bobs),
        )


def test_bearers_are_each_persons_own(team: Team) -> None:
    with open_store(team.url(team.alice)) as store:
        alices = create_token(store, scope="control", actor="cli")
    with open_store(team.url(team.bob)) as store:
        bobs = create_token(store, scope="read", actor="cli")
        assert [t.token_id for t in list_tokens(store, include_revoked=True).items] == [
            bobs.token_id
        ]
        # Bob may not make a bearer that acts for Alice: the engine refuses the row.
        with pytest.raises(RutterError) as refused:
            create_token(store, scope="control", actor="cli", user=team.alice)
        assert refused.value.code == "store_permission_denied"
        with pytest.raises(RutterError) as unknown:
            create_token(store, scope="control", actor="cli", user=f"nobody_{_suffix()}")
        assert unknown.value.code == "unknown_person"
    assert (alices.owner, bobs.owner) == (team.alice, team.bob)
    with team.raw(team.bob) as conn:
        assert conn.execute("SELECT token_id FROM http_tokens").fetchall() == [(bobs.token_id,)]
        revoked = conn.execute(
            "UPDATE http_tokens SET revoked_at = '2026-01-01T00:00:00Z' WHERE token_id = %s",
            (alices.token_id,),
        )
        assert revoked.rowcount == 0
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(
                "INSERT INTO http_tokens (token_id, scope, secret_sha256, created_by, "
                "created_at, owner) VALUES ('tok_x', 'control', repeat('0', 64), 'cli', "
                "'2026-01-01T00:00:00Z', %s)",
                (team.alice,),
            )
    with team.server.connect(team.database) as conn:
        assert conn.execute(
            "SELECT revoked_at FROM http_tokens WHERE token_id = %s", (alices.token_id,)
        ).fetchone() == (None,)


def test_the_change_feed_follows_a_store_acting_for_a_person(team: Team) -> None:
    """The language server's change feed (one connection of its own, in autocommit) beside
    transactions that act for a person (SET LOCAL ROLE): it notices their commits and another
    person's, and no acting transaction leaves its role on a connection the store reuses."""
    from rutter_core.store.changes import StoreChanges

    service = team.role(f"svc_{_suffix()}")
    with team.server.connect(team.database) as conn:
        conn.execute(f"GRANT {team.alice} TO {service}")
    with open_store(team.url(service)) as opened:
        store = opened.acting_as(team.alice)
        changes = StoreChanges(store)
        try:
            changes.poll()
            assert changes.poll() is False
            mine = create_memory(store, scope="user", title="Feed", content="noticed", actor="cli")
            assert mine.owner == team.alice
            assert changes.poll() is True
            assert changes.poll() is False
            _user_memory(team.url(team.bob), "Bob's", "another person's commit")
            assert changes.poll() is True
            # Each acting transaction took Alice's role for itself alone.
            for _ in range(3):
                with opened.read() as conn:
                    assert conn.exec_driver_sql("SELECT current_user").scalar_one() == service
                with store.read() as conn:
                    assert conn.exec_driver_sql("SELECT current_user").scalar_one() == team.alice
            assert [m.memory_id for m in list_memories(store, scope="user").items] == [
                mine.memory_id
            ]
            assert changes.poll() is False
        finally:
            changes.close()


def test_store_init_twice_changes_nothing(team: Team) -> None:
    def state() -> tuple[Any, ...]:
        with team.server.connect(team.database) as conn:
            ledger = conn.execute("SELECT version, checksum FROM schema_migrations").fetchall()
            policies = conn.execute(
                "SELECT tablename, policyname, qual FROM pg_policies ORDER BY 1, 2"
            ).fetchall()
            grants = conn.execute(
                "SELECT table_name, privilege_type FROM information_schema.role_table_grants "
                "WHERE grantee = %s ORDER BY 1, 2",
                (team.group,),
            ).fetchall()
        return ledger, policies, grants

    before = state()
    with open_store(team.url()) as store:
        again = initialize(store, group=team.group)
    assert again.group_created is False
    assert state() == before
    ledger, policies, grants = before
    assert len(ledger) == len(MIGRATIONS)
    assert {row[0] for row in policies} >= {"memories", "http_tokens", "history_entries"}
    # Exactly what members need: no TRUNCATE, REFERENCES or TRIGGER anywhere; the ledger read
    # only; append-only tables never updated or deleted from.
    privileges = {row[1] for row in grants}
    assert privileges == {"SELECT", "INSERT", "UPDATE", "DELETE"}
    assert {row[1] for row in grants if row[0] == "schema_migrations"} == {"SELECT"}
    assert {row[1] for row in grants if row[0] == "messages"} == {"SELECT", "INSERT"}


def test_store_init_from_the_command_line_and_a_member_uses_the_store(
    postgres_server: PostgresServer, postgres_url: str, tmp_path: Path
) -> None:
    """The set-up of docs/team.md: an administrator's role that owns the database (not a
    superuser) runs `store init`, makes a person in the group, and the person uses the store."""
    cli = Cli(tmp_path / "home", tmp_path)
    database = str(make_url(postgres_url).database)
    admin = f"adm_{_suffix()}"
    with postgres_server.connect() as conn:
        conn.execute(f"CREATE ROLE {admin} LOGIN CREATEROLE PASSWORD '{PASSWORD}'")
        conn.execute(f"ALTER DATABASE {database} OWNER TO {admin}")
    admin_url = postgres_server.url(database, user=admin, password=PASSWORD)
    group = f"team_{_suffix()}"
    first = cli.json("--database-url", admin_url, "store", "init", "--group", group)
    second = cli.json("--database-url", admin_url, "store", "init", "--group", group)
    assert (first["group_created"], second["group_created"]) == (True, False)
    assert first["granted"] == second["granted"]
    assert "memories" in first["row_security"]
    checked = cli.json("--database-url", admin_url, "store", "check", "--group", group)
    assert checked["ok"] is True
    assert checked["role"]["owns_store"] is True
    assert checked["warnings"] == []
    person = f"carol_{_suffix()}"
    with psycopg.connect(
        host=str(postgres_server.socket_dir), dbname=database, user=admin, password=PASSWORD,
        autocommit=True,
    ) as conn:  # fmt: skip
        conn.execute(f"CREATE ROLE {person} LOGIN PASSWORD '{PASSWORD}' IN ROLE {group}")
    url = postgres_server.url(database, user=person, password=PASSWORD)
    made = cli.json("--database-url", url, "context", "memory", "create", "--scope", "user",
                    "--title", "Mine", "--content", "carol's own words")  # fmt: skip
    assert (made["owner"], made["created_by_person"]) == (person, person)
    # An edit rewrites the memory index as the tables' owner (a member is none).
    edited = cli.json("--database-url", url, "context", "memory", "edit", made["id"],
                      "--version", "1", "--content", "carol's new words")  # fmt: skip
    assert edited["updated_by_person"] == person
    checked = cli.json("--database-url", url, "store", "check", "--group", group)
    assert checked["ok"] is True
    assert checked["role"] == {
        "name": person, "superuser": False, "bypasses_row_security": False, "group": group,
        "group_exists": True, "member_of_group": True, "owns_store": False,
    }  # fmt: skip
    assert checked["warnings"] == []
    # The administrator's own role is held to the policies too (FORCE): it sees no user
    # memory of Carol's, even in its own SQL.
    with psycopg.connect(
        host=str(postgres_server.socket_dir), dbname=database, user=admin, password=PASSWORD,
    ) as conn:  # fmt: skip
        assert conn.execute("SELECT count(*) FROM memories").fetchone() == (0,)


def test_store_check_on_a_good_store_as_a_member(team: Team, tmp_path: Path) -> None:
    with open_store(team.url(team.alice)) as store:
        found = check(store, group=team.group)
    assert found.ok, found.problems
    assert found.engine == "postgresql"
    assert found.schema_state.version == found.schema_state.code_version == MIGRATIONS[-1].version
    assert found.extensions == {"pg_trgm": True}
    assert found.text is not None
    assert found.text.suits_cjk
    assert found.row_security is not None
    assert all(t.enabled and t.forced and t.policies == 1 for t in found.row_security)
    assert found.warnings == ()
    # The administrator, a superuser, is told that row-level security does not hold them.
    with open_store(team.url()) as store:
        admin = check(store, group=team.group)
    assert admin.ok
    assert [w.code for w in admin.warnings] == ["row_security_bypassed"]
    # A role outside the group is a problem.
    outsider = team.role(f"dave_{_suffix()}", member=False)
    with open_store(team.url(outsider), migrate=False) as store:
        found = check(store, group=team.group)
    assert [p.code for p in found.problems] == ["not_a_member"]


def test_store_check_on_an_old_schema_and_without_pg_trgm(
    postgres_server: PostgresServer, postgres_url: str, tmp_path: Path
) -> None:
    group = f"team_{_suffix()}"
    with open_store(postgres_url, migrations=MIGRATIONS[:-1]):
        pass
    cli = Cli(tmp_path / "home", tmp_path)
    result = cli("--database-url", postgres_url, "store", "check", "--group", group, "--json")
    assert result.returncode != 0
    assert "store_check_failed" in result.stderr
    import json

    found = json.loads(result.stdout)
    assert found["ok"] is False
    assert found["schema"]["version"] == MIGRATIONS[-2].version
    assert found["schema"]["pending"] == [MIGRATIONS[-1].version]
    assert {p["code"] for p in found["problems"]} == {"schema_behind", "group_missing"}
    # check changed nothing: the schema is still behind.
    with postgres_server.connect(str(make_url(postgres_url).database)) as conn:
        assert conn.execute("SELECT max(version) FROM schema_migrations").fetchone() == (
            MIGRATIONS[-2].version,
        )
        assert cli.json("--database-url", postgres_url, "store", "init", "--group", group)
        conn.execute("DROP EXTENSION pg_trgm CASCADE")
    result = cli("--database-url", postgres_url, "store", "check", "--group", group)
    assert result.returncode != 0
    assert "extension pg_trgm: missing" in result.stdout
    assert "extension_missing" in result.stdout


def test_a_bearer_made_for_a_person_makes_requests_as_that_person(
    team: Team, tmp_path: Path
) -> None:
    """The HTTP service connects as its own role, which may act as Alice (not as Bob): a request
    with Alice's bearer runs as Alice (SET ROLE in each transaction), so what it writes is hers
    and what it reads is what she may see."""
    service = team.role(f"svc_{_suffix()}")
    with team.server.connect(team.database) as conn:
        conn.execute(f"GRANT {team.alice} TO {service}")
    cli = Cli(tmp_path / "home", tmp_path)
    admin = team.url()
    alices = cli.json("--database-url", admin, "http", "token", "create", "--scope", "control",
                      "--user", team.alice)  # fmt: skip
    bobs = cli.json("--database-url", admin, "http", "token", "create", "--scope", "control",
                    "--user", team.bob)  # fmt: skip
    assert (alices["owner"], bobs["owner"]) == (team.alice, team.bob)
    listed = cli.json("--database-url", admin, "http", "token", "list")
    assert {(t["owner"], t["created_by_person"]) for t in listed["items"]} == {
        (team.alice, team.server.superuser), (team.bob, team.server.superuser)
    }  # fmt: skip
    bobs_memory = _user_memory(team.url(team.bob), "Bob's", "bob's private words")
    log = tmp_path / "http.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "rutter", "--database-url", team.url(service), "http",
             "--bind", "127.0.0.1:0"],
            env=cli.env(), cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=sink,
        )  # fmt: skip
    try:
        port = wait_serving(log, process)
        server = Server(port, process, cli, alices["secret"], alices["secret"])
        made = server.control_call(
            "POST", "memories", {"scope": "user", "title": "Via HTTP", "content": "alice's note"}
        )
        assert made.status == 201, made.text
        assert (made.json["owner"], made.json["created_by_person"]) == (team.alice, team.alice)
        assert made.json["created_by"] == "http_control"
        listed_memories = server.get("memories?scope=user")
        assert listed_memories.status == 200, listed_memories.text
        assert [m["id"] for m in listed_memories.json["items"]] == [made.json["id"]]
        shown = server.get(f"memories/{bobs_memory}")
        assert shown.status == 404
        # The service may not act as Bob, and cannot even see his bearer.
        assert server.request("GET", "memories?scope=user", token=bobs["secret"]).status == 401
    finally:
        process.terminate()
        process.wait(timeout=20)
    with team.raw(team.alice) as conn:
        assert conn.execute(
            "SELECT owner, created_by_person FROM memories WHERE memory_id = %s",
            (made.json["id"],),
        ).fetchone() == (team.alice, team.alice)
    with team.raw(team.bob) as conn:
        assert (
            conn.execute(
                "SELECT 1 FROM memories WHERE memory_id = %s", (made.json["id"],)
            ).fetchall()
            == []
        )


def test_rows_from_before_people_become_the_migrating_roles(
    postgres_server: PostgresServer, postgres_url: str
) -> None:
    """Migration 17 gives the user memories and bearers a store held before it to the role that
    applies it (until then the one role using the store), their index entries with them."""
    with open_store(postgres_url, migrations=BEFORE_PEOPLE):
        pass
    database = str(make_url(postgres_url).database)
    with postgres_server.connect(database) as conn:
        conn.execute(LEGACY_USER_MEMORY)
        conn.execute(
            "INSERT INTO http_tokens (token_id, scope, secret_sha256, created_by, created_at) "
            "VALUES ('tok_01M8YKA14W0G4RSMQTN8E6Y4PN', 'read', repeat('1', 64), 'cli', "
            "'2026-01-01T00:00:00Z')"
        )
        conn.execute("UPDATE history_state SET backfill_pending = 0, last_entry_id = 1")
        conn.execute(
            "INSERT INTO history_entries (entry_id, source_kind, source_id, owner_id, "
            "workspace_id, version, content_sha256, expires_at) VALUES (1, 'memory', "
            "'mem_01M8VVYTD4XWCMA67W2577NTV2', 'local-user', NULL, 1, repeat('0', 64), NULL)"
        )
    with open_store(postgres_url):
        pass
    with postgres_server.connect(database) as conn:
        owner = postgres_server.superuser
        assert conn.execute("SELECT owner FROM memories").fetchall() == [(owner,)]
        assert conn.execute("SELECT owner FROM http_tokens").fetchall() == [(owner,)]
        assert conn.execute("SELECT person FROM history_entries").fetchall() == [(owner,)]


def _team_workspace(team: Team, tmp_path: Path) -> Path:
    """Workspace `demo` (a git repository with instructions), registered by Alice."""
    root = tmp_path / "ws"
    write_tree(root, {"AGENTS.md": "root rules\n", "src/parser.py": "x = 1\n"})
    git(root, "init", "-q")
    Cli(tmp_path / "home-admin", root, database_url=team.url(team.alice)).json(
        "workspace", "register", "demo", str(root)
    )
    return root


def _records_of(team: Team, person: str, root: Path) -> dict[str, Any]:
    """What `person` records through their own connection: a run, messages, a proposal made by
    an agent and their answer to it, a note, a pin, a checkpoint, a compaction, a delivery
    report."""
    cli = Cli(root.parent / f"home-{person}", root, database_url=team.url(person))
    run = cli.json("run", "create", "--workspace", "demo", "--goal", f"{person}'s goal")
    thread = run["thread_id"]
    with open_store(team.url(person)) as store:
        app = Rutter(store)
        for n in range(1, 9):
            app.continuity.add_message(
                AddMessageParams(thread_id=thread, role="user" if n % 2 else "assistant",
                                 text=f"{person} step {n}"),
                source="cli",
            )  # fmt: skip
        proposal = app.pins.propose(
            ProposePinParams(run_id=run["run_id"], text=f"{person}'s rule"), actor="mcp"
        )
    return {
        "run": run,
        "answered": cli.json("context", "pin", "answer", proposal.proposal_id, "discuss",
                             "--text", "later"),
        "note": cli.json("session", "note", "add", thread, "--kind", "decision", "--text",
                         f"{person} decided"),
        "pin": cli.json("context", "pin", "add", thread, "--text", f"{person}'s pin"),
        "checkpoint": cli.json("session", "checkpoint", run["run_id"], "--title", "done"),
        "compaction": cli.json("session", "compact", thread),
        "report": cli.json("run", "report", run["run_id"], "--result", "passed", "--summary",
                           "ok"),
    }  # fmt: skip


def test_each_person_is_named_on_every_record_they_make(team: Team, tmp_path: Path) -> None:
    """Alice and Bob, each as their own role, make the same records on one project: each
    record names its maker, read back by the other person through the app and in raw rows; a
    change by one person to the other's record names both."""
    root = _team_workspace(team, tmp_path)
    made = {person: _records_of(team, person, root) for person in (team.alice, team.bob)}
    for person, records in made.items():
        assert records["answered"]["proposal"]["proposed_by_person"] == person
        assert records["answered"]["proposal"]["answered_by_person"] == person
        for kind in ("note", "pin", "checkpoint", "compaction", "report"):
            assert records[kind]["created_by_person"] == person, kind
    # Read back by the other person, through the facade.
    for reader, person in ((team.bob, team.alice), (team.alice, team.bob)):
        records = made[person]
        run_id, thread = records["run"]["run_id"], records["run"]["thread_id"]
        with open_store(team.url(reader)) as store:
            app = Rutter(store)
            run = app.runs.show(ShowRunParams(run_id=run_id))
            assert (run.created_by_person, run.updated_by_person) == (person, person)
            notes = app.continuity.notes(ListNotesParams(thread_id=thread)).notes
            assert [n.created_by_person for n in notes] == [person]
            pins = app.pins.list(ListPinsParams(thread_id=thread)).pins
            assert [(p.created_by_person, p.updated_by_person) for p in pins] == [(person, person)]
            asked = app.pins.proposals(ListProposalsParams(thread_id=thread, all=True)).proposals
            assert [(p.proposed_by_person, p.answered_by_person) for p in asked] == [
                (person, person)
            ]
            node = app.continuity.node(ShowNodeParams(node_id=records["checkpoint"]["node_id"]))
            assert node.created_by_person == person
            reports = app.runs.reports(ListDeliveryReportsParams(run_id=run_id)).reports
            assert [r.created_by_person for r in reports] == [person]
            tree = app.branches.tree(TreeParams(run_id=run_id)).nodes
            assert {(n.kind, n.created_by_person) for n in tree} >= {
                ("root", person), ("checkpoint", person), ("compaction", person)
            }  # fmt: skip
            revision = app.runs.inspect(InspectRunParams(run_id=run_id)).pinned
            assert revision is not None
            assert revision.confirmed_by_person == person
    # Bob edits Alice's pin: she made it, he changed it last.
    alices_pin = made[team.alice]["pin"]
    bob = Cli(tmp_path / "home-bob", root, database_url=team.url(team.bob))
    edited = bob.json("context", "pin", "edit", alices_pin["pin_id"], "--version", "1",
                      "--text", "changed by bob")  # fmt: skip
    assert (edited["created_by_person"], edited["updated_by_person"]) == (team.alice, team.bob)
    # The raw rows, as the administrator reads them.
    with team.server.connect(team.database) as conn:
        for person, records in made.items():
            run_id = records["run"]["run_id"]
            for table, column, key, value in (
                ("runs", "created_by_person", "run_id", run_id),
                ("missions", "created_by_person", "mission_id", records["run"]["mission_id"]),
                ("sessions", "created_by_person", "session_id", records["run"]["session_id"]),
                ("threads", "created_by_person", "thread_id", records["run"]["thread_id"]),
                ("run_instruction_snapshots", "confirmed_by_person", "run_id", run_id),
                ("notes", "created_by_person", "note_id", records["note"]["note_id"]),
                ("pin_proposals", "answered_by_person", "proposal_id",
                 records["answered"]["proposal"]["proposal_id"]),
                ("continuity_nodes", "created_by_person", "node_id",
                 records["checkpoint"]["node_id"]),
                ("compactions", "created_by_person", "compaction_id",
                 records["compaction"]["compaction_id"]),
                ("delivery_reports", "created_by_person", "report_id",
                 records["report"]["report_id"]),
            ):  # fmt: skip
                found = conn.execute(
                    f"SELECT {column} FROM {table} WHERE {key} = %s", (value,)
                ).fetchall()
                assert found == [(person,)], (table, person)
        assert conn.execute(
            "SELECT created_by_person, updated_by_person FROM pins WHERE pin_id = %s",
            (alices_pin["pin_id"],),
        ).fetchone() == (team.alice, team.bob)


def test_a_request_with_a_persons_bearer_is_recorded_as_that_person(
    team: Team, tmp_path: Path
) -> None:
    """The HTTP service acts as Alice for her bearer: the pin, checkpoint, delivery report and
    proposal answer it writes on Bob's run name Alice (the surface: `http_control`)."""
    root = _team_workspace(team, tmp_path)
    service = team.role(f"svc_{_suffix()}")
    with team.server.connect(team.database) as conn:
        conn.execute(f"GRANT {team.alice} TO {service}")
    bob = Cli(tmp_path / "home-bob", root, database_url=team.url(team.bob))
    run = bob.json("run", "create", "--workspace", "demo", "--goal", "bob's run")
    with open_store(team.url(team.bob)) as store:
        proposal = Rutter(store).pins.propose(
            ProposePinParams(run_id=run["run_id"], text="an agent's rule"), actor="mcp"
        )
    cli = Cli(tmp_path / "home", tmp_path)
    alices = cli.json("--database-url", team.url(), "http", "token", "create", "--scope",
                      "control", "--user", team.alice)  # fmt: skip
    log = tmp_path / "http.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "rutter", "--database-url", team.url(service), "http",
             "--bind", "127.0.0.1:0"],
            env=cli.env(), cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=sink,
        )  # fmt: skip
    try:
        port = wait_serving(log, process)
        server = Server(port, process, cli, alices["secret"], alices["secret"])
        pin = server.control_call("POST", f"threads/{run['thread_id']}/pins", {"text": "hers"})
        node = server.control_call(
            "POST", f"runs/{run['run_id']}/continuity-checkpoints", {"title": "via http"}
        )
        report = server.control_call(
            "POST", f"runs/{run['run_id']}/delivery-reports",
            {"result": "failed", "summary": "the fuzz test crashes"},
        )  # fmt: skip
        answer = server.control_call(
            "POST", f"pin-proposals/{proposal.proposal_id}/answer", {"choice": "discuss",
                                                                     "text": "not yet"},
        )  # fmt: skip
        listed = server.get(f"runs/{run['run_id']}/delivery-reports")
    finally:
        process.terminate()
        process.wait(timeout=20)
    for answered in (pin, node, report, answer):
        assert answered.status in (200, 201), answered.text
    assert (pin.json["created_by"], pin.json["created_by_person"]) == ("http_control", team.alice)
    assert node.json["created_by_person"] == team.alice
    assert report.json["created_by_person"] == team.alice
    answered_proposal = answer.json["proposal"]
    assert (answered_proposal["proposed_by_person"], answered_proposal["answered_by_person"]) == (
        team.bob, team.alice,
    )  # fmt: skip
    assert listed.status == 200, listed.text
    assert [r["created_by_person"] for r in listed.json["reports"]] == [team.alice]
    with team.server.connect(team.database) as conn:
        # The run is Bob's; Alice's checkpoint and report do not change who made it.
        assert conn.execute(
            "SELECT created_by_person FROM runs WHERE run_id = %s", (run["run_id"],)
        ).fetchone() == (team.bob,)
        assert conn.execute(
            "SELECT created_by, created_by_person FROM delivery_reports WHERE report_id = %s",
            (report.json["report_id"],),
        ).fetchone() == ("http_control", team.alice)
        assert conn.execute(
            "SELECT created_by_person FROM continuity_nodes WHERE node_id = %s",
            (node.json["node_id"],),
        ).fetchone() == (team.alice,)
