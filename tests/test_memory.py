"""Explicit user/project memory in rutter_core (issue 5): every rule, on a real SQLite store.

Operator-only writes (service and raw SQL), secrets and sensitive sources, retention bounds,
optimistic versions (also between two processes), physical deletion checked on the raw bytes
of the database and its WAL, export, list order and bounds, text validation.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from rutter_cli.errors import message_of
from rutter_core.app.facade import Rutter
from rutter_core.app.memory import (
    CreateMemoryParams,
    DeleteMemoryParams,
    EditMemoryParams,
    ListMemoriesParams,
)
from rutter_core.app.workspaces import RemoveWorkspaceParams
from rutter_core.kernel.actors import OPERATOR_ACTORS
from rutter_core.kernel.errors import (
    ConflictError,
    Hint,
    NotFoundError,
    RejectedError,
    RutterError,
    UsageError,
)
from rutter_core.memory.content_file import read_content_file
from rutter_core.memory.model import MemoryRecord
from rutter_core.memory.policy import MAX_CONTENT_BYTES, check_source_ref, sensitive_source_kind
from rutter_core.memory.retention import parse_retention
from rutter_core.memory.service import (
    MAX_LIST_LIMIT,
    create_memory,
    delete_memory,
    edit_memory,
    export_memories,
    get_memory,
    list_memories,
    set_memory_status,
)
from rutter_core.store import MIGRATIONS, Store, open_store
from rutter_core.workspaces.service import register_workspace
from tests.testing import THIS_MACHINE

# Every test whose store is the `store` fixture runs on SQLite and on PostgreSQL, but those that
# read or write the SQLite file itself (`sqlite_only`).
pytestmark = pytest.mark.both_dialects

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
RECORD_FIELDS = {
    "id", "protocol_version", "scope", "scope_id", "owner", "title", "content",
    "content_sha256", "status", "source_kind", "references", "retention_until", "expired",
    "redacted", "created_by", "created_by_person", "updated_by", "updated_by_person", "version",
    "created_at", "updated_at",
}  # fmt: skip


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "rutter.db"


@pytest.fixture
def store_url(store_dialect: str, db_path: Path, request: pytest.FixtureRequest) -> str:
    if store_dialect == "postgresql":
        return str(request.getfixturevalue("postgres_url"))
    return f"sqlite:///{db_path}"


@pytest.fixture
def store(store_url: str, tmp_path: Path) -> Iterator[Store]:
    with open_store(store_url) as opened:
        root = tmp_path / "demo"
        root.mkdir()
        register_workspace(opened, "demo", root, cwd=tmp_path, machine=THIS_MACHINE)
        yield opened


def user_memory(store: Store, **overrides: Any) -> MemoryRecord:
    values: dict[str, Any] = {"title": "Test convention", "content": "Run unit tests first"}
    values.update(overrides)
    return create_memory(store, scope="user", actor="cli", **values)


def raw(db_path: Path) -> sqlite3.Connection:
    return sqlite3.connect(db_path, timeout=10, isolation_level=None)


class _Raises:
    """`with _Raises(ErrorType, code):`: the block raises that type with that code."""

    def __init__(self, kind: type[RutterError], code: str) -> None:
        self.kind = kind
        self.code = code
        self.error: Any = None

    def __enter__(self) -> _Raises:
        return self

    def __exit__(self, kind: Any, error: Any, tb: Any) -> bool:
        assert error is not None, f"expected {self.kind.__name__}({self.code}), nothing raised"
        assert isinstance(error, self.kind), repr(error)
        assert error.code == self.code, repr(error)
        self.error = error
        return True


# -- the record ----------------------------------------------------------------------------------


@pytest.mark.sqlite_only
def test_migration_3_creates_the_memory_table(db_path: Path, store: Store) -> None:
    assert (3, "memory") in [(m.version, m.name) for m in MIGRATIONS]
    conn = raw(db_path)
    try:
        ledger = conn.execute("SELECT version, name FROM schema_migrations").fetchall()
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    finally:
        conn.close()
    assert (3, "memory") in ledger
    assert "memories" in tables
    # Nothing else may keep a body: no history table; the one full-text index of memories is
    # the history search's, compacted as a body leaves it (tests/test_history.py proves it on
    # the files' bytes). Resolved experience candidates have no column for a body
    # (tests/test_candidates.py).
    history_index = {name for name in tables if name.startswith("history_memory_text")}
    kept = {"memories", "memory_candidates"}
    assert not {name for name in tables if "memor" in name} - kept - history_index


def test_created_record_has_exactly_the_protocol_fields(store: Store) -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    record = create_memory(
        store,
        scope="project",
        workspace_id="demo",
        title="  Test convention ",
        content="Run unit tests before packaging\n",
        references=["docs/testing.md"],
        retention="720h",
        actor="cli",
    )
    body = record.to_json()
    assert set(body) == RECORD_FIELDS
    assert list(body)[:3] == ["id", "protocol_version", "scope"]  # the documented key order
    assert list(body)[-8:] == [
        "redacted", "created_by", "created_by_person", "updated_by", "updated_by_person",
        "version", "created_at", "updated_at",
    ]  # fmt: skip
    assert body["id"].startswith("mem_")
    assert len(body["id"]) == 30
    assert body["protocol_version"] == "context_memory.v1"
    assert (body["scope"], body["scope_id"]) == ("project", "demo")
    assert body["title"] == "Test convention"  # trimmed
    assert body["content"] == "Run unit tests before packaging\n"  # kept as written
    assert body["content_sha256"] == hashlib.sha256(body["content"].encode()).hexdigest()
    assert body["status"] == "active"
    assert body["source_kind"] == "operator_explicit"
    assert body["references"] == ["docs/testing.md"]
    assert body["expired"] is False
    assert body["redacted"] is False
    assert (body["created_by"], body["updated_by"], body["version"]) == ("cli", "cli", 1)
    assert body["created_at"] == body["updated_at"]
    created = datetime.strptime(body["created_at"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert created >= before
    until = datetime.strptime(body["retention_until"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert until - created == timedelta(hours=720)
    assert get_memory(store, record.memory_id) == record


def test_user_scope_is_local_user_and_project_scope_needs_a_registered_workspace(
    store: Store,
) -> None:
    assert user_memory(store).scope_id == "local-user"
    with _Raises(NotFoundError, "not_registered") as raised:
        create_memory(
            store, scope="project", workspace_id="ghost", title="t", content="c", actor="cli"
        )
    assert raised.error.details == {"workspace_id": "ghost"}
    assert "rutter workspace register ghost ROOT" in message_of(raised.error)
    with _Raises(UsageError, "workspace_required"):
        create_memory(store, scope="project", title="t", content="c", actor="cli")
    with _Raises(UsageError, "workspace_not_allowed"):
        create_memory(store, scope="user", workspace_id="demo", title="t", content="c", actor="cli")
    with _Raises(UsageError, "invalid_scope"):
        create_memory(store, scope="team", title="t", content="c", actor="cli")
    assert len(list_memories(store, include_inactive=True).items) == 1


# -- only operators write ------------------------------------------------------------------------


@pytest.mark.parametrize("actor", ["model", "tool", "system", "", "CLI", "cli "])
def test_non_operator_actor_can_neither_create_nor_change_nor_delete(
    store: Store, actor: str
) -> None:
    kept = user_memory(store)
    with _Raises(RejectedError, "actor_not_allowed") as raised:
        create_memory(store, scope="user", title="planted", content="obey me", actor=actor)
    assert "cli, lsp, http_control" in raised.error.message
    with _Raises(RejectedError, "actor_not_allowed"):
        edit_memory(store, kept.memory_id, version=1, content="planted", actor=actor)
    with _Raises(RejectedError, "actor_not_allowed"):
        set_memory_status(store, kept.memory_id, version=1, status="disabled", actor=actor)
    with _Raises(RejectedError, "actor_not_allowed"):
        delete_memory(store, kept.memory_id, version=1, actor=actor)
    assert list_memories(store, include_inactive=True).items == (kept,)


def test_every_operator_actor_is_recorded(store: Store) -> None:
    assert OPERATOR_ACTORS == ("cli", "lsp", "http_control")
    record = user_memory(store)
    for version, actor in enumerate(OPERATOR_ACTORS, start=1):
        record = edit_memory(
            store, record.memory_id, version=version, content=f"by {actor}", actor=actor
        )
        assert (record.created_by, record.updated_by, record.version) == ("cli", actor, version + 1)


_VALID_ROW = {
    "memory_id": "mem_01J00000000000000000000000",
    "scope": "user",
    "scope_id": "local-user",
    "workspace_id": None,
    "title": "t",
    "content": "c",
    "content_sha256": "0" * 64,
    "status": "active",
    "source_kind": "operator_explicit",
    "references_json": "[]",
    "retention_until": None,
    "redacted": 0,
    "created_by": "cli",
    "updated_by": "cli",
    "version": 1,
    "created_at": "2026-01-01T00:00:00Z",
    "updated_at": "2026-01-01T00:00:00Z",
}


def _insert(conn: sqlite3.Connection, **overrides: Any) -> None:
    row = {**_VALID_ROW, **overrides}
    columns = ", ".join(row)
    marks = ", ".join("?" for _ in row)
    conn.execute(f"INSERT INTO memories ({columns}) VALUES ({marks})", tuple(row.values()))


@pytest.mark.sqlite_only
@pytest.mark.parametrize(
    "overrides",
    [
        {"created_by": "model"},
        {"created_by": "tool", "updated_by": "tool"},
        {"updated_by": "system"},
        {"created_by": None},
        {"status": "deleted"},
        {"scope": "team"},
        {"source_kind": "model_inferred"},
        {"scope": "user", "scope_id": "demo"},
        {"scope": "user", "workspace_id": "demo"},
        {"scope": "project", "scope_id": "demo", "workspace_id": None},
        {"scope": "project", "scope_id": "ghost", "workspace_id": "ghost"},  # foreign key
        {"version": 0},
        {"redacted": 2},
        {"memory_id": "note_01J0000000000000000000000"},
    ],
)
def test_store_refuses_planted_rows_through_raw_sql(
    db_path: Path, store: Store, overrides: dict[str, Any]
) -> None:
    conn = raw(db_path)
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        _insert(conn, memory_id="mem_01J00000000000000000000001")  # the baseline is accepted
        with pytest.raises(sqlite3.IntegrityError):
            _insert(conn, **overrides)
    finally:
        conn.close()
    assert [r.memory_id for r in list_memories(store).items] == ["mem_01J00000000000000000000001"]


@pytest.mark.sqlite_only
@pytest.mark.parametrize("actor", ["model", "tool", "system"])
def test_store_refuses_raw_updates_by_a_non_operator(
    db_path: Path, store: Store, actor: str
) -> None:
    record = user_memory(store)
    conn = raw(db_path)
    try:
        with pytest.raises(sqlite3.IntegrityError):
            conn.execute(
                "UPDATE memories SET content = 'planted', updated_by = ?, version = version + 1 "
                "WHERE memory_id = ?",
                (actor, record.memory_id),
            )
        with pytest.raises(sqlite3.IntegrityError):
            conn.execute(
                "UPDATE memories SET created_by = ? WHERE memory_id = ?", (actor, record.memory_id)
            )
    finally:
        conn.close()
    assert get_memory(store, record.memory_id) == record


# -- secrets -------------------------------------------------------------------------------------


def test_secret_in_content_or_title_is_refused_naming_the_kinds(store: Store) -> None:
    with _Raises(RejectedError, "secret_detected") as raised:
        user_memory(store, content=f"deploy with {TOKEN}")
    message = raised.error.message
    assert "github_token x1 in the content" in message
    # What to do is a hint each surface words (the CLI names --redact-sensitive).
    assert raised.error.hint == Hint("store_redacted")
    assert TOKEN not in message
    assert TOKEN not in json.dumps(raised.error.to_json())
    assert raised.error.details["findings"] == [
        {"field": "content", "kind": "github_token", "count": 1}
    ]
    with _Raises(RejectedError, "secret_detected") as raised:
        user_memory(store, title="password=hunter22 always", content="fine")
    assert "secret_assignment x1 in the title" in raised.error.message
    assert list_memories(store, include_inactive=True).items == ()


def test_documented_example_values_are_kept_not_refused(store: Store) -> None:
    """Issue 18: AWS's documented example key pair is no secret; the memory keeps it as typed."""
    content = (
        "aws docs: aws_access_key_id = AKIA" + "IOSFODNN7EXAMPLE\n"
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY\n"
        "the GitHub token is ghp_… (never the real one)"
    )
    record = user_memory(store, title="AWS example keys", content=content)
    assert (record.content, record.redacted) == (content, False)
    # One character off the documented value and it is a key again.
    with _Raises(RejectedError, "secret_detected") as raised:
        user_memory(store, content="key AKIA" + "IOSFODNN7EXAMPLF")
    assert "aws_access_key x1 in the content" in raised.error.message


@pytest.mark.parametrize(
    ("content", "kind"),
    [
        ("mail via SG." + "Zk3" * 7 + "Q." + "Pw9x" * 10 + "Abc", "sendgrid_key"),
        ("bot 7261934058:AA" + "Hq3" * 11, "telegram_bot_token"),
        ("curl -u deploy:Xk9vQ2mP7rT4 https://api.example.com", "login_password"),
        ("password\uff1aXk9vQ2mP7rT4", "secret_assignment"),
        (
            "> -----BEGIN OPENSSH PRIVATE"
            + " KEY-----\n> "
            + "b3BlbnNzaC1rZXktdjEAAAAA" * 3
            + "\n> -----END OPENSSH PRIVATE"
            + " KEY-----",
            "private_key",
        ),
    ],
)
def test_issue_18_formats_are_refused_as_memory(store: Store, content: str, kind: str) -> None:
    with _Raises(RejectedError, "secret_detected") as raised:
        user_memory(store, content=content)
    assert f"{kind} x1 in the content" in raised.error.message
    assert content not in json.dumps(raised.error.to_json())


def test_redact_sensitive_stores_redacted_text_and_redacted_stays_true(store: Store) -> None:
    record = user_memory(
        store, title=f"key {TOKEN}", content=f"use {TOKEN} here", redact_sensitive=True
    )
    assert record.title == "key [REDACTED:github_token]"
    assert record.content == "use [REDACTED:github_token] here"
    assert record.redacted is True
    # A clean edit keeps the flag: the record was once stored with a secret cut out.
    record = edit_memory(store, record.memory_id, version=1, content="clean now", actor="cli")
    assert (record.content, record.redacted, record.version) == ("clean now", True, 2)
    record = edit_memory(store, record.memory_id, version=2, title="clean title", actor="cli")
    assert record.redacted is True
    # Each edit must ask again: without the flag a secret is refused.
    with _Raises(RejectedError, "secret_detected"):
        edit_memory(store, record.memory_id, version=3, content=f"again {TOKEN}", actor="cli")
    record = edit_memory(
        store,
        record.memory_id,
        version=3,
        content=f"again {TOKEN}",
        redact_sensitive=True,
        actor="cli",
    )
    assert record.content == "again [REDACTED:github_token]"
    assert TOKEN not in json.dumps(export_memories(store, scope="user").to_json())


def test_a_clean_record_is_not_marked_redacted_and_becomes_so_on_a_redacting_edit(
    store: Store,
) -> None:
    record = user_memory(store, redact_sensitive=True)
    assert record.redacted is False
    record = edit_memory(
        store, record.memory_id, version=1, content=f"t {TOKEN}", redact_sensitive=True, actor="lsp"
    )
    assert record.redacted is True


def test_redacted_text_must_still_fit_the_bound(store: Store) -> None:
    content = "x" * (MAX_CONTENT_BYTES - len("password=abcd1")) + "password=abcd1"
    assert len(content.encode()) == MAX_CONTENT_BYTES
    with _Raises(RejectedError, "invalid_content"):
        user_memory(store, content=content, redact_sensitive=True)


def test_secret_in_a_reference_is_refused_even_with_redaction(store: Store) -> None:
    for redact_sensitive in (False, True):
        with _Raises(RejectedError, "secret_detected") as raised:
            user_memory(
                store,
                references=["https://deploy:s3cretPassw0rd@example.com/repo.git"],
                redact_sensitive=redact_sensitive,
            )
        assert "s3cretPassw0rd" not in raised.error.message


@pytest.mark.parametrize(
    ("reference", "code"),
    [
        (f"https://deploy:{TOKEN}@example.com/.env", "sensitive_source"),
        (f"https://example.com/{TOKEN}/id_rsa", "sensitive_source"),
        (f"token={TOKEN}\nsecond line", "invalid_reference"),
        (f"token={TOKEN}\tafter a tab", "invalid_reference"),
    ],
)
def test_a_refused_reference_is_never_echoed_with_its_secret(
    store: Store, reference: str, code: str
) -> None:
    with _Raises(RejectedError, code) as raised:
        user_memory(store, references=[reference])
    assert TOKEN not in raised.error.message
    assert TOKEN not in json.dumps(raised.error.to_json())
    assert "[REDACTED:github_token]" in raised.error.message


# -- sensitive sources ---------------------------------------------------------------------------

SENSITIVE = {
    ".env": "env_file",
    "config/.env.local": "env_file",
    "./deploy/.ENV.production": "env_file",
    "services/api/prod.env": "env_file",
    ".envrc": "env_file",
    "file:///home/me/app/.env": "env_file",
    "https://example.com/raw/.env?token=1": "env_file",
    "~/.aws/credentials": "credential_store",
    "config/credentials.json": "credential_store",
    "k8s/secrets.yaml": "credential_store",
    "/run/secrets/db_password": "credential_store",
    "~/.netrc": "credential_store",
    ".git-credentials": "credential_store",
    "~/.docker/config.json": "credential_store",
    "~/.kube/config": "credential_store",
    "~/.ssh/config": "credential_store",
    "~/.gnupg/pubring.kbx": "credential_store",
    "C:\\Users\\me\\.ssh\\known_hosts": "credential_store",
    "~/.ssh/id_rsa": "credential_store",
    "keys/id_rsa": "private_key",
    "backup/id_ed25519": "private_key",
    "id_dsa": "private_key",
    "certs/server.pem": "private_key",
    "tls/server.KEY": "private_key",
    "client.p12": "private_key",
    "client.pfx": "private_key",
    "vault/passwords.kdbx": "private_key",
    "-": "terminal_input",
    "stdin": "terminal_input",
    "<stdin>": "terminal_input",
    "/dev/stdin": "terminal_input",
    "/dev/tty": "terminal_input",
    "/dev/pts/3": "terminal_input",
    "/proc/self/fd/0": "terminal_input",
    # Device paths as file URIs, through `..`, and percent-encoded names.
    "file:///proc/self/fd/0": "terminal_input",
    "file:///dev/tty": "terminal_input",
    "file:///dev/fd/0": "terminal_input",
    "/proc/self/../self/fd/0": "terminal_input",
    "/dev/../dev/tty": "terminal_input",
    "file:///app/%2Eenv": "env_file",
    "/proc/self/environ": "env_file",  # the process environment, where .env files end up
    "file:///proc/1234/environ": "env_file",
    "\\\\.\\CONIN$": "terminal_input",  # Windows console input
    "https://example.com/raw/%2eenv": "env_file",
    "terminal input": "terminal_input",
    "keystrokes": "terminal_input",
    "logs/keystrokes.log": "terminal_input",
    "tty:": "terminal_input",
    "~/.bash_history": "terminal_input",
    # Editors' backups, autosaves, swap and lock files hold the file's text.
    ".env~": "env_file",
    "config/#.env#": "env_file",
    ".#.env": "env_file",
    ".env.swp": "env_file",
    "app/.env.local~": "env_file",
    ".env.~3~": "env_file",
    "id_rsa~": "private_key",
    "keys/.id_rsa.swp": "private_key",
    "#id_ed25519#": "private_key",
    "config/credentials.json.bak": "credential_store",
    "secrets.yaml.orig": "credential_store",
    ".netrc~": "credential_store",
    "server.pem.old": "private_key",
    "~/.bash_history~": "terminal_input",
    # Any process or thread of /proc, however it is reached.
    "/proc/self/task/1234/environ": "env_file",
    "/proc/1/task/1/environ": "env_file",
    "/proc/thread-self/environ": "env_file",
    "/proc/self/task/1234/fd/0": "terminal_input",
}
HARMLESS = [
    "docs/api.keys.md",
    "secretary-notes.md",
    "docs/secrets.md",
    "docs/credentials-rotation.md",
    "environment.md",
    "docs/.env-setup.md",
    "src/keyboard.rs",
    "src/terminal/input.go",
    "https://example.com/docs/testing",
    "docs/testing.md",
    "ADR-12",
    "keys/README.md",
    "id_rsa_notes.md",
    "docs/dev/tty-notes.md",
    "https://example.com/dev/tty",
    "file:///home/me/docs/%2Eenv-setup.md",
    "notes.md~",
    "docs/#draft.md#",
    "docs/.setup.md.swp",
    "environment.md.bak",
    "/proc/cpuinfo",
    # public keys (issue 34): shared on purpose, even from the key directory
    "id_ed25519.pub",
    "~/.ssh/id_ed25519.pub",
    "keys/id_rsa.pub",
    "id_rsa.pub~",
    "deploy_key.pub",
]


@pytest.mark.parametrize(("reference", "kind"), sorted(SENSITIVE.items()))
def test_sensitive_references_are_refused_with_and_without_redaction(
    store: Store, reference: str, kind: str
) -> None:
    assert sensitive_source_kind(reference) == kind
    for redact_sensitive in (False, True):
        with _Raises(RejectedError, "sensitive_source") as raised:
            user_memory(store, references=[reference], redact_sensitive=redact_sensitive)
        assert raised.error.details["kind"] == kind
        assert "not even redacted" in raised.error.message
        assert raised.error.hint is None  # redacting is not a way out
    record = user_memory(store)
    with _Raises(RejectedError, "sensitive_source"):
        edit_memory(
            store,
            record.memory_id,
            version=1,
            references=["docs/ok.md", reference],
            redact_sensitive=True,
            actor="cli",
        )
    assert get_memory(store, record.memory_id).references == ()


@pytest.mark.parametrize("reference", HARMLESS)
def test_names_that_only_contain_sensitive_words_are_fine(store: Store, reference: str) -> None:
    assert sensitive_source_kind(reference) is None
    check_source_ref(reference)
    assert user_memory(store, references=[reference]).references == (reference,)


def test_content_imported_from_a_sensitive_path_is_refused(store: Store) -> None:
    with _Raises(RejectedError, "sensitive_source") as raised:
        user_memory(store, source_ref="config/.env.local")
    assert raised.error.details["field"] == "content file"
    record = user_memory(store, source_ref="notes/conventions.md")
    assert record.source_kind == "operator_import_explicit"


# -- content files -------------------------------------------------------------------------------


def test_read_content_file_refuses_what_is_not_a_plain_utf8_file(tmp_path: Path) -> None:
    good = tmp_path / "notes.md"
    good.write_bytes(b"\xef\xbb\xbfline one\r\nline two\n")
    assert read_content_file("notes.md", cwd=tmp_path).text == "line one\r\nline two\n"
    (tmp_path / "link.md").symlink_to(good)
    (tmp_path / "dir").mkdir()
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "big.md").write_bytes(b"a" * (MAX_CONTENT_BYTES + 1))
    (tmp_path / "latin1.md").write_bytes(b"caf\xe9\n")
    (tmp_path / ".env").write_text("A=1\n")
    linked = tmp_path / "innocent"
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "notes.md").write_text("x\n")
    linked.symlink_to(tmp_path / ".ssh")
    cases = {
        "link.md": (RejectedError, "symlink"),
        "dir": (RejectedError, "not_regular_file"),
        "fifo": (RejectedError, "not_regular_file"),
        "big.md": (RejectedError, "too_large"),
        "latin1.md": (RejectedError, "invalid_utf8"),
        ".env": (RejectedError, "sensitive_source"),
        "-": (RejectedError, "sensitive_source"),
        "/dev/stdin": (RejectedError, "sensitive_source"),
        "innocent/notes.md": (RejectedError, "sensitive_source"),  # really ~/.ssh/notes.md
        "missing.md": (NotFoundError, "not_found"),
        # Backups and autosaves of a sensitive file, and this very thread's environment.
        ".env~": (RejectedError, "sensitive_source"),
        "#.env#": (RejectedError, "sensitive_source"),
        ".env.swp": (RejectedError, "sensitive_source"),
        f"/proc/self/task/{threading.get_native_id()}/environ": (
            RejectedError,
            "sensitive_source",
        ),
        f"/proc/{os.getpid()}/task/{os.getpid()}/environ": (RejectedError, "sensitive_source"),
    }
    for backup in (".env~", "#.env#", ".env.swp"):
        (tmp_path / backup).write_text("A=1\n")
    for name, (kind, code) in cases.items():
        with _Raises(kind, code):
            read_content_file(name, cwd=tmp_path)
    exact = tmp_path / "exact.md"
    exact.write_bytes(b"b" * MAX_CONTENT_BYTES)
    assert len(read_content_file(str(exact), cwd=Path("/")).text) == MAX_CONTENT_BYTES


# -- text validation -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "code"),
    [
        ("title", "", "invalid_title"),
        ("title", "   ", "invalid_title"),
        ("title", "two\nlines", "invalid_title"),
        ("title", "bell\x07", "control_character"),
        ("title", "esc \x1b[31m red", "control_character"),
        ("title", "é" * 129, "invalid_title"),  # 258 bytes
        ("title", "a\ud800b", "invalid_text"),
        ("content", "", "invalid_content"),
        ("content", " \n\t ", "invalid_content"),
        ("content", "nul \x00 byte", "control_character"),
        ("content", "admin \u202e\u2066 reversed", "control_character"),  # Trojan Source
        ("title", "title \u2067x", "control_character"),
        ("content", "delete \x7f char", "control_character"),
        ("content", "c1 \x85 char", "control_character"),
        ("content", "vertical \x0b tab", "control_character"),
        ("content", "x" * (MAX_CONTENT_BYTES + 1), "invalid_content"),
        ("content", "€" * 5462, "invalid_content"),  # 16386 bytes, 5462 characters
    ],
)
def test_invalid_text_is_refused(store: Store, field: str, value: str, code: str) -> None:
    change: dict[str, Any] = {field: value}
    with _Raises(RejectedError, code) as raised:
        user_memory(store, **change)
    assert raised.error.details.get("field") == field
    record = user_memory(store)
    with _Raises(RejectedError, code):
        edit_memory(store, record.memory_id, version=1, actor="cli", **change)
    assert get_memory(store, record.memory_id).version == 1


def test_text_at_the_bounds_and_allowed_whitespace(store: Store) -> None:
    record = user_memory(
        store,
        title="é" * 128,  # 256 bytes
        content="tabs\tand\nnewlines\r\nand CR\rstay readable " + "€" * 5000,
    )
    assert len(record.title.encode()) == 256
    assert record.content.startswith("tabs\tand\nnewlines\nand CR\nstay readable ")
    full = user_memory(store, content="x" * MAX_CONTENT_BYTES)
    assert len(full.content) == MAX_CONTENT_BYTES


def test_references_are_trimmed_sorted_deduplicated_and_bounded(store: Store) -> None:
    record = user_memory(
        store,
        references=["  docs/b.md ", "docs/a.md", "docs/b.md", "Z-first", "é-last", "docs/a.md"],
    )
    assert record.references == ("Z-first", "docs/a.md", "docs/b.md", "é-last")
    assert len(user_memory(store, references=[f"r{i:02}" for i in range(32)]).references) == 32
    many = [f"r{i:02}" for i in range(32)] + ["r00 "]  # 33 given, 32 distinct: fine
    assert len(user_memory(store, references=many).references) == 32
    with _Raises(RejectedError, "too_many_references"):
        user_memory(store, references=[f"r{i:02}" for i in range(33)])
    assert len(user_memory(store, references=["é" * 256]).references[0].encode()) == 512
    for bad, code in [
        ("é" * 256 + "x", "invalid_reference"),
        ("   ", "invalid_reference"),
        ("two\nlines", "invalid_reference"),
        ("a\x00b", "control_character"),
    ]:
        with _Raises(RejectedError, code):
            user_memory(store, references=[bad])
    # Editing replaces the list as a whole; an empty list clears it.
    record = edit_memory(
        store, record.memory_id, version=1, references=[" new ", "new"], actor="cli"
    )
    assert record.references == ("new",)
    record = edit_memory(store, record.memory_id, version=2, references=[], actor="cli")
    assert record.references == ()


# -- retention -----------------------------------------------------------------------------------


def _time(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def test_retention_accepts_durations_and_rfc3339_times() -> None:
    created = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
    assert parse_retention("720h", created_at=created, now=created) == created + timedelta(days=30)
    assert parse_retention("30d", created_at=created, now=created) == created + timedelta(days=30)
    assert parse_retention("1h30m", created_at=created, now=created) == created + timedelta(
        minutes=90
    )
    assert parse_retention("2w", created_at=created, now=created) == created + timedelta(days=14)
    assert parse_retention("2027-01-01T00:00:00Z", created_at=created, now=created) == datetime(
        2027, 1, 1, tzinfo=UTC
    )
    assert parse_retention(
        "2027-01-01T02:00:00.999+02:00", created_at=created, now=created
    ) == datetime(2027, 1, 1, tzinfo=UTC)
    ten_years = datetime(2036, 3, 1, 12, 0, 0, tzinfo=UTC)
    assert parse_retention("2036-03-01T12:00:00Z", created_at=created, now=created) == ten_years
    leap = datetime(2028, 2, 29, tzinfo=UTC)
    assert parse_retention("2038-02-28T00:00:00Z", created_at=leap, now=leap) == datetime(
        2038, 2, 28, tzinfo=UTC
    )


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("0h", "retention_out_of_bounds"),
        ("3654d", "retention_out_of_bounds"),
        ("999999999w", "retention_out_of_bounds"),
        ("2036-03-01T12:00:01Z", "retention_out_of_bounds"),
        ("2026-03-01T12:00:00Z", "retention_out_of_bounds"),  # not after creation
        ("2025-01-01T00:00:00Z", "retention_out_of_bounds"),
        ("", "invalid_retention"),
        ("30", "invalid_retention"),
        ("30 days", "invalid_retention"),
        ("-1h", "invalid_retention"),
        ("2027-01-01", "invalid_retention"),
        ("2027-01-01T00:00:00", "invalid_retention"),  # no offset
        ("2027-02-30T00:00:00Z", "invalid_retention"),
        ("forever", "invalid_retention"),
        # Digits of other scripts are digits to `\d` and `int`, not to a duration (issue 18).
        ("\u0661h", "invalid_retention"),  # ARABIC-INDIC DIGIT ONE
        ("\uff11h", "invalid_retention"),  # FULLWIDTH DIGIT ONE
        ("1\u0660d", "invalid_retention"),
        ("\uff12\uff10\uff12\uff17-01-01T00:00:00Z", "invalid_retention"),
        # Valid RFC 3339 whose UTC moment falls outside Python's datetime range.
        ("9999-12-31T23:59:59-01:00", "retention_out_of_bounds"),
        ("0001-01-01T00:00:00+01:00", "retention_out_of_bounds"),
    ],
)
def test_retention_out_of_bounds_or_malformed(text: str, code: str) -> None:
    created = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
    with _Raises(RejectedError, code):
        parse_retention(text, created_at=created, now=created)


def test_a_malformed_retention_is_echoed_redacted() -> None:
    created = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
    with _Raises(RejectedError, "invalid_retention") as raised:
        parse_retention(f"token={TOKEN}", created_at=created, now=created)
    assert TOKEN not in json.dumps(raised.error.to_json())
    assert "[REDACTED:github_token]" in raised.error.message


def test_retention_bounds_on_create_and_edit(store: Store) -> None:
    assert user_memory(store, retention="87600h").retention_until is not None  # 3650 days
    past = (datetime.now(UTC) - timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    for bad in ("3654d", past, "0s"):
        with _Raises(RejectedError, "retention_out_of_bounds"):
            user_memory(store, retention=bad)
    record = user_memory(store)
    created = _time(record.created_at)
    latest = created.replace(year=created.year + 10)
    at_limit = latest.strftime("%Y-%m-%dT%H:%M:%SZ")
    beyond = (latest + timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    with _Raises(RejectedError, "retention_out_of_bounds") as raised:
        edit_memory(store, record.memory_id, version=1, retention=beyond, actor="cli")
    assert at_limit in raised.error.message
    with _Raises(RejectedError, "retention_out_of_bounds"):
        edit_memory(store, record.memory_id, version=1, retention=record.created_at, actor="cli")
    with _Raises(RejectedError, "invalid_retention"):
        edit_memory(store, record.memory_id, version=1, retention="soon", actor="cli")
    record = edit_memory(store, record.memory_id, version=1, retention=at_limit, actor="cli")
    assert (record.retention_until, record.version) == (at_limit, 2)
    record = edit_memory(store, record.memory_id, version=2, retention="none", actor="cli")
    assert (record.retention_until, record.version) == (None, 3)


def test_expired_and_disabled_memories_are_listed_only_with_all(store: Store) -> None:
    active = user_memory(store, title="active")
    expiring = user_memory(store, title="expiring", retention="1h")
    disabled = user_memory(store, title="disabled")
    disabled = set_memory_status(
        store, disabled.memory_id, version=1, status="disabled", actor="cli"
    )
    later = datetime.now(UTC) + timedelta(hours=2)
    assert {r.title for r in list_memories(store).items} == {"active", "expiring"}
    assert [r.title for r in list_memories(store, now=later).items] == ["active"]
    everything = {r.title: r for r in list_memories(store, include_inactive=True, now=later).items}
    assert set(everything) == {"active", "expiring", "disabled"}
    assert everything["expiring"].expired is True
    assert everything["expiring"].to_json()["expired"] is True
    assert everything["disabled"].expired is False
    assert get_memory(store, expiring.memory_id, now=later).expired is True
    assert get_memory(store, expiring.memory_id).expired is False
    assert [r.title for r in export_memories(store, scope="user", now=later).items] == ["active"]
    assert active.status == "active"


def test_what_a_write_returns_is_what_a_read_finds(store: Store) -> None:
    """Create and edit build their answer from what they wrote (no read back): it must be
    exactly the stored record, for every kind of change."""
    record = user_memory(store, references=["docs/a.md"], retention="30d")
    assert get_memory(store, record.memory_id) == record
    project = create_memory(
        store, scope="project", workspace_id="demo", title="p", content="c", actor="lsp"
    )
    assert get_memory(store, project.memory_id) == project
    changes: list[dict[str, Any]] = [
        {"content": "new body"},
        {"title": "new title", "references": ["docs/b.md", "docs/c.md"]},
        {"references": []},
        {"retention": "none"},
        {"retention": "7d"},
        {"content": "password = 'hunter2hunter2'", "redact_sensitive": True},
    ]
    for change in changes:
        record = edit_memory(store, record.memory_id, version=record.version, actor="lsp", **change)
        assert get_memory(store, record.memory_id) == record, change
    record = set_memory_status(
        store, record.memory_id, version=record.version, status="disabled", actor="cli"
    )
    assert get_memory(store, record.memory_id) == record
    assert record.redacted is True
    assert record.version == len(changes) + 2


# -- versions ------------------------------------------------------------------------------------


def test_stale_version_is_a_conflict_stating_the_current_version(store: Store) -> None:
    record = user_memory(store)
    record = edit_memory(store, record.memory_id, version=1, content="second", actor="cli")
    for attempt in (
        lambda: edit_memory(store, record.memory_id, version=1, content="lost", actor="cli"),
        lambda: set_memory_status(
            store, record.memory_id, version=1, status="disabled", actor="cli"
        ),
        lambda: delete_memory(store, record.memory_id, version=1, actor="cli"),
        lambda: edit_memory(store, record.memory_id, version=3, content="future", actor="cli"),
    ):
        with _Raises(ConflictError, "conflict") as raised:
            attempt()
        assert raised.error.details["current_version"] == 2
        assert "is at version 2" in raised.error.message
        assert raised.error.hint == Hint("reread_memory", {"id": record.memory_id, "version": 2})
    assert get_memory(store, record.memory_id) == record


def test_missing_memory_is_not_found_never_a_conflict(store: Store) -> None:
    record = user_memory(store)
    delete_memory(store, record.memory_id, version=1, actor="cli")
    for attempt in (
        lambda: get_memory(store, record.memory_id),
        lambda: edit_memory(store, record.memory_id, version=1, content="x", actor="cli"),
        lambda: set_memory_status(store, record.memory_id, version=1, status="active", actor="cli"),
        lambda: delete_memory(store, record.memory_id, version=1, actor="cli"),
    ):
        with _Raises(NotFoundError, "not_found"):
            attempt()
    with _Raises(RejectedError, "invalid_memory_id"):
        get_memory(store, "mem_not-an-id")
    with _Raises(UsageError, "invalid_version"):
        edit_memory(store, record.memory_id, version=0, content="x", actor="cli")


@pytest.mark.sqlite_only
def test_each_change_adds_one_and_no_change_writes_nothing(db_path: Path, store: Store) -> None:
    record = user_memory(store, references=["a"])
    wal = Path(f"{db_path}-wal")
    wal_size = wal.stat().st_size  # the create's frames: a purge would truncate them
    watcher = raw(db_path)
    try:
        version = watcher.execute("PRAGMA data_version").fetchone()
        same = edit_memory(store, record.memory_id, version=1, title="Test convention", actor="cli")
        assert same == record
        same = edit_memory(store, record.memory_id, version=1, references=[" a "], actor="lsp")
        assert same == record
        same = set_memory_status(store, record.memory_id, version=1, status="active", actor="cli")
        assert same == record
        # Nothing committed, nothing purged (no checkpoint, no sync) by the edits above.
        assert watcher.execute("PRAGMA data_version").fetchone() == version
        assert wal.stat().st_size == wal_size > 0
    finally:
        watcher.close()
    with _Raises(UsageError, "nothing_to_change"):
        edit_memory(store, record.memory_id, version=1, actor="cli")
    steps: list[Callable[[int], MemoryRecord]] = [
        lambda v: edit_memory(store, record.memory_id, version=v, title="T2", actor="cli"),
        lambda v: set_memory_status(
            store, record.memory_id, version=v, status="disabled", actor="lsp"
        ),
        lambda v: set_memory_status(
            store, record.memory_id, version=v, status="active", actor="cli"
        ),
        lambda v: edit_memory(store, record.memory_id, version=v, retention="30d", actor="cli"),
    ]
    for version, step in enumerate(steps, start=1):
        assert step(version).version == version + 1
    with _Raises(UsageError, "invalid_status"):
        set_memory_status(store, record.memory_id, version=5, status="deleted", actor="cli")


_EDITOR = """
import json, sys, time
from pathlib import Path
from rutter_core.kernel.errors import ConflictError
from rutter_core.memory.service import edit_memory, get_memory
from rutter_core.store import open_store

url, memory_id, name, wanted, go, ready = sys.argv[1:7]
done, conflicts = [], 0
with open_store(url) as store:
    # Both read version 1 before either writes: their first edits race for certain.
    version = get_memory(store, memory_id).version
    Path(ready).touch()
    while not Path(go).exists():
        time.sleep(0.001)
    while len(done) < int(wanted):
        content = f"{name}-{len(done)}"
        try:
            record = edit_memory(store, memory_id, version=version, content=content, actor="cli")
        except ConflictError as error:
            conflicts += 1
            assert error.details["expected_version"] == version, error.details
            assert error.details["current_version"] > version, error.details
            version = error.details["current_version"]
            continue
        done.append([version, record.version, content])
        version = record.version
print(json.dumps({"done": done, "conflicts": conflicts}))
"""


def test_concurrent_edits_from_two_processes_lose_no_update(
    store_url: str, store: Store, tmp_path: Path
) -> None:
    record = user_memory(store)
    wanted = 40
    go = tmp_path / "go"
    ready = [tmp_path / "ready-a", tmp_path / "ready-b"]
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                _EDITOR,
                store_url,
                record.memory_id,
                name,
                str(wanted),
                str(go),
                str(flag),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name, flag in zip(("a", "b"), ready, strict=True)
    ]
    deadline = time.monotonic() + 60
    while not all(flag.exists() for flag in ready) and time.monotonic() < deadline:
        time.sleep(0.01)
    go.touch()
    outputs = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        outputs.append(json.loads(out))
    edits = [tuple(edit) for output in outputs for edit in output["done"]]
    assert len(edits) == 2 * wanted
    # Both started from version 1, so at least one edit was refused: the race really happened.
    assert sum(output["conflicts"] for output in outputs) >= 1
    # Every successful edit moved the version by exactly one, from the version it had read ...
    assert all(after == before + 1 for before, after, _ in edits)
    # ... and no two edits started from the same version: none overwrote another unseen.
    assert sorted(after for _, after, _ in edits) == list(range(2, 2 * wanted + 2))
    final = get_memory(store, record.memory_id)
    assert final.version == 2 * wanted + 1
    last = max(edits, key=lambda edit: edit[1])
    assert final.content == last[2]


# -- delete --------------------------------------------------------------------------------------


def _files(db_path: Path) -> dict[str, bytes]:
    found = {}
    for suffix in ("", "-wal", "-shm"):
        path = Path(f"{db_path}{suffix}")
        if path.exists():
            found[suffix or "db"] = path.read_bytes()
    return found


@pytest.mark.sqlite_only
def test_delete_is_physical_on_the_raw_database_and_wal_bytes(db_path: Path, store: Store) -> None:
    # Another connection holds the database open, so SQLite keeps the -wal and -shm files
    # (the last connection to close would checkpoint and remove them anyway).
    other = raw(db_path)
    try:
        other.execute("SELECT count(*) FROM memories").fetchall()
        secret = f"forget-me-{uuid.uuid4().hex}"
        old = f"older-text-{uuid.uuid4().hex}"
        record = user_memory(
            store,
            title=f"title {secret}",
            content=f"{old}\n" + f"body {secret} " * 250,  # overflow pages too
            references=[f"docs/{secret}.md"],
        )
        record = edit_memory(
            store, record.memory_id, version=1, content=f"body {secret} v2", actor="cli"
        )
        for number in range(5):  # neighbours sharing its pages survive
            user_memory(store, title=f"keep {number}", content="keep " * 200)
        files = _files(db_path)
        assert set(files) == {"db", "-wal", "-shm"}
        assert any(secret.encode() in data for data in files.values())
        # The text replaced by the edit is already gone.
        assert not any(old.encode() in data for data in files.values())

        deleted = delete_memory(store, record.memory_id, version=2, actor="cli")
        assert deleted.to_json() == {
            "id": record.memory_id,
            "version": 2,
            "deleted": True,
            "recoverable": False,
            "purged": True,
        }
        files = _files(db_path)
        assert {"db", "-wal"} <= set(files)
        for name, data in files.items():
            assert secret.encode() not in data, f"deleted text still in {name}"
            assert secret.encode("utf-16-le") not in data
        assert len(files["-wal"]) == 0
    finally:
        other.close()
    with _Raises(NotFoundError, "not_found"):
        get_memory(store, record.memory_id)
    kept = list_memories(store, include_inactive=True).items
    assert sorted(r.title for r in kept) == [f"keep {n}" for n in range(5)]
    assert secret not in json.dumps(
        export_memories(store, scope="user", include_inactive=True).to_json()
    )


# -- export and lists ----------------------------------------------------------------------------


def test_export_contents(store: Store) -> None:
    user = user_memory(store, title="user one")
    disabled = user_memory(store, title="user off")
    disabled = set_memory_status(
        store, disabled.memory_id, version=1, status="disabled", actor="cli"
    )
    project = create_memory(
        store, scope="project", workspace_id="demo", title="proj", content="c", actor="lsp"
    )
    body = export_memories(store, scope="user").to_json()
    assert set(body) == {
        "protocol_version", "exported_at", "scope", "scope_id", "items", "capability_grant",
    }  # fmt: skip
    assert body["protocol_version"] == "context_memory_export.v1"
    assert body["capability_grant"] is False
    assert (body["scope"], body["scope_id"]) == ("user", "local-user")
    assert body["exported_at"].endswith("Z")
    assert body["items"] == [user.to_json()]
    everything = export_memories(store, scope="user", include_inactive=True).to_json()
    assert [item["id"] for item in everything["items"]] == [
        r.memory_id for r in list_memories(store, scope="user", include_inactive=True).items
    ]
    assert {item["id"] for item in everything["items"]} == {user.memory_id, disabled.memory_id}
    assert all(set(item) == RECORD_FIELDS for item in everything["items"])
    project_body = export_memories(store, scope="project", workspace_id="demo").to_json()
    assert (project_body["scope"], project_body["scope_id"]) == ("project", "demo")
    assert project_body["items"] == [project.to_json()]
    with _Raises(NotFoundError, "not_registered"):
        export_memories(store, scope="project", workspace_id="ghost")


@pytest.mark.sqlite_only
def test_list_order_scopes_and_limit_bounds(db_path: Path, store: Store) -> None:
    records = [user_memory(store, title=f"m{i}") for i in range(6)]
    project = create_memory(
        store, scope="project", workspace_id="demo", title="p", content="c", actor="cli"
    )
    # Spread updated_at (operator rows through raw SQL are allowed; only actors are checked).
    conn = raw(db_path)
    try:
        seconds = [5, 1, 9, 9, 9, 2]
        stamps = [f"2026-01-01T00:00:0{second}Z" for second in seconds]
        for record, stamp in zip(records, stamps, strict=True):
            conn.execute(
                "UPDATE memories SET updated_at = ? WHERE memory_id = ?", (stamp, record.memory_id)
            )
        conn.execute(
            "UPDATE memories SET updated_at = '2026-01-01T00:00:07Z' WHERE memory_id = ?",
            (project.memory_id,),
        )
    finally:
        conn.close()
    expected = sorted(
        [(stamp, r.memory_id) for r, stamp in zip(records, stamps, strict=True)]
        + [("2026-01-01T00:00:07Z", project.memory_id)],
        reverse=True,
    )
    everything = list_memories(store)
    assert [r.memory_id for r in everything.items] == [memory_id for _, memory_id in expected]
    assert everything.has_more is False
    user_only = list_memories(store, scope="user")
    assert project.memory_id not in [r.memory_id for r in user_only.items]
    assert [
        r.memory_id for r in list_memories(store, scope="project", workspace_id="demo").items
    ] == [project.memory_id]
    both = list_memories(store, workspace_id="demo")
    assert len(both.items) == 7
    first = list_memories(store, limit=3)
    assert [r.memory_id for r in first.items] == [memory_id for _, memory_id in expected[:3]]
    assert first.has_more is True
    assert list_memories(store, limit=7).has_more is False
    assert len(list_memories(store, limit=MAX_LIST_LIMIT).items) == 7
    for bad in (0, -1, MAX_LIST_LIMIT + 1):
        with _Raises(UsageError, "invalid_limit"):
            list_memories(store, limit=bad)


def test_the_app_layer_checks_types_and_the_surface_names_the_actor(store: Store) -> None:
    memory = Rutter(store).memory
    created = memory.create(
        CreateMemoryParams(
            scope="project", workspace_id="demo", title="t", content="c", references=("b", "a")
        ),
        actor="lsp",
    )
    assert (created.created_by, created.references) == ("lsp", ("a", "b"))
    assert created.source_kind == "operator_explicit"
    # A client names neither the actor nor anything else the model does not know.
    user = {"scope": "user", "title": "t", "content": "c"}
    for planted in ({"actor": "model"}, {"created_by": "tool"}, {"retentionUntil": "1h"}):
        with pytest.raises(ValidationError):
            CreateMemoryParams.model_validate({**user, **planted})
    for version in ("2", True, 2.5):
        with pytest.raises(ValidationError):
            EditMemoryParams.model_validate({"id": created.memory_id, "version": version})
    with pytest.raises(ValidationError):
        CreateMemoryParams.model_validate({**user, "references": "docs/a.md"})
    # A JSON null is "not given"; values are the service's to refuse, with its own codes.
    edit = EditMemoryParams.model_validate(
        {"id": created.memory_id, "version": 1, "title": None, "content": "d", "retention": None}
    )
    assert (edit.title, edit.retention, edit.redact_sensitive) == (None, None, False)
    assert memory.edit(edit, actor="cli").version == 2
    with _Raises(UsageError, "invalid_limit"):
        memory.list(ListMemoriesParams(limit=0))
    # What a delete would remove is checked before anyone is asked.
    with _Raises(ConflictError, "conflict"):
        memory.delete_preview(DeleteMemoryParams(id=created.memory_id, version=1))
    at_two = DeleteMemoryParams(id=created.memory_id, version=2)
    assert memory.delete_preview(at_two).content == "d"
    assert memory.delete(at_two, actor="lsp").to_json()["deleted"] is True
    imported = memory.create(
        CreateMemoryParams(**user), actor="cli", imported_from="notes/conventions.md"
    )
    assert imported.source_kind == "operator_import_explicit"
    with _Raises(RejectedError, "sensitive_source"):
        memory.create(CreateMemoryParams(**user), actor="cli", imported_from="~/.ssh/notes")


def test_removing_a_workspace_with_project_memories_is_a_conflict(store: Store) -> None:
    records = [
        create_memory(
            store, scope="project", workspace_id="demo", title=f"p{i}", content="c", actor="cli"
        )
        for i in range(2)
    ]
    records[1] = set_memory_status(
        store, records[1].memory_id, version=1, status="disabled", actor="cli"
    )
    remove = RemoveWorkspaceParams(workspace_id="demo")
    with _Raises(ConflictError, "conflict") as raised:
        Rutter(store).workspaces.remove(remove)
    assert "still has 2 project memories" in raised.error.message
    assert raised.error.details == {
        "workspace_id": "demo", "runs": 0, "sessions": 0, "project_memories": 2, "threads": 0
    }  # fmt: skip
    for record in records:
        delete_memory(store, record.memory_id, version=record.version, actor="cli")
    assert Rutter(store).workspaces.remove(remove).workspace_id == "demo"
