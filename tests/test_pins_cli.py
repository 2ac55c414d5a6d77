"""`rutter context pin ...` end to end, as real subprocesses on a real store: add, list (by
thread and by run), edit, remove with versions; proposals and the three answers; the JSON
documents, the exit codes and the text for people."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rutter_core.app.facade import Rutter
from rutter_core.app.pins import ProposePinParams
from rutter_core.store import open_store
from tests.conftest import write_tree
from tests.testing import Cli, acting_person

GITHUB = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"
PIN_KEYS = {"pin_id", "thread_id", "text", "redacted", "proposal_id", "version", "created_by",
            "created_by_person", "updated_by", "updated_by_person", "created_at",
            "updated_at"}  # fmt: skip


# The pins commands on both engines (the store is what they change).
pytestmark = pytest.mark.both_dialects


@pytest.fixture
def cli(tmp_path: Path, store_url: str) -> Cli:
    return Cli(tmp_path / "home", tmp_path, database_url=store_url)


@pytest.fixture
def run(cli: Cli, workspace_root: Path) -> dict[str, Any]:
    write_tree(workspace_root, {"AGENTS.md": "rules\n"})
    cli.json("workspace", "register", "demo", str(workspace_root))
    created: dict[str, Any] = cli.json("run", "create", "--workspace", "demo", "--goal", "g")
    return created


def propose(cli: Cli, run: dict[str, Any], text: str) -> str:
    """What an agent does through `rutter mcp` (tested in tests/test_mcp.py), done directly."""
    with open_store(cli.store_url) as store:
        proposal = Rutter(store).pins.propose(
            ProposePinParams(run_id=run["run_id"], text=text), actor="mcp"
        )
    return proposal.proposal_id


def test_add_list_edit_remove(cli: Cli, run: dict[str, Any]) -> None:
    thread = run["thread_id"]
    added = cli.json("context", "pin", "add", thread, "--text", f"never push {GITHUB}")
    assert set(added) == PIN_KEYS
    assert (added["text"], added["redacted"], added["version"], added["created_by"]) == (
        "never push [REDACTED:github_token]", True, 1, "cli",
    )  # fmt: skip
    assert added["created_by_person"] == acting_person(cli.store_url)
    listed = cli.json("context", "pin", "list", thread)
    assert (listed["thread_id"], listed["run_id"], listed["count"]) == (thread, None, 1)
    assert cli.json("context", "pin", "list", run["run_id"])["run_id"] == run["run_id"]
    people = cli("context", "pin", "list", thread)
    assert people.returncode == 0
    assert "never push [REDACTED:github_token]" in people.stdout
    assert "1 of 32 pins" in people.stdout

    pin_id = added["pin_id"]
    edited = cli.json("context", "pin", "edit", pin_id, "--version", "1", "--text", "never push")
    assert (edited["version"], edited["text"]) == (2, "never push")
    stale = cli.json("context", "pin", "edit", pin_id, "--version", "1", "--text", "x", code=4)
    assert stale["error"]["code"] == "conflict"
    assert "--version 2" in stale["error"]["message"]
    removed = cli.json("context", "pin", "remove", pin_id, "--version", "2")
    assert removed == {"pin_id": pin_id, "thread_id": thread, "version": 2, "removed": True}
    gone = cli.json("context", "pin", "remove", pin_id, "--version", "2", code=5)
    assert gone["error"]["code"] == "pin_not_found"
    too_long = cli.json("context", "pin", "add", thread, "--text", "x" * 8193, code=3)
    assert too_long["error"]["code"] == "text_too_large"
    unknown = cli.json("context", "pin", "list", "thr_01M8Y3HJTQYDNPR8CJ56SS1T0B", code=5)
    assert unknown["error"]["code"] == "thread_not_found"


def test_proposals_and_the_three_answers(cli: Cli, run: dict[str, Any]) -> None:
    first = propose(cli, run, "Keep the public API stable.")
    second = propose(cli, run, "Prefer small commits.")
    third = propose(cli, run, "Use tabs.")
    pending = cli.json("context", "pin", "proposals")
    assert [p["proposal_id"] for p in pending["proposals"]] == [first, second, third]
    people = cli("context", "pin", "proposals", "--workspace", "demo")
    assert "Keep the public API stable." in people.stdout
    assert "rutter context pin answer PROPOSAL pin|discuss|custom" in people.stdout

    pinned = cli.json("context", "pin", "answer", first, "pin")
    assert pinned["pin"]["text"] == "Keep the public API stable."
    discussed = cli.json("context", "pin", "answer", second, "discuss", "--text", "later")
    assert (discussed["pin"], discussed["proposal"]["reply"]) == (None, "later")
    wrong = cli.json("context", "pin", "answer", third, "pin", "--text", "mine", code=2)
    assert wrong["error"]["code"] == "invalid_answer"
    assert cli.json("context", "pin", "answer", third, "maybe", code=2)["error"]["code"] == (
        "invalid_choice"
    )
    custom = cli("context", "pin", "answer", third, "custom", "--text", "Use spaces.", "--pin")
    assert custom.returncode == 0, custom.stderr
    assert "Pinned pin_" in custom.stdout
    again = cli.json("context", "pin", "answer", third, "discuss", code=4)
    assert again["error"]["code"] == "conflict"
    texts = [p["text"] for p in cli.json("context", "pin", "list", run["thread_id"])["pins"]]
    assert texts == ["Keep the public API stable.", "Use spaces."]
    assert cli.json("context", "pin", "proposals")["proposals"] == []
    assert len(cli.json("context", "pin", "proposals", "--all")["proposals"]) == 3
