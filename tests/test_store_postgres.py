"""The store on a real PostgreSQL server (tests/postgres.py): migrations and their ledger, the
append-only triggers, optimistic versions across processes, the typed errors, and deletion
leaving no body in the database's files."""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest
from sqlalchemy import inspect
from sqlalchemy.engine import make_url

from rutter_core.app.workspaces import RemoveWorkspaceParams
from rutter_core.kernel.errors import ConflictError, StoreError
from rutter_core.memory.service import create_memory, delete_memory, edit_memory
from rutter_core.store import MIGRATIONS, open_store
from rutter_core.store.migrations.migration import migration_checksum
from rutter_core.store.schema import full_text_tables, metadata
from tests.conftest import write_tree
from tests.postgres import PostgresServer
from tests.store_shapes import OPENER, declared
from tests.workspace_population import OWNED, populate, register, rutter

pytestmark = pytest.mark.postgres

PASSWORD = "pw-Zq8-never-echoed"


def _database(url: str) -> str:
    return str(make_url(url).database)


def test_a_fresh_database_is_migrated_and_each_checksum_recorded(
    postgres_server: PostgresServer, postgres_url: str
) -> None:
    with open_store(postgres_url) as store:
        assert store.dialect.name == "postgresql"
    with postgres_server.connect(_database(postgres_url)) as conn:
        ledger = conn.execute(
            "SELECT version, name, checksum FROM schema_migrations ORDER BY version"
        ).fetchall()
        tables = {
            row[0]
            for row in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
            ).fetchall()
        }
        extensions = {row[0] for row in conn.execute("SELECT extname FROM pg_extension")}
        # The rebuilt table (migration 6) is referred to again by the snapshots.
        references = conn.execute(
            "SELECT confrelid::regclass::text FROM pg_constraint "
            "WHERE contype = 'f' AND conrelid = 'continuity_snapshots'::regclass"
        ).fetchall()
    assert ledger == [(m.version, m.name, migration_checksum(m, "postgresql")) for m in MIGRATIONS]
    # The checksums are the PostgreSQL renderings', not SQLite's.
    assert all(row[2] != migration_checksum(MIGRATIONS[0], "sqlite") for row in ledger[1:2])
    assert set(metadata.tables) <= tables
    assert "pg_trgm" in extensions
    assert references == [("continuity_nodes",)]
    # A second open finds everything applied and changes nothing.
    with open_store(postgres_url):
        pass
    with postgres_server.connect(_database(postgres_url)) as conn:
        assert conn.execute("SELECT count(*) FROM schema_migrations").fetchone() == (
            len(MIGRATIONS),
        )


def _plant_import(conn: psycopg.Connection[tuple[object, ...]]) -> None:
    stamp = "2026-01-01T00:00:00Z"
    conn.execute(
        "INSERT INTO workspaces (workspace_id, root, created_at) VALUES ('demo', '/srv/demo', %s)",
        (stamp,),
    )
    conn.execute(
        "INSERT INTO threads VALUES (%s, 'demo', 'active', 'cli', %s, %s)",
        ("thr_" + "0" * 26, stamp, stamp),
    )
    conn.execute(
        "INSERT INTO transcript_imports VALUES ('import:claude', 'session-1', %s, 'cli', %s)",
        ("thr_" + "0" * 26, stamp),
    )


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE transcript_imports SET external_session_id = 'other'",
        "DELETE FROM transcript_imports",
        "INSERT INTO transcript_imports SELECT * FROM transcript_imports",
    ],
)
def test_append_only_tables_refuse_changes_by_trigger_from_any_client(
    postgres_server: PostgresServer, postgres_url: str, statement: str
) -> None:
    open_store(postgres_url).close()
    with postgres_server.connect(_database(postgres_url)) as conn:
        _plant_import(conn)
        with pytest.raises(psycopg.errors.IntegrityError) as refused:
            conn.execute(statement)
        assert refused.value.sqlstate == "23R01"
        assert "append-only table transcript_imports" in str(refused.value)
        assert conn.execute("SELECT count(*) FROM transcript_imports").fetchone() == (1,)


def test_an_append_only_refusal_through_the_store_is_a_conflict(postgres_url: str) -> None:
    with open_store(postgres_url) as store:
        with store.write() as conn:
            conn.exec_driver_sql(
                "INSERT INTO workspaces (workspace_id, root, created_at) "
                "VALUES ('demo', '/srv/demo', '2026-01-01T00:00:00Z')"
            )
            conn.exec_driver_sql(
                "INSERT INTO threads VALUES ('thr_" + "0" * 26 + "', 'demo', 'active', 'cli', "
                "'2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')"
            )
            conn.exec_driver_sql(
                "INSERT INTO transcript_imports VALUES ('import:claude', 'session-1', 'thr_"
                + "0" * 26
                + "', 'cli', '2026-01-01T00:00:00Z')"
            )
        with pytest.raises(ConflictError) as refused, store.write() as conn:
            conn.exec_driver_sql("DELETE FROM transcript_imports")
        assert refused.value.details == {"constraint": "append_only"}


def _edit_once(url: str, memory_id: str, version: int, title: str, ready: object) -> str:
    ready.wait()  # type: ignore[attr-defined]
    with open_store(url) as store:
        try:
            edit_memory(store, memory_id, version=version, title=title, actor="cli")
        except ConflictError as exc:
            return exc.code
    return "edited"


def test_optimistic_versions_have_one_winner_across_processes(postgres_url: str) -> None:
    with open_store(postgres_url) as store:
        record = create_memory(store, scope="user", title="Original", content="Body", actor="cli")
    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager:
        ready = manager.Event()
        with context.Pool(2) as pool:
            pending = [
                pool.apply_async(
                    _edit_once, (postgres_url, record.memory_id, 1, f"Title {n}", ready)
                )
                for n in range(2)
            ]
            ready.set()
            outcomes = sorted(result.get(timeout=120) for result in pending)
    assert outcomes == ["conflict", "edited"]
    with open_store(postgres_url) as store, store.read() as conn:
        version = conn.exec_driver_sql("SELECT version FROM memories").scalar_one()
    assert version == 2


def _role_url(server: PostgresServer, database: str, password: str) -> str:
    with server.connect() as conn:
        conn.execute(f"CREATE ROLE rutter_member LOGIN PASSWORD '{PASSWORD}'")
        conn.execute(f"GRANT ALL ON DATABASE {database} TO rutter_member")
    with server.connect(database) as conn:
        conn.execute("GRANT ALL ON SCHEMA public TO rutter_member")
    return server.url(database, user="rutter_member", password=password)


@pytest.fixture
def member(postgres_server: PostgresServer, postgres_url: str) -> object:
    yield
    with postgres_server.connect() as conn:
        conn.execute(f"REVOKE ALL ON DATABASE {_database(postgres_url)} FROM rutter_member")
    postgres_server.drop_database(_database(postgres_url))
    with postgres_server.connect() as conn:
        conn.execute("DROP ROLE IF EXISTS rutter_member")


def test_bad_credentials_are_typed_and_never_echo_the_password(
    postgres_server: PostgresServer, postgres_url: str, member: object
) -> None:
    wrong = PASSWORD + "-wrong"
    url = _role_url(postgres_server, _database(postgres_url), wrong)
    with pytest.raises(StoreError) as refused:
        open_store(url)
    assert refused.value.code == "store_unavailable"
    shown = f"{refused.value} {refused.value.details} {refused.value.__cause__}"
    assert wrong not in shown
    assert PASSWORD not in shown
    assert "password authentication failed" in str(refused.value)
    # The right one opens it.
    with open_store(
        postgres_server.url(_database(postgres_url), user="rutter_member", password=PASSWORD)
    ):
        pass


def test_an_unreachable_server_is_typed_and_never_echoes_the_password(tmp_path: Path) -> None:
    url = f"postgresql+psycopg://someone:{PASSWORD}@/rutter?host={tmp_path / 'nowhere'}"
    with pytest.raises(StoreError) as refused:
        open_store(url)
    assert refused.value.code == "store_unavailable"
    assert PASSWORD not in f"{refused.value} {refused.value.details}"


def test_a_read_only_database_refuses_writes_typed(
    postgres_server: PostgresServer, postgres_url: str
) -> None:
    database = _database(postgres_url)
    open_store(postgres_url).close()
    with postgres_server.connect() as conn:
        conn.execute(f"ALTER DATABASE {database} SET default_transaction_read_only = on")
    with open_store(postgres_url) as store, pytest.raises(StoreError) as refused:
        create_memory(store, scope="user", title="T", content="Secret body", actor="cli")
    assert refused.value.code == "store_read_only"
    assert "Secret body" not in str(refused.value)
    # The remedy in PostgreSQL's terms, not a file's.
    assert "default_transaction_read_only off" in refused.value.message
    assert "file" not in refused.value.message


def test_a_writer_waiting_past_the_busy_timeout_is_store_busy(postgres_url: str) -> None:
    with (
        open_store(postgres_url, busy_timeout_ms=200) as store,
        store.write(),
        pytest.raises(StoreError) as refused,
        store.write(),
    ):
        pass
    assert refused.value.code == "store_busy"


def test_a_deleted_memory_body_is_in_no_table_file(
    postgres_server: PostgresServer, postgres_url: str
) -> None:
    body = "Zebra-marker-7f3a unique memory body for the file scan"
    with open_store(postgres_url) as store:
        record = create_memory(store, scope="user", title="To delete", content=body, actor="cli")
        with postgres_server.connect() as conn:
            conn.execute("CHECKPOINT")  # the pages on disk, as a long-lived server has them
        assert postgres_server.files_holding(body.encode())
        deleted = delete_memory(store, record.memory_id, version=1, actor="cli")
        assert deleted.purged is True
        with postgres_server.connect() as conn:
            conn.execute("CHECKPOINT")
    assert postgres_server.files_holding(body.encode()) == []


_ANY_OF = re.compile(r"= ANY \(ARRAY\[([^\]]*)\]\)")


def _as_declared(where: str) -> str:
    """A partial index's predicate as the schema module writes it: PostgreSQL gives back
    `(status = ANY (ARRAY['a'::text, 'b'::text]))` for `status IN ('a', 'b')`."""
    where = where.removeprefix("(").removesuffix(")").replace("::text", "")
    return _ANY_OF.sub(lambda match: f"IN ({match.group(1)})", where)


def _built_on_postgresql(conn: Any, name: str) -> dict[str, Any]:
    """`test_store_schema._built`, read from PostgreSQL's catalog."""
    inspector = inspect(conn)
    indexes = []
    for index in inspector.get_indexes(name):
        if index.get("duplicates_constraint"):
            continue  # a UNIQUE column's own index: among "unique"
        options = index.get("dialect_options", {})
        sorting = index.get("column_sorting", {})
        ordered = [(column, "desc" in sorting.get(column, ())) for column in index["column_names"]]
        where = options.get("postgresql_where")
        if where is not None:
            where = _as_declared(str(where))
        indexes.append((index["name"], ordered, bool(index["unique"]), where))
    triggers = {
        str(row[0])
        for row in conn.exec_driver_sql(
            "SELECT tgname FROM pg_trigger WHERE NOT tgisinternal "
            "AND tgrelid = to_regclass(%(name)s)",
            {"name": name},
        )
    }
    guards = {f"{name}_append_only_no_{verb}" for verb in ("update", "delete", "existing_key")}
    assert triggers in (set(), guards), f"{name} has some append-only guards only: {triggers}"
    return {
        "columns": [
            (c["name"], str(c["type"]), c["nullable"]) for c in inspector.get_columns(name)
        ],
        "primary_key": inspector.get_pk_constraint(name)["constrained_columns"],
        "foreign_keys": sorted(
            (column, fk["referred_table"], referred)
            for fk in inspector.get_foreign_keys(name)
            for column, referred in zip(
                fk["constrained_columns"], fk["referred_columns"], strict=True
            )
        ),
        "unique": sorted(u["column_names"] for u in inspector.get_unique_constraints(name)),
        "indexes": sorted(indexes),
        "append_only": triggers == guards,
    }


def test_the_schema_module_is_the_shape_the_migrations_build_on_postgresql(
    postgres_url: str,
) -> None:
    with open_store(postgres_url) as store, store.read() as conn:
        inspector = inspect(conn)
        assert set(inspector.get_table_names()) == set(metadata.tables) | set(full_text_tables)
        for name in full_text_tables:
            columns = [(c["name"], str(c["type"])) for c in inspector.get_columns(name)]
            assert columns == [("entry_id", "BIGINT"), ("body", "TEXT")]
        for table in metadata.sorted_tables:
            assert _built_on_postgresql(conn, table.name) == declared(table), table.name


def test_eight_processes_opening_a_new_database_at_once_apply_each_migration_once(
    postgres_server: PostgresServer, postgres_url: str, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    ready = [tmp_path / f"ready-{i}" for i in range(8)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", OPENER, postgres_url, str(go), str(flag)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for flag in ready
    ]
    deadline = time.monotonic() + 120
    while not all(flag.exists() for flag in ready) and time.monotonic() < deadline:
        time.sleep(0.01)
    go.touch()
    errors = [proc.communicate(timeout=120)[1] for proc in procs]
    for proc, err in zip(procs, errors, strict=True):
        assert proc.returncode == 0, err.decode()
    with postgres_server.connect(_database(postgres_url)) as conn:
        versions = [
            int(str(row[0])) for row in conn.execute("SELECT version FROM schema_migrations")
        ]
    assert sorted(versions) == [m.version for m in MIGRATIONS]


# --- the command line on a PostgreSQL store ---------------------------------------------------


def _rutter(*args: str, home: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUTTER_")}
    env["RUTTER_HOME"] = str(home)
    result = subprocess.run(
        [sys.executable, "-m", "rutter", *args, "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def test_workspaces_and_memories_through_the_cli_on_postgresql(
    postgres_server: PostgresServer, postgres_url: str, tmp_path: Path
) -> None:
    # The URL as a person writes it: no driver named, the socket directory as the host.
    url = f"postgresql://{postgres_server.superuser}@/{_database(postgres_url)}"
    url += f"?host={postgres_server.socket_dir}"
    home = tmp_path / "home"  # stays empty: the store is the database
    root = tmp_path / "demo"
    root.mkdir()
    store = ("--database-url", url)
    registered = _rutter(*store, "workspace", "register", "demo", str(root), home=home)
    assert registered["workspace_id"] == "demo"
    listed = _rutter(*store, "workspace", "list", home=home)
    assert [item["workspace_id"] for item in listed["workspaces"]] == ["demo"]
    created = _rutter(
        *store, "context", "memory", "create", "--scope", "project", "--workspace", "demo",
        "--title", "Test convention", "--content", "Run unit tests first", home=home,
    )  # fmt: skip
    memories = _rutter(*store, "context", "memory", "list", "--workspace", "demo", home=home)
    assert [item["id"] for item in memories["items"]] == [created["id"]]
    deleted = _rutter(
        *store, "context", "memory", "delete", created["id"], "--version", "1", home=home
    )
    assert deleted == {
        "id": created["id"], "version": 1, "deleted": True, "recoverable": False, "purged": True,
    }  # fmt: skip
    after = _rutter(*store, "context", "memory", "list", "--workspace", "demo", home=home)
    assert after["items"] == []
    assert not home.exists()
    with postgres_server.connect(_database(postgres_url)) as conn:
        assert conn.execute("SELECT count(*) FROM memories").fetchone() == (0,)
        assert conn.execute("SELECT workspace_id FROM workspaces").fetchall() == [("demo",)]


def _owned(conn: psycopg.Connection[tuple[object, ...]], workspace_id: str) -> dict[str, int]:
    return {
        table: int(str(conn.execute(query.replace("?", "%s"), (workspace_id,)).fetchone()[0]))  # type: ignore[index]
        for table, query in OWNED.items()
    }


def _guards(conn: psycopg.Connection[tuple[object, ...]]) -> set[tuple[str, str]]:
    """(trigger, enabled state) of every append-only guard."""
    rows = conn.execute(
        "SELECT tgname, tgenabled FROM pg_trigger WHERE tgname LIKE '%append_only%'"
    )
    return {(str(name), str(state)) for name, state in rows}


def test_a_cascading_workspace_removal_on_postgresql_deletes_purges_and_restores_the_guards(
    postgres_server: PostgresServer, postgres_url: str, tmp_path: Path
) -> None:
    secret = f"cascade-{uuid.uuid4().hex}"
    demo, other = tmp_path / "demo", tmp_path / "other"
    write_tree(demo, {"AGENTS.md": "root rules\n", "src/AGENTS.md": "src rules\n"})
    write_tree(other, {"AGENTS.md": "other rules\n"})
    database = _database(postgres_url)
    with open_store(postgres_url) as store:
        register(store, "demo", demo)
        register(store, "other", other)
        populate(store, "demo", secret)
        populate(store, "other", "kept", transcript=False)
        with postgres_server.connect(database) as conn:
            other_before, guards = _owned(conn, "other"), _guards(conn)
            conn.execute("CHECKPOINT")
        assert postgres_server.files_holding(secret.encode())
        removed = rutter(store).workspaces.remove(
            RemoveWorkspaceParams(workspace_id="demo", cascade=True)
        )
    body = removed.to_json()
    assert (body["cascade"], body["removed"], body["purged"]) == (True, True, True)
    with postgres_server.connect(database) as conn:
        assert set(_owned(conn, "demo").values()) == {0}
        assert _owned(conn, "other") == other_before
        assert _guards(conn) == guards
        append_only = [table for table in metadata.sorted_tables if table.info.get("append_only")]
        assert len(guards) == len(append_only) * 3  # three guards on each append-only table
        assert all(state == "O" for _, state in guards)  # enabled
        with pytest.raises(psycopg.errors.IntegrityError, match="append-only"):
            conn.execute("DELETE FROM messages")
        conn.execute("CHECKPOINT")
    assert postgres_server.files_holding(secret.encode()) == []


@pytest.mark.parametrize("ctype", ["C", "POSIX"])
def test_a_database_whose_locale_hides_cjk_letters_is_refused_saying_what_to_change(
    postgres_server: PostgresServer, ctype: str
) -> None:
    name = f"rutter_ctype_{ctype.lower()}_{os.getpid()}"
    with postgres_server.connect() as conn:
        conn.execute(
            f"CREATE DATABASE {name} TEMPLATE template0 ENCODING 'UTF8' "
            f"LC_COLLATE 'C' LC_CTYPE '{ctype}'"
        )
    try:
        with pytest.raises(StoreError) as refused:
            open_store(postgres_server.url(name))
        assert refused.value.code == "unsupported_database"
        assert refused.value.details["lc_ctype"] == "C"  # PostgreSQL's name for both
        assert "LC_CTYPE" in refused.value.message
        assert "C.UTF-8" in refused.value.message
    finally:
        postgres_server.drop_database(name)
