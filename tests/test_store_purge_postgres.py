"""A member's deletion on a real PostgreSQL server (tests/postgres.py) leaves the deleted text in
no table file: a person's role owns no table, so rutter has each table rewritten as its owner
by `rutter_purge_table`, a function migration 23 makes and `rutter store init` lets the members'
group run (docs/team.md). The store is set up as docs/team.md says: an administrator's role that
owns the database, not a superuser, runs `store init`; the people are roles in the group.

The files are scanned as they are on disk (`PostgresServer.files_holding`) after a CHECKPOINT,
so what the purge left in a table, its TOAST data or an index would be found."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from sqlalchemy.engine import make_url

from rutter_core.memory.service import create_memory, delete_memory
from rutter_core.store import MIGRATIONS, open_store
from rutter_core.store.admin import check, initialize
from rutter_core.store.dialects.postgresql_purge import PURGE_LOCK_KEY
from tests.postgres import PostgresServer
from tests.testing import Cli

pytestmark = pytest.mark.postgres

PASSWORD = "pw-purge-8Qz"

PURGE = "rutter_purge_table"


@dataclass
class Team:
    """A database owned by an administrator's role (no superuser) that ran `store init`, with
    a group role and one person in it."""

    server: PostgresServer
    database: str
    admin: str
    group: str
    member: str

    def url(self, user: str) -> str:
        return self.server.url(self.database, user=user, password=PASSWORD)

    def raw(self, user: str) -> psycopg.Connection[tuple[Any, ...]]:
        return self.server.connect_as(self.database, user, PASSWORD)

    def role(self, name: str, *, member: bool = True) -> str:
        group = self.group if member else None
        return self.server.create_role(self.database, name, PASSWORD, group=group)

    def checkpoint(self) -> None:
        """Every page written to the table files, as a long-lived server has them."""
        with self.server.connect() as conn:
            conn.execute("CHECKPOINT")


def _suffix() -> str:
    return uuid.uuid4().hex[:10]


@pytest.fixture
def team(postgres_server: PostgresServer, postgres_url: str) -> Team:
    database = str(make_url(postgres_url).database)
    suffix = _suffix()
    admin = f"adm_{suffix}"
    with postgres_server.connect() as conn:
        conn.execute(f"CREATE ROLE {admin} LOGIN CREATEROLE PASSWORD '{PASSWORD}'")
        conn.execute(f"ALTER DATABASE {database} OWNER TO {admin}")
    made = Team(postgres_server, database, admin, f"team_{suffix}", "")
    with open_store(made.url(admin)) as store:
        initialize(store, group=made.group)
    made.member = made.role(f"alice_{suffix}")
    return made


def _refusal_text(error: psycopg.Error) -> str:
    """Everything the server said about a refusal: message, detail, hint and context."""
    diag = error.diag
    parts = (str(error), diag.message_detail, diag.message_hint, diag.context)
    return " ".join(part for part in parts if part)


def test_a_members_deletions_leave_the_text_in_no_table_file(team: Team, tmp_path: Path) -> None:
    secret = uuid.uuid4().hex
    # Over 2 kB and incompressible: kept out of line, in the table's TOAST data.
    deleted = f"deleted-{secret} " + os.urandom(3000).hex()
    replaced, kept = f"replaced-{secret}", f"kept-{secret}"
    root = tmp_path / f"root-{secret}"  # the registration's root: in a unique index
    root.mkdir()
    cli = Cli(tmp_path / "home", tmp_path, database_url=team.url(team.member))
    gone = cli.json("context", "memory", "create", "--scope", "user", "--title", "Gone",
                    "--content", deleted)  # fmt: skip
    edited = cli.json("context", "memory", "create", "--scope", "user", "--title", "Edited",
                      "--content", replaced)  # fmt: skip
    cli.json("workspace", "register", "gone-ws", str(root))
    team.checkpoint()
    with team.server.connect(team.database) as conn:
        toast = conn.execute(
            "SELECT pg_relation_filepath(reltoastrelid) FROM pg_class "
            "WHERE oid = 'memories'::regclass"
        ).fetchone()
        root_index = conn.execute(
            "SELECT pg_relation_filepath(indexrelid) FROM pg_index "
            "WHERE indrelid = 'workspaces'::regclass AND indisunique AND NOT indisprimary"
        ).fetchone()
    assert toast is not None
    assert root_index is not None

    def held(text: str) -> set[str]:
        found = team.server.files_holding(text.encode())
        return {str(path.relative_to(team.server.data)) for path in found}

    assert toast[0] in held(f"deleted-{secret}")
    assert root_index[0] in held(root.name)
    assert held(replaced)

    answer = cli.json("context", "memory", "delete", gone["id"], "--version", "1")
    assert (answer["deleted"], answer["purged"]) == (True, True)
    answer = cli.json("context", "memory", "edit", edited["id"], "--version", "1",
                      "--content", kept)  # fmt: skip
    assert (answer["content"], answer["purged"]) == (kept, True)
    answer = cli.json("workspace", "remove", "gone-ws")
    assert (answer["removed"], answer["purged"]) == (True, True)
    team.checkpoint()
    assert held(f"deleted-{secret}") == set()
    assert held(replaced) == set()
    assert held(root.name) == set()
    assert held(kept)  # the scan finds what is still there


def test_the_purge_function_rewrites_rutters_tables_and_refuses_any_other_name(
    team: Team,
) -> None:
    with team.server.connect(team.database) as conn:
        # Not rutter's: a table of another owner in the store's schema, and one of the
        # administrator's without a primary key.
        conn.execute("CREATE TABLE someone_elses (id integer PRIMARY KEY, body text)")
        conn.execute(f"CREATE TABLE keyless (body text); ALTER TABLE keyless OWNER TO {team.admin}")
    names = [
        "pg_authid",
        "pg_catalog.pg_authid",
        "public.memories",
        '"memories"',
        "memories; DROP TABLE memories; --",
        "memories') ; DROP TABLE memories; --",
        "Memories",
        "no_such_table",
        "memories_by_scope",  # an index
        "someone_elses",
        "keyless",
    ]
    with team.raw(team.member) as conn:
        conn.execute(f"SELECT {PURGE}('memories')")  # rewritten: rutter's table
        for name in names:
            with pytest.raises(psycopg.Error) as refused:
                conn.execute(f"SELECT {PURGE}(%s)", (name,))
            assert refused.value.sqlstate == "42R01", name
            assert name not in _refusal_text(refused.value)
        with pytest.raises(psycopg.Error) as refused:
            conn.execute(f"SELECT {PURGE}(NULL)")
        assert refused.value.sqlstate == "42R01"
        assert conn.execute("SELECT count(*) FROM memories").fetchone() == (0,)
    with team.server.connect(team.database) as conn:
        clustered = conn.execute("SELECT count(*) FROM pg_index WHERE indisclustered").fetchone()
        assert clustered == (0,)  # the table is left unmarked, as it was


def test_only_the_members_group_may_run_the_purge_function(team: Team) -> None:
    outsider = team.role(f"dave_{_suffix()}", member=False)
    with team.raw(outsider) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute(f"SELECT {PURGE}('memories')")
    with team.server.connect(team.database) as conn:
        granted = conn.execute(
            "SELECT has_function_privilege('public', %(f)s, 'EXECUTE'), "
            "has_function_privilege(%(group)s, %(f)s, 'EXECUTE'), "
            "pg_get_userbyid(proowner), prosecdef FROM pg_proc "
            "WHERE oid = to_regprocedure(%(f)s)",
            {"f": f"{PURGE}(text)", "group": team.group},
        ).fetchone()
    assert granted == (False, True, team.admin, True)


def test_a_reader_holding_a_table_past_the_lock_timeout_leaves_a_members_purge_incomplete(
    team: Team,
) -> None:
    secret = f"held-{uuid.uuid4().hex}"
    with open_store(team.url(team.member), busy_timeout_ms=300) as store:
        made = create_memory(store, scope="user", title="Held", content=secret, actor="cli")
        with team.raw(team.member) as reader, reader.transaction():
            reader.execute("SELECT count(*) FROM memories")  # its lock held to the end
            deleted = delete_memory(store, made.memory_id, version=1, actor="cli")
            assert (deleted.deleted, deleted.purged) == (True, False)
            team.checkpoint()
            assert team.server.files_holding(secret.encode())  # what `purged: false` warns of
        assert store.purge() is True  # the next purge finishes the job
    team.checkpoint()
    assert team.server.files_holding(secret.encode()) == []


@pytest.mark.parametrize("who", ["member", "admin"])
def test_a_snapshot_older_than_the_deletion_leaves_the_purge_incomplete_and_says_so(
    team: Team, who: str
) -> None:
    """A rewrite copies every row an open snapshot may still read: while a session of the
    database (here one that never touched rutter's tables) holds a snapshot taken before the
    deletion, the deleted text stays in the new files, and the answer says so."""
    secret = f"old-snapshot-{uuid.uuid4().hex}"
    user = team.member if who == "member" else team.admin
    with open_store(team.url(user), busy_timeout_ms=300) as store:
        made = create_memory(store, scope="user", title="Seen", content=secret, actor="cli")
        with team.server.connect(team.database) as other:
            other.autocommit = False
            other.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
            other.execute("SELECT 1")  # its snapshot, from before the deletion
            deleted = delete_memory(store, made.memory_id, version=1, actor="cli")
            assert (deleted.deleted, deleted.purged) == (True, False)
            team.checkpoint()
            assert team.server.files_holding(secret.encode())  # what `purged: false` warns of
            other.rollback()
        assert store.purge() is True
    team.checkpoint()
    assert team.server.files_holding(secret.encode()) == []


def _wait_for(conn: psycopg.Connection[tuple[Any, ...]], query: str, params: Any) -> None:
    """Until `query` returns a row (a minute at most: then the test fails)."""
    for _ in range(6000):
        if conn.execute(query, params).fetchall():
            return
        time.sleep(0.01)
    pytest.fail(f"never true: {query}")


def test_a_purge_waiting_for_its_turn_holds_back_no_other_rewrite(team: Team) -> None:
    """A purge waiting for the purge lock holds no snapshot: a snapshot older than a deletion
    would make a rewrite under way meanwhile copy the deleted row into its new file."""
    secret = f"waiting-{uuid.uuid4().hex}"
    with team.server.connect(team.database) as conn:
        conn.execute("CREATE SCHEMA scratch")
        conn.execute("CREATE TABLE scratch.notes (id integer PRIMARY KEY, body text)")
    results: list[bool] = []
    member = open_store(team.url(team.member), busy_timeout_ms=120_000)
    with team.server.connect(team.database) as holder, member as store:
        holder.execute(f"SELECT pg_advisory_lock({PURGE_LOCK_KEY})")  # another purge's turn
        waiting = threading.Thread(target=lambda: results.append(store.purge()))
        waiting.start()
        try:
            with team.server.connect(team.database) as conn:
                _wait_for(
                    conn,
                    "SELECT 1 FROM pg_stat_activity WHERE usename = %s AND strpos(query, %s) > 0",
                    (team.member, f"advisory_lock({PURGE_LOCK_KEY})"),
                )  # the member's purge has asked for the lock
                conn.execute("INSERT INTO scratch.notes VALUES (1, %s)", (secret,))
                conn.execute("DELETE FROM scratch.notes")
                conn.execute("CLUSTER scratch.notes USING notes_pkey")
            team.checkpoint()
            assert team.server.files_holding(secret.encode()) == []
        finally:
            holder.execute(f"SELECT pg_advisory_unlock({PURGE_LOCK_KEY})")
            waiting.join(timeout=120)
    assert results == [True]


_PURGING = """
import json, sys, time
from pathlib import Path
from rutter_core.memory.service import create_memory, delete_memory
from rutter_core.store import open_store

url, go = sys.argv[1], Path(sys.argv[2])
while not go.exists():
    time.sleep(0.01)
purged = []
with open_store(url) as store:
    for number in range(4):
        made = create_memory(store, scope="user", title=f"Race {number}",
                             content=f"raced text {number}", actor="cli")
        purged.append(delete_memory(store, made.memory_id, version=1, actor="cli").purged)
print(json.dumps(purged))
"""


def test_purges_from_several_processes_at_once_all_finish(team: Team, tmp_path: Path) -> None:
    """Two members (the function) and the administrator (VACUUM FULL) delete and purge at the
    same time: the purges take turns, and every one completes."""
    bob = team.role(f"bob_{_suffix()}")
    go = tmp_path / "go"
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", _PURGING, team.url(user), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for user in (team.member, bob, team.admin)
    ]
    go.touch()
    answers = [process.communicate(timeout=300) for process in processes]
    for process, (out, err) in zip(processes, answers, strict=True):
        assert process.returncode == 0, err
        assert json.loads(out) == [True] * 4
    team.checkpoint()
    assert team.server.files_holding(b"raced text") == []


def test_store_check_says_what_the_group_lacks_and_store_init_grants_it(
    team: Team, tmp_path: Path
) -> None:
    with team.raw(team.admin) as conn:
        conn.execute(f"REVOKE EXECUTE ON FUNCTION {PURGE}(text) FROM {team.group}")
        conn.execute(f"REVOKE UPDATE ON memories FROM {team.group}")
    cli = Cli(tmp_path / "home", tmp_path, database_url=team.url(team.member))
    result = cli("store", "check", "--group", team.group, "--json")
    assert result.returncode != 0
    found = json.loads(result.stdout)
    assert [p["code"] for p in found["problems"]] == ["grant_missing"]
    message = found["problems"][0]["message"]
    assert f"EXECUTE ON FUNCTION {PURGE}(text)" in message
    assert "UPDATE ON memories" in message
    # Without the grant a member's deletion is done, and says its purge is not.
    with open_store(team.url(team.member)) as store:
        made = create_memory(store, scope="user", title="T", content="some words", actor="cli")
        deleted = delete_memory(store, made.memory_id, version=1, actor="cli")
    assert (deleted.deleted, deleted.purged) == (True, False)

    init = cli.json("--database-url", team.url(team.admin), "store", "init", "--group", team.group)
    assert f"EXECUTE ON FUNCTION {PURGE}(text)" in init["granted"]
    with open_store(team.url(team.member)) as store:
        assert check(store, group=team.group).problems == ()
        made = create_memory(store, scope="user", title="T", content="more words", actor="cli")
        deleted = delete_memory(store, made.memory_id, version=1, actor="cli")
    assert (deleted.deleted, deleted.purged) == (True, True)


def test_a_store_made_before_migration_23_gets_the_purge_function(
    postgres_server: PostgresServer, postgres_url: str
) -> None:
    before = tuple(m for m in MIGRATIONS if m.version < 23)
    database = str(make_url(postgres_url).database)
    function = f"{PURGE}(text)"
    with open_store(postgres_url, migrations=before):
        pass
    with postgres_server.connect(database) as conn:
        assert conn.execute("SELECT to_regprocedure(%s)", (function,)).fetchone() == (None,)
    with open_store(postgres_url):
        pass
    with postgres_server.connect(database) as conn:
        assert conn.execute(
            "SELECT prosecdef, has_function_privilege('public', oid, 'EXECUTE') FROM pg_proc "
            "WHERE oid = to_regprocedure(%s)",
            (function,),
        ).fetchone() == (True, False)
        assert conn.execute("SELECT name FROM schema_migrations WHERE version = 23").fetchone() == (
            "member_purge",
        )
