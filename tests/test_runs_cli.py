"""`rutter run ...` and `rutter context instructions --run` end to end, as real subprocesses."""

from __future__ import annotations

import json
import shlex
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from rutter_core.runs.service import import_run
from rutter_core.store import open_store
from tests.conftest import write_tree
from tests.testing import Cli, acting_person, raw_rows, sqlite_file

TREE: dict[str, str | bytes] = {"AGENTS.md": "root rules\n", "src/AGENTS.md": "src rules\n"}
CREATED_KEYS = {"run_id", "mission_id", "session_id", "thread_id", "root_node_id", "revision",
                "fingerprint"}  # fmt: skip
RUN_KEYS = {"run_id", "mission_id", "session_id", "thread_id", "workspace_id", "goal", "profile",
            "mode", "target_path", "status", "revision", "fingerprint", "created_by",
            "created_by_person", "updated_by", "updated_by_person", "created_at",
            "updated_at"}  # fmt: skip
INSPECT_KEYS = {"run_id", "revision", "pinned", "live", "stale", "diff"}
DIFF_KEYS = {"from_fingerprint", "to_fingerprint", "added", "removed", "changed", "order_changed",
             "ignored_changed", "requires_confirmation"}  # fmt: skip


# The run commands on both engines, but what rewrites the SQLite file by hand (`sqlite_only`).
pytestmark = pytest.mark.both_dialects


@pytest.fixture
def cli(tmp_path: Path, store_url: str) -> Cli:
    return Cli(tmp_path / "home", tmp_path, database_url=store_url)


@pytest.fixture
def demo(cli: Cli, workspace_root: Path) -> Path:
    write_tree(workspace_root, TREE)
    cli.json("workspace", "register", "demo", str(workspace_root))
    return workspace_root


def create(cli: Cli, *options: str) -> dict[str, Any]:
    body: dict[str, Any] = cli.json(
        "run", "create", "--workspace", "demo", "--goal", "fix the parser", *options
    )
    return body


def inspect(cli: Cli, run_id: str) -> dict[str, Any]:
    body: dict[str, Any] = cli.json("context", "instructions", "--run", run_id)
    return body


def confirm_args(run_id: str, pinned: str, live: str) -> list[str]:
    return ["context", "instructions", "--run", run_id, "--confirm",
            "--expected-fingerprint", pinned, "--expected-live-fingerprint", live]  # fmt: skip


def stored_revisions(cli: Cli, run_id: str) -> list[int]:
    rows = raw_rows(
        cli.store_url,
        "SELECT revision FROM run_instruction_snapshots WHERE run_id = ? ORDER BY revision",
        run_id,
    )
    return [int(str(revision)) for (revision,) in rows]


# --- run create / list / show / status ------------------------------------------------------------


def test_run_lifecycle(cli: Cli, demo: Path) -> None:
    created = create(cli, "--target", "src/main.go", "--mode", "auto", "--profile", "careful")
    assert set(created) == CREATED_KEYS
    assert created["revision"] == 1
    run_id = created["run_id"]

    shown = cli.json("run", "show", run_id)
    assert set(shown) == RUN_KEYS
    person = acting_person(cli.store_url)
    assert (shown["created_by_person"], shown["updated_by_person"]) == (person, person)
    assert shown["status"] == "created"
    assert shown["target_path"] == "src/main.go"
    assert (shown["mode"], shown["profile"]) == ("auto", "careful")
    assert (shown["revision"], shown["fingerprint"]) == (1, created["fingerprint"])
    assert shown["created_by"] == "cli"
    assert cli.json("run", "list") == {"runs": [shown]}

    running = cli.json("run", "status", run_id, "running")
    assert running["status"] == "running"
    again = cli.json("run", "status", run_id, "running")  # a retry changes nothing
    assert again == running
    assert cli.json("run", "status", run_id, "completed")["status"] == "completed"

    assert cli.json("run", "list") == {"runs": []}  # active runs only by default
    assert [r["run_id"] for r in cli.json("run", "list", "--all")["runs"]] == [run_id]
    refused = cli.json("run", "status", run_id, "running", code=3)
    assert refused["error"]["code"] == "run_terminal"
    human = cli("run", "status", run_id, "paused")
    assert human.returncode == 3
    assert "error[run_terminal]" in human.stderr


def test_run_list_by_workspace_and_tables(cli: Cli, demo: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    cli.json("workspace", "register", "other", str(other))
    mine = create(cli)["run_id"]
    theirs = cli.json("run", "create", "--workspace", "other", "--goal", "elsewhere")["run_id"]
    listed = cli.json("run", "list", "--workspace", "demo")["runs"]
    assert [r["run_id"] for r in listed] == [mine]
    assert [r["run_id"] for r in cli.json("run", "list")["runs"]] == [mine, theirs]
    assert cli.json("run", "list", "--workspace", "ghost", code=5)["error"]["code"] == (
        "not_registered"
    )

    table = cli("run", "list")
    assert table.returncode == 0, table.stderr
    assert mine in table.stdout
    assert theirs in table.stdout
    assert "fix the parser" in table.stdout
    shown = cli("run", "show", mine)
    assert "status" in shown.stdout
    assert "created" in shown.stdout
    cli.json("run", "status", mine, "cancelled")
    assert "No active runs" in cli("run", "list", "--workspace", "demo").stdout


def test_run_create_infers_the_workspace_and_continues_threads(cli: Cli, demo: Path) -> None:
    first = cli.json("run", "create", "--goal", "one", cwd=demo / "src")
    shown = cli.json("run", "show", first["run_id"])
    assert shown["workspace_id"] == "demo"
    assert shown["target_path"] == "."
    assert shown["mode"] == "ask"
    second = cli.json("run", "create", "--goal", "two", "--thread", first["thread_id"], cwd=demo)
    assert second["thread_id"] == first["thread_id"]
    human = cli("run", "create", "--goal", "three", cwd=demo)
    assert human.returncode == 0, human.stderr
    assert human.stdout.startswith("Created run run_")
    assert "pinned revision 1: 1 instruction file" in human.stdout


CREATE_ERRORS: list[tuple[list[str], str, int]] = [
    (["--goal", ""], "invalid_goal", 3),
    (["--goal", "x", "--mode", "yolo"], "invalid_mode", 3),
    (["--goal", "x", "--profile", "Bad Name"], "invalid_profile", 3),
    (["--goal", "x", "--target", "../up"], "invalid_target", 3),
    (["--goal", "x", "--target", "nowhere/x.go"], "not_found", 5),
    (["--goal", "x", "--thread", "thr_01J00000000000000000000000"], "thread_not_found", 5),
    (["--goal", "x", "--workspace", "ghost"], "not_registered", 5),
    (["--workspace", "demo"], "usage", 2),  # --goal is required
]


def test_run_create_errors_create_nothing(cli: Cli, demo: Path) -> None:
    for options, code, exit_code in CREATE_ERRORS:
        workspace = [] if "--workspace" in options else ["--workspace", "demo"]
        body = cli.json("run", "create", *workspace, *options, code=exit_code)
        assert body["error"]["code"] == code, options
        if code == "thread_not_found":  # the CLI words the hint with its own options
            assert body["error"]["message"].endswith(
                "; leave out --thread to start a new one, or take a thread_id from "
                "`rutter run list --all`"
            )
    assert cli.json("run", "list", "--all") == {"runs": []}


def test_run_create_fails_closed_and_without_workspace(
    cli: Cli, demo: Path, tmp_path: Path
) -> None:
    write_tree(demo, {"CLAUDE.md": ""})
    body = cli.json("run", "create", "--workspace", "demo", "--goal", "x", code=3)
    assert body["error"]["code"] == "empty_source"
    assert body["error"]["path"] == "CLAUDE.md"
    outside = cli.json("run", "create", "--goal", "x", cwd=tmp_path, code=2)
    assert outside["error"]["code"] == "workspace_required"
    assert cli.json("run", "list", "--all") == {"runs": []}


def test_unknown_run(cli: Cli, demo: Path) -> None:
    for args in (["run", "show", "run_nope"], ["run", "status", "run_nope", "running"],
                 ["context", "instructions", "--run", "run_nope"]):  # fmt: skip
        error = cli.json(*args, code=5)["error"]
        assert error["code"] == "run_not_found"
        assert error["message"] == (
            "no run 'run_nope'; see `rutter run list --all` for the runs in the store"
        )
        assert error["hint"] == {"fix": "find_run"}


def test_invalid_status(cli: Cli, demo: Path) -> None:
    run_id = create(cli)["run_id"]
    assert cli.json("run", "status", run_id, "done", code=3)["error"]["code"] == "invalid_status"
    wrong = cli.json("run", "status", run_id, "completed", code=3)
    assert wrong["error"]["code"] == "invalid_transition"
    assert wrong["error"]["details"]["allowed"] == ["cancelled", "failed", "running"]


def test_workspace_with_runs_cannot_be_removed(cli: Cli, demo: Path) -> None:
    create(cli)
    body = cli.json("workspace", "remove", "demo", code=4)
    assert body["error"]["details"] == {
        "workspace_id": "demo", "runs": 1, "sessions": 1, "project_memories": 0, "threads": 0
    }  # fmt: skip
    assert [w["workspace_id"] for w in cli.json("workspace", "list")["workspaces"]] == ["demo"]


# --- context instructions --run ----------------------------------------------------------------


def test_inspect_and_confirm(cli: Cli, demo: Path) -> None:
    created = create(cli, "--target", "src/main.go")
    run_id = created["run_id"]
    fresh = inspect(cli, run_id)
    assert set(fresh) == INSPECT_KEYS
    assert set(fresh["diff"]) == DIFF_KEYS
    assert fresh["revision"] == 1
    assert fresh["stale"] is False
    assert fresh["pinned"]["fingerprint"] == created["fingerprint"]
    assert fresh["pinned"]["sources"][0]["content"] == "root rules\n"
    assert fresh["live"]["fingerprint"] == created["fingerprint"]

    write_tree(demo, {"AGENTS.md": "root rules, edited\n", "CLAUDE.md": "claude\n"})
    drifted = inspect(cli, run_id)
    assert drifted["stale"] is True
    assert drifted["diff"]["added"] == ["CLAUDE.md"]
    assert drifted["diff"]["changed"] == ["AGENTS.md"]
    assert drifted["diff"]["requires_confirmation"] is True
    assert drifted["pinned"]["sources"][0]["content"] == "root rules\n"  # the run keeps it
    pinned, live = drifted["diff"]["from_fingerprint"], drifted["diff"]["to_fingerprint"]

    confirmed = cli.json(*confirm_args(run_id, pinned, live))
    assert set(confirmed) == INSPECT_KEYS | {"refreshed"}
    assert confirmed["refreshed"] is True
    assert confirmed["revision"] == 2
    assert confirmed["stale"] is False
    assert confirmed["pinned"]["fingerprint"] == live
    assert cli.json("run", "show", run_id)["revision"] == 2

    # The same review again: the pinned fingerprint moved on.
    stale_review = cli.json(*confirm_args(run_id, pinned, live), code=4)
    assert stale_review["error"]["code"] == "conflict"
    assert stale_review["error"]["details"]["current_fingerprint"] == live
    # Confirming what is already pinned appends nothing and says so.
    noop = cli.json(*confirm_args(run_id, live, live))
    assert noop["refreshed"] is False
    assert noop["revision"] == 2
    human = cli(*confirm_args(run_id, live, live))
    assert human.returncode == 0, human.stderr
    assert "Nothing to refresh" in human.stdout
    assert stored_revisions(cli, run_id) == [1, 2]


def test_confirm_refused_when_the_disk_changed_after_review(cli: Cli, demo: Path) -> None:
    run_id = create(cli)["run_id"]
    write_tree(demo, {"CLAUDE.md": "reviewed\n"})
    reviewed = inspect(cli, run_id)["diff"]
    write_tree(demo, {"CLAUDE.md": "changed again\n"})
    result = cli(*confirm_args(run_id, reviewed["from_fingerprint"], reviewed["to_fingerprint"]))
    assert result.returncode == 4
    assert result.stdout == ""
    assert "error[conflict]" in result.stderr
    assert "changed again since you reviewed" in result.stderr
    assert (
        f"nothing was appended; review again with `rutter context instructions --run {run_id}` "
        "and confirm what it shows"
    ) in result.stderr
    bad = cli.json(*confirm_args(run_id, "abc", reviewed["to_fingerprint"]), code=3)
    assert bad["error"]["code"] == "invalid_fingerprint"
    assert bad["error"]["message"].endswith(
        f"copy it from `rutter context instructions --run {run_id}`"
    )
    assert stored_revisions(cli, run_id) == [1]


def test_human_drift_output_prints_a_working_confirm_command(cli: Cli, demo: Path) -> None:
    run_id = create(cli, "--target", "src")["run_id"]
    write_tree(demo, {"AGENTS.md": "edited\n", "CLAUDE.md": "claude\n"})
    (demo / "src" / "AGENTS.md").unlink()
    result = cli("context", "instructions", "--run", run_id)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    diff = inspect(cli, run_id)["diff"]
    assert "+ added    CLAUDE.md" in out
    assert "- removed  src/AGENTS.md" in out
    assert "~ changed  AGENTS.md (bytes, content_sha256)" in out
    assert diff["from_fingerprint"] in out
    assert diff["to_fingerprint"] in out
    [command] = [line.strip() for line in out.splitlines() if "--confirm" in line]
    words = shlex.split(command)
    assert words[0] == "rutter"
    assert words[1:] == confirm_args(run_id, diff["from_fingerprint"], diff["to_fingerprint"])

    confirmed = cli(*words[1:])
    assert confirmed.returncode == 0, confirmed.stderr
    assert f"Refreshed: run {run_id} now pins revision 2" in confirmed.stdout
    assert "up to date" in confirmed.stdout


def test_printed_command_names_an_explicit_database(cli: Cli, demo: Path, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'other.db'}"
    cli.json("--database-url", url, "workspace", "register", "demo", str(demo))
    run_id = cli.json("--database-url", url, "run", "create", "--goal", "x", "--workspace",
                      "demo")["run_id"]  # fmt: skip
    write_tree(demo, {"CLAUDE.md": "new\n"})
    out = cli("--database-url", url, "context", "instructions", "--run", run_id).stdout
    [command] = [line.strip() for line in out.splitlines() if "--confirm" in line]
    assert cli(*shlex.split(command)[1:]).returncode == 0


def test_live_discovery_failing_closed(cli: Cli, demo: Path, tmp_path: Path) -> None:
    created = create(cli)
    (tmp_path / "elsewhere.md").write_text("x\n")
    (demo / "AGENTS.md").unlink()
    (demo / "AGENTS.md").symlink_to(tmp_path / "elsewhere.md")
    body = inspect(cli, created["run_id"])
    assert body["live"]["error"]["code"] == "symlink"
    assert body["stale"] is False
    assert body["diff"]["requires_confirmation"] is False
    assert body["pinned"]["fingerprint"] == created["fingerprint"]
    human = cli("context", "instructions", "--run", created["run_id"])
    assert human.returncode == 0, human.stderr
    assert "discovery fails closed now: [symlink]" in human.stdout
    assert "The run keeps revision 1" in human.stdout
    assert "--confirm" not in human.stdout


def test_run_without_revision(cli: Cli, demo: Path) -> None:
    with open_store(cli.store_url) as store:
        run_id = import_run(store, workspace_id="demo", goal="legacy", actor="cli").run_id
    assert cli.json("run", "show", run_id)["revision"] is None
    body = inspect(cli, run_id)
    assert (body["revision"], body["pinned"]) == (None, None)
    assert body["stale"] is True
    human = cli("context", "instructions", "--run", run_id).stdout
    assert "Pinned: nothing yet" in human
    [command] = [line.strip() for line in human.splitlines() if "--confirm" in line]
    assert "--expected-fingerprint '' " in command
    confirmed = cli.json(*shlex.split(command)[1:])
    assert (confirmed["refreshed"], confirmed["revision"]) == (True, 1)
    assert stored_revisions(cli, run_id) == [1]


def test_terminal_run_refuses_a_refresh(cli: Cli, demo: Path) -> None:
    run_id = create(cli)["run_id"]
    write_tree(demo, {"CLAUDE.md": "new\n"})
    diff = inspect(cli, run_id)["diff"]
    cli.json("run", "status", run_id, "failed")
    body = cli.json(*confirm_args(run_id, diff["from_fingerprint"], diff["to_fingerprint"]), code=3)
    assert body["error"]["code"] == "run_terminal"
    assert stored_revisions(cli, run_id) == [1]
    # The drift is still shown, but no command is offered that can only be refused.
    human = cli("context", "instructions", "--run", run_id)
    assert human.returncode == 0, human.stderr
    assert "+ added    CLAUDE.md" in human.stdout
    assert "--confirm" not in human.stdout
    assert "failed, which is final" in human.stdout


@pytest.mark.sqlite_only
def test_tampered_revision_through_the_cli(cli: Cli, demo: Path) -> None:
    run_id = create(cli)["run_id"]
    conn = sqlite3.connect(sqlite_file(cli.store_url), isolation_level=None)
    try:
        conn.execute("DROP TRIGGER run_instruction_snapshots_append_only_no_update")
        conn.execute(
            "UPDATE run_instruction_snapshots "
            "SET snapshot_json = replace(snapshot_json, 'root rules', 'evil rules')"
        )
    finally:
        conn.close()
    body = cli.json("context", "instructions", "--run", run_id, code=1)
    assert body["error"]["code"] == "snapshot_tampered"
    assert body["error"]["details"] == {
        "run_id": run_id,
        "revision": 1,
        "reason": "the content of AGENTS.md does not match its sha256",
    }
    # `run show` names the revision and its fingerprint: it vouches for neither unchecked.
    shown = cli.json("run", "show", run_id, code=1)
    assert shown["error"]["code"] == "snapshot_tampered"
    human = cli("run", "show", run_id)
    assert human.returncode == 1
    assert human.stdout == ""
    assert "error[snapshot_tampered]" in human.stderr
    # The run can still be ended: that reads no revision.
    assert cli.json("run", "status", run_id, "cancelled")["status"] == "cancelled"


USAGE_ERRORS: list[list[str]] = [
    ["--run", "RUN", "--target", "x"],
    ["--run", "RUN", "--targets-from", "-"],
    ["--run", "RUN", "--confirm"],
    ["--run", "RUN", "--confirm", "--expected-fingerprint", "F"],
    ["--run", "RUN", "--confirm", "--expected-live-fingerprint", "F"],
    ["--run", "RUN", "--expected-fingerprint", "F", "--expected-live-fingerprint", "F"],
    ["--target", "x", "--confirm", "--expected-fingerprint", "F", "--expected-live-fingerprint",
     "F"],
    ["--workspace", "demo"],
    [],
]  # fmt: skip


def test_instructions_option_combinations(cli: Cli, demo: Path) -> None:
    run_id = create(cli)["run_id"]
    for args in USAGE_ERRORS:
        given = [run_id if arg == "RUN" else arg for arg in args]
        body = cli.json("context", "instructions", *given, code=2)
        assert body["error"]["code"] == "usage", args
    assert stored_revisions(cli, run_id) == [1]


# --- the race ----------------------------------------------------------------------------------

RACER = """
import sys, time
from pathlib import Path
from rutter_cli.main import main

ready, go = Path(sys.argv[1]), Path(sys.argv[2])
ready.touch()
while not go.exists():
    time.sleep(0.001)
sys.exit(main(sys.argv[3:]))
"""


def test_two_confirmers_racing_exactly_one_wins(cli: Cli, demo: Path, tmp_path: Path) -> None:
    run_id = create(cli)["run_id"]
    write_tree(demo, {"CLAUDE.md": "new\n"})
    diff = inspect(cli, run_id)["diff"]
    args = [*confirm_args(run_id, diff["from_fingerprint"], diff["to_fingerprint"]), "--json"]
    env = cli.env()
    go = tmp_path / "go"
    racers = []
    for index in range(2):
        ready = tmp_path / f"ready-{index}"
        racers.append((ready, subprocess.Popen(
            [sys.executable, "-c", RACER, str(ready), str(go), *args],
            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )))  # fmt: skip
    # Both fully started (imports done) before either may touch the store.
    while not all(ready.exists() for ready, _ in racers):
        assert all(proc.poll() is None for _, proc in racers), "a racer died before the start"
        time.sleep(0.01)
    go.touch()
    results = []
    for _, proc in racers:
        out, err = proc.communicate(timeout=120)
        results.append((proc.returncode, json.loads(out), err))
    assert sorted(code for code, _, _ in results) == [0, 4], results
    [winner] = [body for code, body, _ in results if code == 0]
    [loser] = [body for code, body, _ in results if code == 4]
    assert (winner["refreshed"], winner["revision"]) == (True, 2)
    assert loser["error"]["code"] == "conflict"
    assert loser["error"]["details"]["current_fingerprint"] == diff["to_fingerprint"]
    assert stored_revisions(cli, run_id) == [1, 2]
