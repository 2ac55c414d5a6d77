"""`rutter context assemble` and `rutter context audit` end to end, as real subprocesses on a
real store: the JSON documents, the audit after a memory is disabled and deleted, the exit
codes of bad input, and the text for people."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write_tree
from tests.testing import Cli, acting_person

ENTRY_KEYS = {"kind", "id", "version", "scope", "sha256", "tokens", "decision", "reason"}
SENTINEL = "sentinel-cli-assembly-body-91c2"


# Assembly through the CLI on both engines (the store is what it reads and audits).
pytestmark = pytest.mark.both_dialects


@pytest.fixture
def cli(tmp_path: Path, store_url: str) -> Cli:
    return Cli(tmp_path / "home", tmp_path, database_url=store_url)


@pytest.fixture
def run(cli: Cli, workspace_root: Path) -> dict[str, Any]:
    write_tree(workspace_root, {"AGENTS.md": "a" * 39 + "\n"})
    cli.json("workspace", "register", "demo", str(workspace_root))
    created: dict[str, Any] = cli.json("run", "create", "--workspace", "demo", "--goal", "g")
    return created


def test_assemble_and_audit(cli: Cli, run: dict[str, Any]) -> None:
    kept = cli.json("context", "memory", "create", "--scope", "user", "--title", "t",
                    "--content", SENTINEL)  # fmt: skip
    big = cli.json("context", "memory", "create", "--scope", "project", "--workspace", "demo",
                   "--title", "t", "--content", "b" * 404)  # fmt: skip
    pin = cli.json("context", "pin", "add", run["thread_id"], "--text", "stay on main")
    first = cli.json("context", "assemble", "--run", run["run_id"], "--budget", "400")
    assert first["protocol_version"] == "context_assembly.v1"
    assert first["budget"] == {
        "background": 400, "memory_cap": 100, "memory": 100, "required": 13, "used": 24,
    }  # fmt: skip
    assert [(e["kind"], e["id"], e["decision"], e["reason"]) for e in first["entries"]] == [
        ("instruction", "AGENTS.md", "included", None),
        ("pin", pin["pin_id"], "included", None),
        ("memory", kept["id"], "included", None),
        ("memory", big["id"], "omitted", "quota"),
    ]
    assert all(set(e) == ENTRY_KEYS | {"text"} for e in first["entries"])
    assert first["entries"][2]["text"] == SENTINEL
    assert first["created_by"] == "cli"

    cli.json("context", "memory", "disable", kept["id"], "--version", "1")
    second = cli.json("context", "assemble", "--run", run["run_id"], "--budget", "400")
    assert [(e["id"], e["reason"]) for e in second["entries"][2:]] == [
        (kept["id"], "disabled"), (big["id"], "quota"),
    ]  # fmt: skip
    cli.json("context", "memory", "delete", kept["id"], "--version", "2")

    audit = cli.json("context", "audit", run["run_id"])
    assert audit["run_id"] == run["run_id"]
    assert [a["assembly_id"] for a in audit["assemblies"]] == [
        second["assembly_id"], first["assembly_id"],
    ]  # fmt: skip
    delivered = audit["assemblies"][1]["entries"][2]
    assert set(delivered) == ENTRY_KEYS
    assert (delivered["id"], delivered["version"], delivered["decision"]) == (
        kept["id"], 1, "included",
    )  # fmt: skip
    assert delivered["sha256"] == kept["content_sha256"]
    assert [a["followed"] for a in audit["assemblies"]] == [None, None]
    report = cli.json("context", "report", first["assembly_id"], "--followed", "AGENTS.md",
                      "--ignored", pin["pin_id"])  # fmt: skip
    assert report == {
        "assembly_id": first["assembly_id"], "followed": ["AGENTS.md"],
        "ignored": [pin["pin_id"]], "reported_by": "cli",
        "reported_by_person": acting_person(cli.store_url), "reported_at": report["reported_at"],
    }  # fmt: skip
    again = cli.json("context", "report", first["assembly_id"], "--followed", "AGENTS.md",
                     code=4)  # fmt: skip
    assert again["error"]["code"] == "conflict"
    undelivered = cli.json("context", "report", second["assembly_id"], "--followed", big["id"],
                           code=3)  # fmt: skip
    assert undelivered["error"]["code"] == "not_delivered"
    people = cli("context", "audit", run["run_id"])
    assert people.returncode == 0
    assert first["assembly_id"] in people.stdout
    assert "omitted: disabled" in people.stdout
    assert "followed: not reported" in people.stdout
    assert f"followed, as {acting_person(cli.store_url)} via cli reported" in people.stdout
    assert SENTINEL not in people.stdout
    shown = cli("context", "assemble", "--run", run["run_id"])
    assert shown.returncode == 0
    assert "stay on main" in shown.stdout
    assert "budget 16384 tokens" in shown.stdout


def test_bad_input_exit_codes(cli: Cli, run: dict[str, Any]) -> None:
    zero = cli.json("context", "assemble", "--run", run["run_id"], "--budget", "0", code=2)
    assert zero["error"]["code"] == "invalid_budget"
    missing = cli.json("context", "assemble", "--run", "run_01M8Y3HJTQYDNPR8CJ56SS1T0B", code=5)
    assert missing["error"]["code"] == "run_not_found"
    unknown = cli.json("context", "audit", "run_01M8Y3HJTQYDNPR8CJ56SS1T0B", code=5)
    assert unknown["error"]["code"] == "run_not_found"
    limit = cli.json("context", "audit", run["run_id"], "--limit", "0", code=2)
    assert limit["error"]["code"] == "invalid_limit"
    usage = cli.json("context", "assemble", "--budget", "5", code=2)
    assert usage["error"]["code"] == "usage"
    assert cli.json("context", "audit", run["run_id"])["assemblies"] == []
