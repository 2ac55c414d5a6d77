"""Another machine's registration is never read on this one (docs/team.md#machines): a command
that reads a workspace's files, given another machine's registration by ID, is refused
(`workspace_on_other_machine`, exit 2) and writes nothing; a record of another machine's
registration read without one is read against this machine's registration of its project, or
refused when this machine has none; the project's records stay readable through any
registration."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.mcp_client import Env, call, failure, mcp_client
from tests.testing import Cli, clone, raw_rows

pytestmark = pytest.mark.both_dialects

TABLES = (
    "workspaces",
    "projects",
    "missions",
    "runs",
    "sessions",
    "threads",
    "continuity_nodes",
    "continuity_snapshots",
    "run_instruction_snapshots",
    "branch_operations",
    "context_assemblies",
    "memories",
)


WIDGET = "git@github.com:acme/widget.git"


def widget_clone(path: Path, files: dict[str, str]) -> Path:
    """A clone of the acme widget repository at `path` with `files` committed."""
    return clone(path, WIDGET, files)


def counts(url: str) -> dict[str, int]:
    return {table: raw_rows(url, f"SELECT count(*) FROM {table}")[0][0] for table in TABLES}


def refused(cli: Cli, *args: str) -> dict[str, Any]:
    """`rutter ARGS --json`, refused because the registration is another machine's: the error
    document, which never names the other machine's root."""
    document = cli.json(*args, code=2)
    error: dict[str, Any] = document["error"]
    assert error["code"] == "workspace_on_other_machine", error
    assert "/ana/" not in json.dumps(error)
    return error


@pytest.fixture
def machines(store_url: str, tmp_path: Path) -> dict[str, Any]:
    """Ana's run, checkpoint and project memory, made through her registration `widget-ana`;
    Bo's registration `widget-bo` of the same project; Carol's machine, with none."""
    a = widget_clone(tmp_path / "ana" / "widget", {"AGENTS.md": "rules v1\n", "src/main.py": ""})
    b = widget_clone(tmp_path / "bo" / "widget", {"AGENTS.md": "rules v2\n", "src/main.py": ""})
    ana = Cli(tmp_path / "ana-home", a, {"RUTTER_MACHINE_ID": "ana"}, database_url=store_url)
    bo = Cli(tmp_path / "bo-home", b, {"RUTTER_MACHINE_ID": "bo"}, database_url=store_url)
    carol = Cli(tmp_path / "carol-home", tmp_path, {"RUTTER_MACHINE_ID": "carol"},
                database_url=store_url)  # fmt: skip
    ana.json("workspace", "register", "widget-ana", str(a))
    bo.json("workspace", "register", "widget-bo", str(b))
    run = ana.json("run", "create", "--goal", "parser")
    node = ana.json("session", "checkpoint", run["run_id"], "--title", "t")
    ana.json("context", "memory", "create", "--scope", "project", "--workspace", "widget-ana",
             "--title", "Tests", "--content", "Run unit tests first")  # fmt: skip
    return {"ana": ana, "bo": bo, "carol": carol, "run": run["run_id"],
            "node": node["node_id"], "url": store_url}  # fmt: skip


def test_file_reads_through_another_machines_registration_are_refused(
    machines: dict[str, Any],
) -> None:
    bo: Cli = machines["bo"]
    run, node, url = machines["run"], machines["node"], machines["url"]
    before = counts(url)
    commands = [
        ("context", "instructions", "--target", "src/main.py", "--workspace", "widget-ana"),
        ("context", "instructions", "--as", "claude", "--target", "src/main.py",
         "--workspace", "widget-ana"),
        ("run", "create", "--goal", "g", "--workspace", "widget-ana"),
        ("context", "instructions", "--run", run, "--workspace", "widget-ana"),
        ("context", "instructions", "--run", run, "--workspace", "widget-ana", "--diff"),
        ("context", "instructions", "--run", run, "--workspace", "widget-ana", "--confirm",
         "--expected-fingerprint", "0" * 64,
         "--expected-live-fingerprint", "1" * 64),
        ("session", "fork", node, "--goal", "g", "--workspace", "widget-ana"),
        ("session", "resume", node, "--workspace", "widget-ana"),
        ("session", "tree", run, "--workspace", "widget-ana"),
        ("workspace", "project", "set", "widget-ana", "--remote"),
    ]  # fmt: skip
    for command in commands:
        error = refused(bo, *command)
        assert error["details"] == {
            "workspace_id": "widget-ana",
            "project_id": "github.com/acme/widget",
            "this_machine_workspace_ids": ["widget-bo"],
        }, command
        assert error["hint"]["this_machine_workspace_id"] == "widget-bo"
    assert counts(url) == before
    # The person is told which registration to name instead.
    said = bo("context", "instructions", "--target", "src/main.py", "--workspace", "widget-ana")
    assert said.returncode == 2
    assert "--workspace widget-bo" in said.stderr
    # Bo's own registration, named, reads Bo's files.
    mine = bo.json("context", "instructions", "--run", run, "--workspace", "widget-bo")
    assert mine["stale"] is True


def test_project_records_are_read_through_another_machines_registration(
    machines: dict[str, Any],
) -> None:
    bo: Cli = machines["bo"]
    run = machines["run"]
    memories = bo.json(
        "context", "memory", "list", "--scope", "project", "--workspace", "widget-ana"
    )
    assert [m["title"] for m in memories["items"]] == ["Tests"]
    runs = bo.json("run", "list", "--workspace", "widget-ana", "--all")
    assert [r["run_id"] for r in runs["runs"]] == [run]
    threads = bo.json("session", "threads", "--workspace", "widget-ana")
    assert len(threads["items"]) == 1
    assert bo.json("context", "pin", "proposals", "--workspace", "widget-ana")["proposals"] == []
    assert bo.json("workspace", "show", "widget-ana")["workspace_id"] == "widget-ana"
    assert bo.json("run", "show", run)["workspace_id"] == "widget-ana"
    # Without --workspace, the run's tree is read against Bo's files.
    tree = bo.json("session", "tree", run)
    assert tree["run_id"] == run


def test_a_machine_without_a_registration_of_the_project_is_refused(
    machines: dict[str, Any],
) -> None:
    carol: Cli = machines["carol"]
    run, node, url = machines["run"], machines["node"], machines["url"]
    before = counts(url)
    for command in [
        ("context", "instructions", "--run", run),
        ("session", "checkpoint", run, "--title", "t2"),
        ("session", "fork", node, "--goal", "g"),
        ("session", "resume", node),
        ("session", "tree", run),
    ]:
        error = refused(carol, *command)
        assert error["details"]["this_machine_workspace_ids"] == [], command
        assert error["details"]["workspace_id"] == "widget-ana"
        assert error["hint"]["this_machine_workspace_id"] is None
    assert counts(url) == before
    said = carol("context", "instructions", "--run", run)
    assert "rutter workspace register ID PATH" in said.stderr
    # Its records are still the project's, readable from anywhere.
    assert carol.json("run", "show", run)["run_id"] == run


def test_records_of_another_machine_are_written_through_this_machines_registration(
    machines: dict[str, Any],
) -> None:
    bo: Cli = machines["bo"]
    run, node = machines["run"], machines["node"]
    checkpoint = bo.json("session", "checkpoint", run, "--title", "on bo")
    assert checkpoint["run_id"] == run
    resumed = bo.json("session", "resume", node)
    assert bo.json("run", "show", resumed["run_id"])["workspace_id"] == "widget-bo"


def test_an_unclaimed_registration_is_read_as_it_is(machines: dict[str, Any]) -> None:
    """A registration from before machines (no machine yet) is read where it is named, as
    before: the first machine that looks its root up takes it."""
    bo: Cli = machines["bo"]
    url = machines["url"]
    raw_rows(url, "UPDATE workspaces SET machine_id = NULL WHERE workspace_id = ?", "widget-ana")
    found = bo.json("context", "instructions", "--target", "src/main.py", "--workspace",
                    "widget-ana")  # fmt: skip
    assert found["workspace_id"] == "widget-ana"
    listed = bo.json("workspace", "list")
    marks = {w["workspace_id"]: w["machine"] for w in listed["workspaces"]}
    assert marks["widget-ana"] == "unclaimed"


@pytest.mark.asyncio
async def test_an_agents_tools_refuse_another_machines_files_and_read_its_records(
    machines: dict[str, Any],
) -> None:
    """`rutter mcp` on Bo's machine (in Bo's checkout): the instructions of Ana's registration
    are refused, Bo's are read, and the project's memories are read through Ana's."""
    bo: Cli = machines["bo"]
    async with mcp_client(Env(bo, bo.cwd, {"run_id": machines["run"]})) as client:
        error = await failure(
            client, "effective_instructions", {"target": "main.py", "workspace_id": "widget-ana"}
        )
        mine = await call(
            client, "effective_instructions", {"target": "main.py", "workspace_id": "widget-bo"}
        )
        memories = await call(
            client, "memory_list", {"scope": "project", "workspace_id": "widget-ana"}
        )
    assert error["code"] == "workspace_on_other_machine"
    assert error["details"]["this_machine_workspace_ids"] == ["widget-bo"]
    assert mine["workspace_id"] == "widget-bo"
    assert [m["title"] for m in memories["items"]] == ["Tests"]
