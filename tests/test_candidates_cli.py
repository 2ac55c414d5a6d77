"""`rutter context memory candidates` and `... candidate show|confirm|ignore` end to end, with
`session note add --reference` and `session checkpoint --delivery`: real subprocesses on a real
store and git repository, their JSON shapes, exit codes and what people read."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write_tree
from tests.testing import Cli

GITHUB = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path / "home", tmp_path)


@pytest.fixture
def run(cli: Cli, workspace_root: Path) -> dict[str, Any]:
    write_tree(workspace_root, {"AGENTS.md": "rules\n", "src/parser.py": "x = 1\n"})
    for args in (["init", "-q", "-b", "trunk"], ["add", "."], ["commit", "-q", "-m", "one"]):
        subprocess.run(
            ["git", "-C", str(workspace_root), "-c", "user.name=t", "-c", "user.email=t@e.x",
             *args],
            check=True, capture_output=True, timeout=60,
        )  # fmt: skip
    cli.json("workspace", "register", "demo", str(workspace_root))
    created: dict[str, Any] = cli.json("run", "create", "--workspace", "demo", "--goal", "g")
    return created


def _note(cli: Cli, thread: str, text: str, *refs: str, kind: str = "decision") -> Any:
    args = ["session", "note", "add", thread, "--kind", kind, "--text", text]
    for ref in refs:
        args += ["--reference", ref]
    return cli.json(*args)


def test_a_delivery_checkpoint_offers_the_note_and_confirm_saves_it(
    cli: Cli, run: dict[str, Any], workspace_root: Path
) -> None:
    note = _note(cli, run["thread_id"], "Use the streaming parser", "src/parser.py", "docs/x.md")
    assert note["references"] == ["docs/x.md", "src/parser.py"]
    empty = cli.json("context", "memory", "candidates", "--workspace", "demo")
    assert empty == {"workspace_id": "demo", "items": [], "scanned": 1, "truncated": False}
    node = cli.json("session", "checkpoint", run["run_id"], "--title", "shipped", "--delivery")
    assert node["kind"] == "checkpoint"

    # Without --workspace: the registered workspace around the current directory.
    listed = cli.json("context", "memory", "candidates", cwd=workspace_root / "src")
    (item,) = listed["items"]
    assert item["candidate_id"].startswith("cand_")
    assert item["status"] == "pending"
    assert item["completion"]["kind"] == "delivery_checkpoint"
    assert item["source"]["note_id"] == note["note_id"]
    assert cli.json("context", "memory", "candidate", "show", item["candidate_id"]) == item

    people = cli("context", "memory", "candidates", "--workspace", "demo")
    assert people.returncode == 0
    assert item["candidate_id"] in people.stdout
    shown = cli("context", "memory", "candidate", "show", item["candidate_id"])
    assert "Use the streaming parser" in shown.stdout
    assert "check the conclusion and where it applies" in shown.stdout.replace("\n", " ")
    assert f"--fingerprint {item['fingerprint']}" in shown.stdout

    confirm = [
        "context", "memory", "candidate", "confirm", item["candidate_id"], "--version", "1",
        "--fingerprint", item["fingerprint"], "--source-version", "1",
    ]  # fmt: skip
    confirmed = cli.json(*confirm)
    assert set(confirmed) == {"candidate", "memory"}
    candidate, memory = confirmed["candidate"], confirmed["memory"]
    assert (candidate["status"], candidate["title"], candidate["content"]) == (
        "confirmed", None, None,
    )  # fmt: skip
    assert candidate["references"] == []
    assert (memory["scope"], memory["scope_id"], memory["source_kind"]) == (
        "project", "demo", "operator_explicit",
    )  # fmt: skip
    assert memory["content"] == "Use the streaming parser"
    assert memory["references"] == ["docs/x.md", "src/parser.py"]
    assert cli.json(*confirm) == confirmed  # answered the same, nothing written twice
    memories = cli.json("context", "memory", "list", "--scope", "project", "--workspace", "demo")
    assert [m["id"] for m in memories["items"]] == [memory["id"]]
    assert cli.json("context", "memory", "candidates", "--workspace", "demo")["items"] == []


def test_a_completed_run_ignore_and_the_exit_codes(cli: Cli, run: dict[str, Any]) -> None:
    thread = run["thread_id"]
    note = _note(cli, thread, "Summary of the parser work", "src/parser.py", kind="summary")
    secret = _note(cli, thread, f"Deploy with {GITHUB}", "deploy.md")
    cli.json("run", "status", run["run_id"], "running")
    cli.json("run", "status", run["run_id"], "completed")
    listed = cli.json("context", "memory", "candidates", "--workspace", "demo")
    by_note = {item["source"]["note_id"]: item for item in listed["items"]}
    item, risky = by_note[note["note_id"]], by_note[secret["note_id"]]
    assert item["completion"]["kind"] == "run_completed"

    stale = cli.json(
        "context", "memory", "candidate", "confirm", item["candidate_id"], "--version", "2",
        "--fingerprint", item["fingerprint"], "--source-version", "1", code=4,
    )  # fmt: skip
    assert stale["error"]["code"] == "conflict"
    changed = cli.json(
        "context", "memory", "candidate", "confirm", item["candidate_id"], "--version", "1",
        "--fingerprint", item["fingerprint"], "--source-version", "2", code=4,
    )  # fmt: skip
    assert changed["error"]["code"] == "candidate_stale"

    refused = cli(
        "context", "memory", "candidate", "confirm", risky["candidate_id"], "--version", "1",
        "--fingerprint", risky["fingerprint"], "--source-version", "1",
    )  # fmt: skip
    assert refused.returncode == 3
    assert "--redact-sensitive" in refused.stderr
    saved = cli.json(
        "context", "memory", "candidate", "confirm", risky["candidate_id"], "--version", "1",
        "--fingerprint", risky["fingerprint"], "--source-version", "1", "--redact-sensitive",
    )  # fmt: skip
    assert saved["memory"]["redacted"] is True

    ignore = ["context", "memory", "candidate", "ignore", item["candidate_id"], "--version", "1"]
    ignored = cli.json(*ignore)
    assert (ignored["status"], ignored["content"], ignored["version"]) == ("ignored", None, 2)
    assert cli.json(*ignore) == ignored
    people = cli(*ignore)
    assert f"Ignored candidate {item['candidate_id']}" in people.stdout
    missing = cli.json("context", "memory", "candidate", "show", "cand_nope", code=2)
    assert missing["error"]["code"] == "invalid_candidate_id"
