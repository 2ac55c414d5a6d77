"""`rutter session ...` end to end, as real subprocesses on a real store and a real git
repository: messages, notes, checkpoints and reading a node, their JSON shapes, their exit codes,
and a tampered node refused."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write_tree
from tests.testing import Cli, acting_person

GITHUB = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"
MESSAGE_KEYS = {"message_id", "thread_id", "seq", "role", "source", "source_person",
                "external_id", "text", "redacted", "created_at", "injected"}  # fmt: skip
NOTE_KEYS = {"note_id", "thread_id", "kind", "text", "redacted", "references", "status",
             "superseded_by", "version", "created_by", "created_by_person", "updated_by",
             "updated_by_person", "created_at", "updated_at"}  # fmt: skip


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path / "home", tmp_path)


@pytest.fixture
def run(cli: Cli, workspace_root: Path) -> dict[str, Any]:
    write_tree(workspace_root, {"AGENTS.md": "rules\n"})
    for args in (["init", "-q", "-b", "trunk"], ["add", "."], ["commit", "-q", "-m", "one"]):
        subprocess.run(
            ["git", "-C", str(workspace_root), "-c", "user.name=t", "-c", "user.email=t@e.x",
             *args],
            check=True, capture_output=True, timeout=60,
        )  # fmt: skip
    cli.json("workspace", "register", "demo", str(workspace_root))
    created: dict[str, Any] = cli.json("run", "create", "--workspace", "demo", "--goal", "g")
    return created


def test_messages_notes_and_a_checkpoint(cli: Cli, run: dict[str, Any]) -> None:
    thread = run["thread_id"]
    added = cli.json("session", "message", "add", thread, "--role", "user", "--text",
                     f"push with {GITHUB}")  # fmt: skip
    assert set(added) == MESSAGE_KEYS | {"created"}
    assert added["message_id"].startswith("msg_")
    assert (added["role"], added["source"], added["seq"], added["created"]) == (
        "user", "cli", 1, True,
    )  # fmt: skip
    assert added["text"] == "push with [REDACTED:github_token]"
    assert added["redacted"] is True
    imported = ["session", "message", "add", thread, "--role", "assistant", "--text", "done",
                "--external-id", "turn-7"]  # fmt: skip
    first = cli.json(*imported)
    again = cli.json(*imported)
    assert (first["created"], again["created"]) == (True, False)
    assert again["message_id"] == first["message_id"]
    listed = cli.json("session", "messages", thread)
    assert [m["text"] for m in listed["messages"]] == [added["text"], "done"]
    assert set(listed["messages"][0]) == MESSAGE_KEYS
    assert listed["has_more"] is False
    last = cli.json("session", "messages", thread, "--limit", "1")
    assert ([m["seq"] for m in last["messages"]], last["has_more"]) == ([2], True)
    earlier = cli.json("session", "messages", thread, "--limit", "1", "--before", "2")
    assert [m["seq"] for m in earlier["messages"]] == [1]

    note = cli.json("session", "note", "add", thread, "--kind", "summary", "--text", "reviewed")
    assert set(note) == NOTE_KEYS
    assert note["created_by_person"] == note["updated_by_person"] == acting_person(cli.store_url)
    assert (note["version"], note["status"], note["created_by"]) == (1, "active", "cli")
    edited = cli.json("session", "note", "edit", note["note_id"], "--version", "1", "--text",
                      "reviewed the parser")  # fmt: skip
    assert (edited["version"], edited["text"]) == (2, "reviewed the parser")
    stale = cli("session", "note", "edit", note["note_id"], "--version", "1", "--text", "x")
    assert stale.returncode == 4
    assert f"rutter session notes {thread} --all`) and retry with --version 2" in stale.stderr
    decision = cli.json("session", "note", "add", thread, "--kind", "decision", "--text", "tabs")
    replaced = cli.json("session", "note", "supersede", decision["note_id"], "--version", "1",
                        "--text", "spaces")  # fmt: skip
    assert replaced["note"]["status"] == "superseded"
    assert replaced["note"]["superseded_by"] == replaced["replacement"]["note_id"]
    active = cli.json("session", "notes", thread)["notes"]
    assert [n["text"] for n in active] == ["reviewed the parser", "spaces"]
    assert len(cli.json("session", "notes", thread, "--all")["notes"]) == 3

    node = cli.json("session", "checkpoint", run["run_id"], "--title", "Parser reviewed",
                    "--summary", "Ready for tests")  # fmt: skip
    assert (node["kind"], node["parent_node_id"], node["created_by"]) == (
        "checkpoint", run["root_node_id"], "cli",
    )  # fmt: skip
    snapshot = node["snapshot"]
    assert snapshot["protocol_version"] == "continuity_snapshot.v1"
    assert len(snapshot["fingerprint"]) == 64
    assert (snapshot["title"], snapshot["summary"]) == ("Parser reviewed", "Ready for tests")
    assert snapshot["compaction_summary"]["text"] == "reviewed the parser"
    assert [m["source"] for m in snapshot["messages"]["items"]] == ["cli", "cli"]
    assert (snapshot["instructions"]["revision"], snapshot["instructions"]["fingerprint"]) == (
        1, run["fingerprint"],
    )  # fmt: skip
    assert snapshot["git"]["branch"] == "trunk"
    assert len(snapshot["git"]["head"]) in (40, 64)
    assert cli.json("session", "show", node["node_id"]) == node
    root = cli.json("session", "show", run["root_node_id"])
    assert (root["kind"], root["snapshot"]) == ("root", None)


def test_for_people(cli: Cli, run: dict[str, Any]) -> None:
    thread = run["thread_id"]
    said = cli("session", "message", "add", thread, "--role", "user", "--text", "[bold]hi[/bold]")
    assert said.returncode == 0
    assert "Added message msg_" in said.stdout
    shown = cli("session", "messages", thread)
    assert "#1 user · cli" in shown.stdout
    assert "[bold]hi[/bold]" in shown.stdout  # text, never markup
    cli.json("session", "note", "add", thread, "--kind", "fact", "--text", "a fact")
    assert "a fact" in cli("session", "notes", thread).stdout
    taken = cli("session", "checkpoint", run["run_id"], "--title", "t")
    assert taken.returncode == 0
    assert "trunk at " in taken.stdout
    assert "(as pinned)" in taken.stdout


def test_errors_and_their_exit_codes(cli: Cli, run: dict[str, Any]) -> None:
    thread = run["thread_id"]
    unknown = "thr_01M8Y3HJTQYDNPR8CJ56SS1T0B"
    cases: list[tuple[list[str], int, str]] = [
        (["session", "message", "add", unknown, "--role", "user", "--text", "x"], 5,
         "thread_not_found"),
        (["session", "messages", "nonsense"], 5, "thread_not_found"),
        (["session", "message", "add", thread, "--role", "robot", "--text", "x"], 3,
         "invalid_role"),
        (["session", "message", "add", thread, "--role", "user", "--text", "x" * 65537], 3,
         "text_too_large"),
        (["session", "message", "add", thread, "--role", "user", "--text", "bell\a"], 3,
         "invalid_text"),
        (["session", "note", "add", thread, "--kind", "todo", "--text", "x"], 3, "invalid_kind"),
        (["session", "note", "edit", "note_01M8Y3HJTQYDNPR8CJ56SS1T0B", "--version", "1",
          "--text", "x"], 5, "note_not_found"),
        (["session", "messages", thread, "--limit", "0"], 2, "invalid_limit"),
        (["session", "checkpoint", "run_01M8Y3HJTQYDNPR8CJ56SS1T0B", "--title", "t"], 5,
         "run_not_found"),
        (["session", "checkpoint", run["run_id"], "--title", "a\nb"], 3, "invalid_text"),
        (["session", "show", "node_01M8Y3HJTQYDNPR8CJ56SS1T0B"], 5, "not_found"),
        # The source is the surface's own: there is no option for it.
        (["session", "message", "add", thread, "--role", "user", "--text", "x", "--source",
          "mcp"], 2, "usage"),
    ]  # fmt: skip
    for args, code, error in cases:
        body = cli.json(*args, code=code)
        assert body["error"]["code"] == error, (args, body)
        assert "x" * 100 not in json.dumps(body)
    assert cli.json("session", "messages", thread)["messages"] == []


def test_a_tampered_node_is_refused_and_never_printed(cli: Cli, run: dict[str, Any]) -> None:
    cli.json("session", "message", "add", run["thread_id"], "--role", "user", "--text", "kept")
    node = cli.json("session", "checkpoint", run["run_id"], "--title", "t")
    conn = sqlite3.connect(cli.home / "rutter.db")
    try:
        conn.execute("DROP TRIGGER continuity_snapshots_append_only_no_update")
        conn.execute(
            "UPDATE continuity_snapshots SET snapshot_json = "
            'replace(snapshot_json, \'"text":"kept"\', \'"text":"planted"\')'
        )
        conn.commit()
    finally:
        conn.close()
    body = cli.json("session", "show", node["node_id"], code=3)
    assert body["error"]["code"] == "snapshot_tampered"
    assert body["error"]["details"]["node_id"] == node["node_id"]
    assert "planted" not in json.dumps(body)
    human = cli("session", "show", node["node_id"])
    assert human.returncode == 3
    assert (human.stdout, "error[snapshot_tampered]" in human.stderr) == ("", True)
