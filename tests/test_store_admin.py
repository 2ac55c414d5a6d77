"""`rutter store init|check` and people on the embedded store (docs/team.md): the same documents
as on PostgreSQL (tests/test_store_people_postgres.py), where init is the migrations and check is
the schema's version and the engine's own consistency check; the store is one person's, the
operating-system user, and a bearer cannot be made for anyone else."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from rutter_core.store import MIGRATIONS, open_store
from rutter_core.store.dialects.base import local_person
from tests.testing import BEFORE_PEOPLE, LEGACY_USER_MEMORY, Cli, write_tree

CHECK_KEYS = {
    "protocol_version", "engine", "store", "ok", "schema", "text", "extensions",
    "row_security", "role", "integrity", "problems", "warnings",
}  # fmt: skip
INIT_KEYS = {
    "protocol_version", "engine", "store", "schema_version", "group", "group_created",
    "granted", "row_security",
}  # fmt: skip


def test_init_migrates_and_a_second_init_changes_nothing(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "home", tmp_path)
    first = cli.json("store", "init")
    assert set(first) == INIT_KEYS
    assert first["protocol_version"] == "store_init.v1"
    assert (first["engine"], first["schema_version"]) == ("sqlite", MIGRATIONS[-1].version)
    assert (first["group"], first["group_created"], first["granted"]) == (None, False, [])
    assert first["row_security"] == []
    assert cli.json("store", "init") == first


def test_check_on_a_good_store(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "home", tmp_path)
    cli.json("store", "init")
    found = cli.json("store", "check")
    assert set(found) == CHECK_KEYS
    assert found["ok"] is True
    assert found["schema"] == {
        "version": MIGRATIONS[-1].version, "code_version": MIGRATIONS[-1].version,
        "pending": [], "unknown": [], "altered": [],
    }  # fmt: skip
    assert (found["extensions"], found["row_security"]) == (None, None)
    assert found["role"]["name"] == local_person()
    assert (found["integrity"], found["problems"], found["warnings"]) == ([], [], [])
    text = cli("store", "check")
    assert text.returncode == 0
    assert ": ok" in text.stdout


def test_check_of_a_store_that_does_not_exist_creates_nothing(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "home", tmp_path)
    result = cli("store", "check", "--json")
    assert result.returncode != 0
    assert "error[store_check_failed]" in result.stderr
    import json

    found = json.loads(result.stdout)
    assert [p["code"] for p in found["problems"]] == ["schema_missing"]
    assert found["store"].endswith("rutter.db")
    assert not (tmp_path / "home" / "rutter.db").exists()


def test_check_of_an_old_schema_says_so_and_leaves_it_old(tmp_path: Path) -> None:
    path = tmp_path / "home" / "rutter.db"
    path.parent.mkdir()
    with open_store(f"sqlite:///{path}", migrations=MIGRATIONS[:-1]):
        pass
    cli = Cli(tmp_path / "home", tmp_path)
    result = cli("store", "check")
    assert result.returncode != 0
    assert "schema_behind" in result.stdout
    assert f"schema: {MIGRATIONS[-2].version} (this rutter: {MIGRATIONS[-1].version})" in (
        result.stdout
    )
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT max(version) FROM schema_migrations").fetchone() == (
            MIGRATIONS[-2].version,
        )
    assert cli.json("store", "init")["schema_version"] == MIGRATIONS[-1].version
    assert cli.json("store", "check")["ok"] is True


def test_a_group_name_must_be_a_plain_identifier(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "home", tmp_path)
    result = cli("store", "init", "--group", "Bad-Name; DROP")
    assert result.returncode == 2
    assert "error[invalid_group]" in result.stderr


def test_the_store_is_the_operating_system_users(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "home", tmp_path)
    me = local_person()
    made = cli.json("context", "memory", "create", "--scope", "user", "--title", "t",
                    "--content", "c")  # fmt: skip
    assert (made["owner"], made["created_by_person"], made["updated_by_person"]) == (me, me, me)
    token = cli.json("http", "token", "create", "--scope", "read", "--user", me)
    assert token["owner"] == me
    other = cli("http", "token", "create", "--scope", "read", "--user", f"{me}-someone-else")
    assert other.returncode != 0
    assert "error[unknown_person]" in other.stderr
    empty = cli("http", "token", "create", "--scope", "read", "--user", "")
    assert "error[invalid_person]" in empty.stderr


def test_a_user_memory_from_before_people_stays_the_one_persons(tmp_path: Path) -> None:
    from rutter_core.memory.service import list_memories

    path = tmp_path / "store.db"
    with open_store(f"sqlite:///{path}", migrations=BEFORE_PEOPLE):
        pass
    with sqlite3.connect(path) as conn:
        conn.execute(LEGACY_USER_MEMORY)
    with open_store(f"sqlite:///{path}") as store:
        (kept,) = list_memories(store, scope="user").items
    assert (kept.title, kept.owner, kept.created_by_person) == ("Old", None, None)


def test_an_assembly_records_who_assembled_it(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    write_tree(root, {"AGENTS.md": "rules\n"})
    cli = Cli(tmp_path / "home", root)
    cli.json("workspace", "register", "demo", str(root))
    run = cli.json("run", "create", "--workspace", "demo", "--goal", "g")
    cli.json("context", "assemble", "--run", run["run_id"], "--budget", "400")
    with sqlite3.connect(tmp_path / "home" / "rutter.db") as conn:
        rows = conn.execute("SELECT created_by, created_by_person FROM context_assemblies")
        assert rows.fetchall() == [("cli", local_person())]
