"""`rutter session fork|resume|tree|compare` end to end, as real subprocesses on a real store and
a real git repository: JSON shapes, text for people, exit codes of every refusal, the new run's
drift against the disk through `rutter context instructions --run`, and two forks of one node
racing as two processes."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write_tree
from tests.testing import Cli

GITHUB = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"
AUTHORITY = {"approvals", "capability_grants", "credentials", "debug_sessions",
             "execution_leases", "network_authorization", "processes", "terminal_leases",
             "execution_profiles"}  # fmt: skip


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@e.x", *args],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path / "home", tmp_path)


@pytest.fixture
def run(cli: Cli, workspace_root: Path) -> dict[str, Any]:
    write_tree(workspace_root, {"AGENTS.md": "rules\n", "src/AGENTS.md": "src rules\n"})
    for args in (["init", "-q", "-b", "trunk"], ["add", "."], ["commit", "-q", "-m", "one"]):
        git(workspace_root, *args)
    cli.json("workspace", "register", "demo", str(workspace_root))
    created: dict[str, Any] = cli.json(
        "run", "create", "--workspace", "demo", "--goal", "g", "--target", "src", "--mode",
        "full", "--profile", "release",
    )  # fmt: skip
    return created


def checkpoint(cli: Cli, run_id: str, title: str = "t") -> dict[str, Any]:
    node: dict[str, Any] = cli.json("session", "checkpoint", run_id, "--title", title)
    return node


def test_fork_resume_tree_and_compare(cli: Cli, run: dict[str, Any], workspace_root: Path) -> None:
    node = checkpoint(cli, run["run_id"], "Parser reviewed")
    pinned = node["snapshot"]["instructions"]["fingerprint"]
    (workspace_root / "src" / "AGENTS.md").write_text("src rules, changed\n", encoding="utf-8")

    forked = cli.json("session", "fork", node["node_id"], "--goal", "Try another parser")
    assert {"run_id", "mission_id", "session_id", "thread_id", "node_id", "authority"} <= set(
        forked
    )
    assert forked["authority"] == dict.fromkeys(AUTHORITY, False)
    assert (forked["kind"], forked["parent_node_id"], forked["fingerprint"]) == (
        "fork", node["node_id"], pinned,
    )  # fmt: skip
    assert (forked["mode"], forked["profile"], forked["status"]) == ("ask", None, "created")
    shown = cli.json("run", "show", forked["run_id"])
    assert (shown["mode"], shown["profile"], shown["goal"]) == ("ask", None, "Try another parser")
    assert shown["mission_id"] != run["mission_id"]
    # The new run pinned the node's snapshot and shows the disk's drift like any run.
    inspected = cli.json("context", "instructions", "--run", forked["run_id"])
    assert (inspected["revision"], inspected["stale"]) == (1, True)
    assert inspected["diff"]["from_fingerprint"] == pinned
    assert inspected["diff"]["changed"] == ["src/AGENTS.md"]

    resumed = cli.json("session", "resume", node["node_id"])
    assert (resumed["kind"], resumed["mission_id"]) == ("resume", run["mission_id"])
    assert resumed["authority"] == dict.fromkeys(AUTHORITY, False)

    git(workspace_root, "commit", "-q", "--allow-empty", "-m", "two")
    on_fork = checkpoint(cli, forked["run_id"], "Alternative tried")
    tree = cli.json("session", "tree", forked["session_id"])
    assert tree["protocol_version"] == "session_tree.v1"
    assert [(n["kind"], n["parent_node_id"]) for n in tree["nodes"]] == [
        ("root", None),
        ("checkpoint", run["root_node_id"]),
        ("fork", node["node_id"]),
        ("checkpoint", forked["node_id"]),
        ("resume", node["node_id"]),
    ]
    assert cli.json("session", "tree", run["run_id"])["nodes"] == tree["nodes"]
    drift = tree["nodes"][1]["drift"]
    assert drift["instructions"]["changed"] is True
    assert (drift["git"]["branch_changed"], drift["git"]["head_changed"]) == (False, True)

    compared = cli.json("session", "compare", node["node_id"], on_fork["node_id"])
    assert (compared["a"]["node_id"], compared["b"]["node_id"]) == (
        node["node_id"], on_fork["node_id"],
    )  # fmt: skip
    assert compared["same"]["instructions"] is True
    assert compared["same"]["git_head"] is False

    # For people: the fork's summary, an indented tree, a side-by-side table.
    said = cli("session", "fork", node["node_id"], "--goal", "one more")
    assert said.returncode == 0, said.stderr
    assert "no authority carried over" in said.stdout
    assert "rutter context instructions --run run_" in said.stdout
    people = cli("session", "tree", forked["run_id"])
    assert people.returncode == 0, people.stderr
    lines = people.stdout.splitlines()
    assert any(line.startswith("root " + run["root_node_id"]) for line in lines)
    assert any(f"fork {forked['node_id']}" in line and "◀" in line for line in lines)
    assert any("drift:" in line and "HEAD changed" in line for line in lines)
    assert any(line.lstrip("│ ").startswith("└── ") for line in lines)
    table = cli("session", "compare", node["node_id"], on_fork["node_id"])
    assert table.returncode == 0, table.stderr
    assert "git HEAD" in table.stdout
    assert "Memory references from A to B" in table.stdout


def test_every_refusal_has_its_code_and_exit(cli: Cli, run: dict[str, Any], tmp_path: Path) -> None:
    node = checkpoint(cli, run["run_id"])
    decision = cli.json("session", "note", "add", run["thread_id"], "--kind", "decision", "--text",
                        "planted decision text")  # fmt: skip
    unknown_node = "node_01M8Y3HJTQYDNPR8CJ56SS1T0B"
    cases: list[tuple[list[str], int, str]] = [
        (["session", "fork", decision["note_id"], "--goal", "g"], 3, "rejected"),
        (["session", "resume", decision["note_id"]], 3, "rejected"),
        (["session", "compare", node["node_id"], decision["note_id"]], 3, "rejected"),
        (["session", "fork", unknown_node, "--goal", "g"], 5, "not_found"),
        (["session", "resume", unknown_node], 5, "not_found"),
        (["session", "compare", unknown_node, node["node_id"]], 5, "not_found"),
        (["session", "tree", "run_01M8Y3HJTQYDNPR8CJ56SS1T0B"], 5, "run_not_found"),
        (["session", "tree", "ses_01M8Y3HJTQYDNPR8CJ56SS1T0B"], 5, "session_not_found"),
        (["session", "fork", node["node_id"], "--goal", " "], 3, "invalid_goal"),
        (["session", "fork", node["node_id"], "--goal", f"use {GITHUB}"], 3, "secret_in_goal"),
        (["session", "fork", node["node_id"]], 2, "usage"),
    ]
    for args, code, error in cases:
        result = cli(*args, "--json")
        assert result.returncode == code, (args, result.stdout, result.stderr)
        body = json.loads(result.stdout)
        assert body["error"]["code"] == error, (args, body)
        assert "planted decision" not in result.stdout + result.stderr
        assert GITHUB not in result.stdout + result.stderr
    projected = cli.json("session", "fork", decision["note_id"], "--goal", "g", code=3)
    assert "rutter session tree RUN" in projected["error"]["message"]
    # A tampered node: refused, nothing of it printed, nothing created.
    runs_before = len(cli.json("run", "list", "--all")["runs"])
    database = cli.home / "rutter.db"
    conn = sqlite3.connect(database)
    try:
        conn.execute("DROP TRIGGER continuity_snapshots_append_only_no_update")
        conn.execute(
            "UPDATE continuity_snapshots SET snapshot_json = "
            'replace(snapshot_json, \'"title":"t"\', \'"title":"rewritten"\')'
        )
        conn.commit()
    finally:
        conn.close()
    for args in (["session", "fork", node["node_id"], "--goal", "g"],
                 ["session", "resume", node["node_id"]],
                 ["session", "compare", node["node_id"], node["node_id"]]):  # fmt: skip
        result = cli(*args, "--json")
        assert result.returncode == 3, (args, result.stdout, result.stderr)
        assert json.loads(result.stdout)["error"]["code"] == "snapshot_tampered"
        assert "rewritten" not in result.stdout + result.stderr
    assert len(cli.json("run", "list", "--all")["runs"]) == runs_before
    listed = cli.json("session", "tree", run["run_id"])["nodes"]
    assert [n["error"]["code"] for n in listed if n["error"] is not None] == ["snapshot_tampered"]
    assert "rewritten" not in json.dumps(listed)


def test_two_processes_forking_one_node_both_succeed(cli: Cli, run: dict[str, Any]) -> None:
    node = checkpoint(cli, run["run_id"])
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUTTER_")}
    env["RUTTER_HOME"] = str(cli.home)
    racers = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "rutter",
                "session",
                "fork",
                node["node_id"],
                "--goal",
                f"racer {number}",
                "--json",
            ],
            cwd=cli.cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for number in range(2)
    ]
    outputs = [racer.communicate(timeout=120) for racer in racers]
    assert [racer.returncode for racer in racers] == [0, 0], outputs
    answers = [json.loads(out) for out, _err in outputs]
    assert len({answer["run_id"] for answer in answers}) == 2
    assert len({answer["node_id"] for answer in answers}) == 2
    assert {answer["parent_node_id"] for answer in answers} == {node["node_id"]}
    nodes = cli.json("session", "tree", run["run_id"])["nodes"]
    assert sorted(n["run_id"] for n in nodes if n["kind"] == "fork") == sorted(
        answer["run_id"] for answer in answers
    )
