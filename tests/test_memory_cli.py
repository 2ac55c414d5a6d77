"""`rutter context memory ...` end to end: a real subprocess, a temporary RUTTER_HOME.

JSON shapes and exit codes (docs/reference/errors.md), human tables, project scope from the current
directory, `--content-file` refusals, the workspace-removal guard, and physical deletion seen
on the raw database files while another connection keeps the WAL alive.
"""

from __future__ import annotations

import os
import sqlite3
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.testing import Cli, sqlite_file

TOKEN = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"


# The memory commands on both engines, but the check of the SQLite files (`sqlite_only`).
pytestmark = pytest.mark.both_dialects


@pytest.fixture
def cli(tmp_path: Path, store_url: str) -> Cli:
    return Cli(tmp_path / "home", tmp_path, database_url=store_url)


@pytest.fixture
def demo(cli: Cli, tmp_path: Path) -> Path:
    root = tmp_path / "demo"
    (root / "src").mkdir(parents=True)
    cli.json("workspace", "register", "demo", str(root))
    return root.resolve()


def error_of(cli: Cli, code: int, *args: str, cwd: Path | None = None) -> dict[str, Any]:
    body = cli.json(*args, code=code, cwd=cwd)
    assert set(body) == {"error"}
    error: dict[str, Any] = body["error"]
    return error


def test_create_list_edit_disable_enable_export_delete(cli: Cli, demo: Path) -> None:
    created = cli.json(
        "context", "memory", "create", "--scope", "project", "--workspace", "demo",
        "--title", "Test convention", "--content", "Run unit tests before packaging",
        "--retention", "720h",
    )  # fmt: skip
    memory_id = created["id"]
    assert created["protocol_version"] == "context_memory.v1"
    assert (created["scope"], created["scope_id"], created["version"]) == ("project", "demo", 1)
    assert (created["created_by"], created["updated_by"]) == ("cli", "cli")
    assert created["retention_until"] is not None

    listed = cli.json("context", "memory", "list", "--scope", "project", "--workspace", "demo",
                      "--all")  # fmt: skip
    assert listed == {"items": [created], "has_more": False}
    assert cli.json("context", "memory", "show", memory_id) == created

    edited = cli.json(
        "context", "memory", "edit", memory_id, "--version", "1",
        "--content", "Run unit and API tests", "--reference", "docs/testing.md",
    )  # fmt: skip
    assert (edited["version"], edited["content"]) == (2, "Run unit and API tests")
    assert edited["references"] == ["docs/testing.md"]
    assert edited["title"] == "Test convention"
    disabled = cli.json("context", "memory", "disable", memory_id, "--version", "2")
    assert (disabled["status"], disabled["version"]) == ("disabled", 3)
    assert cli.json("context", "memory", "list", "--scope", "project", "--workspace", "demo") == {
        "items": [],
        "has_more": False,
    }
    enabled = cli.json("context", "memory", "enable", memory_id, "--version", "3")
    assert (enabled["status"], enabled["version"]) == ("active", 4)

    exported = cli.json("context", "memory", "export", "--scope", "project", "--workspace",
                        "demo", "--all")  # fmt: skip
    assert exported["protocol_version"] == "context_memory_export.v1"
    assert (exported["scope"], exported["scope_id"]) == ("project", "demo")
    assert exported["capability_grant"] is False
    assert exported["items"] == [enabled]

    deleted = cli.json("context", "memory", "delete", memory_id, "--version", "4")
    assert deleted == {
        "id": memory_id,
        "version": 4,
        "deleted": True,
        "recoverable": False,
        "purged": True,
    }
    assert error_of(cli, 5, "context", "memory", "show", memory_id)["code"] == "not_found"
    assert cli.json("context", "memory", "list", "--all") == {"items": [], "has_more": False}
    export_after = cli.json("context", "memory", "export", "--scope", "project", "--all", cwd=demo)
    assert export_after["items"] == []


def test_human_output_is_tables(cli: Cli, demo: Path) -> None:
    result = cli("context", "memory", "create", "--scope", "user", "--title", "Prefer [b]rich[/b]",
                 "--content", "Two\nlines", "--reference", "docs/a.md")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Created memory mem_")
    # Piped: plain columns, no boxes (tests/test_cli_output.py has the terminal's tables).
    assert "\ntitle " in result.stdout
    assert not set("│┃━") & set(result.stdout)
    assert "Prefer [b]rich[/b]" in result.stdout  # escaped, not markup
    assert "docs/a.md" in result.stdout
    memory_id = result.stdout.split()[2]
    listing = cli("context", "memory", "list")
    assert listing.returncode == 0, listing.stderr
    header = listing.stdout.splitlines()[0]
    assert header.split() == ["id", "scope", "status", "v", "updated", "title"]
    assert memory_id in listing.stdout
    assert "user" in listing.stdout
    assert not listing.stdout.lstrip().startswith("{")
    gone = cli("context", "memory", "delete", memory_id, "--version", "1")
    assert gone.returncode == 0, gone.stderr
    assert "permanently" in gone.stdout
    assert "No memories" in cli("context", "memory", "list").stdout


def test_project_scope_defaults_to_the_workspace_of_the_current_directory(
    cli: Cli, demo: Path, tmp_path: Path
) -> None:
    created = cli.json("context", "memory", "create", "--scope", "project", "--title", "t",
                       "--content", "c", cwd=demo / "src")  # fmt: skip
    assert created["scope_id"] == "demo"
    user = cli.json("context", "memory", "create", "--scope", "user", "--title", "u",
                    "--content", "c")  # fmt: skip
    mixed = cli.json("context", "memory", "list", "--workspace", "demo")
    assert {item["id"] for item in mixed["items"]} == {created["id"], user["id"]}
    outside = error_of(cli, 2, "context", "memory", "list", "--scope", "project", cwd=tmp_path)
    assert outside["code"] == "workspace_required"
    not_registered = error_of(cli, 5, "context", "memory", "create", "--scope", "project",
                              "--workspace", "ghost", "--title", "t", "--content", "c")  # fmt: skip
    assert not_registered["code"] == "not_registered"
    assert "rutter workspace register ghost ROOT" in not_registered["message"]


def test_exit_codes_of_refusals(cli: Cli, demo: Path) -> None:
    created = cli.json("context", "memory", "create", "--scope", "user", "--title", "t",
                       "--content", "c")  # fmt: skip
    memory_id = created["id"]
    cli.json("context", "memory", "edit", memory_id, "--version", "1", "--title", "t2")

    stale = cli("context", "memory", "edit", memory_id, "--version", "1", "--content", "lost",
                "--json")  # fmt: skip
    assert stale.returncode == 4
    assert "is at version 2" in stale.stderr
    assert f"`rutter context memory show {memory_id}`" in stale.stderr
    assert "retry with --version 2" in stale.stderr
    assert '"current_version": 2' in stale.stdout
    missing = error_of(cli, 5, "context", "memory", "disable", "mem_01J00000000000000000000000",
                       "--version", "1")  # fmt: skip
    assert missing["code"] == "not_found"

    secret = cli("context", "memory", "create", "--scope", "user", "--title", "t", "--content",
                 f"token {TOKEN}", "--json")  # fmt: skip
    assert secret.returncode == 3
    assert "github_token x1 in the content" in secret.stderr
    assert "--redact-sensitive" in secret.stderr
    assert TOKEN not in secret.stdout + secret.stderr
    redacted = cli.json("context", "memory", "create", "--scope", "user", "--title", "t",
                        "--content", f"token {TOKEN}", "--redact-sensitive")  # fmt: skip
    assert (redacted["content"], redacted["redacted"]) == ("token [REDACTED:github_token]", True)
    create = ["context", "memory", "create", "--scope", "user", "--title", "t", "--content", "c"]
    for extra in ([], ["--redact-sensitive"]):
        sensitive = error_of(cli, 3, *create, "--reference", "config/.env.local", *extra)
        assert sensitive["code"] == "sensitive_source"
    retention = error_of(cli, 3, "context", "memory", "edit", memory_id, "--version", "2",
                         "--retention", "3654d")  # fmt: skip
    assert retention["code"] == "retention_out_of_bounds"

    usage = {
        "invalid_limit": ["list", "--limit", "501"],
        "content_required": ["create", "--scope", "user", "--title", "t"],
        "workspace_not_allowed": ["create", "--scope", "user", "--workspace", "demo", "--title",
                                  "t", "--content", "c"],
        "invalid_scope": ["create", "--scope", "team", "--title", "t", "--content", "c"],
        "nothing_to_change": ["edit", memory_id, "--version", "2"],
        # The actor is the surface's own: there is no option to claim another.
        "usage": ["create", "--scope", "user", "--title", "t", "--content", "c", "--actor", "x"],
    }  # fmt: skip
    for code, args in usage.items():
        assert error_of(cli, 2, "context", "memory", *args)["code"] == code
    both = error_of(cli, 2, "context", "memory", "create", "--scope", "user", "--title", "t",
                    "--content", "c", "--content-file", "x.md")  # fmt: skip
    assert both["code"] == "content_required"
    shown = cli.json("context", "memory", "show", memory_id)
    assert (shown["version"], shown["title"], shown["created_by"]) == (2, "t2", "cli")


def test_content_file(cli: Cli, demo: Path, tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_bytes(b"\xef\xbb\xbfFirst line\r\nsecond line\r\n")
    imported = cli.json("context", "memory", "create", "--scope", "user", "--title", "Imported",
                        "--content-file", "notes.md")  # fmt: skip
    assert imported["content"] == "First line\nsecond line\n"
    assert imported["source_kind"] == "operator_import_explicit"

    (tmp_path / "config").mkdir()
    (tmp_path / "config" / ".env.local").write_text("NAME=value\n")
    (tmp_path / "link.md").symlink_to(notes)
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "big.md").write_bytes(b"x" * (16 * 1024 + 1))
    (tmp_path / "latin1.md").write_bytes(b"caf\xe9\n")
    (tmp_path / "server.pem").write_text("not really a key\n")
    expected = {
        "config/.env.local": (3, "sensitive_source"),
        "server.pem": (3, "sensitive_source"),
        "-": (3, "sensitive_source"),
        "/dev/stdin": (3, "sensitive_source"),
        "link.md": (3, "symlink"),
        "folder": (3, "not_regular_file"),
        "pipe": (3, "not_regular_file"),
        "big.md": (3, "too_large"),
        "latin1.md": (3, "invalid_utf8"),
        "absent.md": (5, "not_found"),
    }
    for path, (code, error_code) in expected.items():
        error = error_of(cli, code, "context", "memory", "create", "--scope", "user", "--title",
                         "t", "--content-file", path)  # fmt: skip
        assert error["code"] == error_code, (path, error)
    assert len(cli.json("context", "memory", "list", "--all")["items"]) == 1


def test_workspace_remove_is_refused_while_project_memories_exist(cli: Cli, demo: Path) -> None:
    created = cli.json("context", "memory", "create", "--scope", "project", "--workspace", "demo",
                       "--title", "t", "--content", "c")  # fmt: skip
    refused = error_of(cli, 4, "workspace", "remove", "demo")
    assert refused["code"] == "conflict"
    assert "still has 1 project memory" in refused["message"]
    assert refused["details"] == {
        "workspace_id": "demo", "runs": 0, "sessions": 0, "project_memories": 1, "threads": 0
    }  # fmt: skip
    cli.json("context", "memory", "delete", created["id"], "--version", "1")
    assert cli.json("workspace", "remove", "demo")["removed"] is True


@pytest.mark.sqlite_only
def test_deleted_text_is_in_no_database_file(cli: Cli, demo: Path) -> None:
    db = sqlite_file(cli.store_url)
    marker = f"private-note-{uuid.uuid4().hex}"
    created = cli.json("context", "memory", "create", "--scope", "user", "--title", marker,
                       "--content", f"{marker} " * 100)  # fmt: skip
    # A connection held open here stands for a running language server: the WAL stays.
    other = sqlite3.connect(db, isolation_level=None)
    try:
        other.execute("SELECT count(*) FROM memories").fetchall()
        cli.json("context", "memory", "edit", created["id"], "--version", "1", "--content",
                 f"edited {marker}")  # fmt: skip
        assert cli.json("context", "memory", "delete", created["id"], "--version", "2")["purged"]
        files = {suffix: Path(f"{db}{suffix}") for suffix in ("", "-wal", "-shm")}
        assert files["-wal"].exists()
        for suffix, path in files.items():
            if path.exists():
                assert marker.encode() not in path.read_bytes(), f"found in {db.name}{suffix}"
    finally:
        other.close()
