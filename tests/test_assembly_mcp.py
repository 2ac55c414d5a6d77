"""`effective_instructions` with `run_id` through `rutter mcp` (issue 16 item 4), driven by the
official SDK's stdio client as an agent drives it: the assembled view with the CLI's document,
recorded in the run's audit as `mcp`, and `context_report`, the agent's report of what it
followed, kept apart; without `run_id` the answer is the effective instructions as before; mixed
or bad arguments are tool errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write_tree
from tests.mcp_client import Env, call, failure, mcp_client, without_times
from tests.testing import Cli

pytestmark = [pytest.mark.asyncio]


@pytest.fixture
def env(tmp_path: Path, workspace_root: Path) -> Env:
    write_tree(workspace_root, {"AGENTS.md": "root rules\n", "src/a.go": "package a\n"})
    cli = Cli(tmp_path / "home", workspace_root / "src")
    cli.json("workspace", "register", "demo", str(workspace_root))
    run: dict[str, Any] = cli.json("run", "create", "--workspace", "demo", "--goal", "g")
    return Env(cli, workspace_root, run)


async def test_the_assembled_view_and_the_unchanged_answer(env: Env) -> None:
    fact = env.cli.json("context", "memory", "create", "--scope", "project", "--workspace",
                        "demo", "--title", "Tests", "--content", "run the tests first")  # fmt: skip
    pin = env.cli.json("context", "pin", "add", env.run["thread_id"], "--text", "stay on main")
    async with mcp_client(env) as client:
        plain = await call(client, "effective_instructions", {"target": "a.go"})
        assembled = await call(
            client, "effective_instructions", {"run_id": env.run["run_id"], "budget": 4096}
        )
        report = await call(
            client,
            "context_report",
            {"assembly_id": assembled["assembly_id"], "followed": ["AGENTS.md"],
             "ignored": [fact["id"]]},
        )  # fmt: skip
        twice = await failure(
            client, "context_report", {"assembly_id": assembled["assembly_id"],
                                       "followed": [pin["pin_id"]]},
        )  # fmt: skip
        claimed = await failure(
            client, "context_report", {"assembly_id": assembled["assembly_id"],
                                       "followed": ["AGENTS.md"], "reported_by": "cli"},
        )  # fmt: skip
    assert without_times(plain) == without_times(
        env.cli.json("context", "instructions", "--target", "a.go")
    )
    assert assembled["protocol_version"] == "context_assembly.v1"
    assert assembled["created_by"] == "mcp"
    assert assembled["budget"]["background"] == 4096
    assert [(e["kind"], e["id"], e["decision"], e["text"]) for e in assembled["entries"]] == [
        ("instruction", "AGENTS.md", "included", "root rules\n"),
        ("pin", pin["pin_id"], "included", "stay on main"),
        ("memory", fact["id"], "included", "run the tests first"),
    ]
    audit = env.cli.json("context", "audit", env.run["run_id"])
    [stored] = audit["assemblies"]
    assert stored["assembly_id"] == assembled["assembly_id"]
    assert stored["created_by"] == "mcp"
    assert stored["fingerprint"] == assembled["fingerprint"]
    assert stored["followed"] == report
    assert (report["followed"], report["ignored"], report["reported_by"]) == (
        ["AGENTS.md"], [fact["id"]], "mcp",
    )  # fmt: skip
    assert (twice["code"], claimed["code"]) == ("conflict", "invalid_params")
    assert env.count("context_assemblies") == 1


async def test_mixed_or_bad_arguments_are_tool_errors(env: Env) -> None:
    async with mcp_client(env) as client:
        both = await failure(
            client, "effective_instructions", {"run_id": env.run["run_id"], "target": "a.go"}
        )
        neither = await failure(client, "effective_instructions", {})
        budget_alone = await failure(client, "effective_instructions", {"target": "a.go",
                                                                        "budget": 5})  # fmt: skip
        zero = await failure(
            client, "effective_instructions", {"run_id": env.run["run_id"], "budget": 0}
        )
        missing = await failure(
            client, "effective_instructions", {"run_id": "run_01M8Y3HJTQYDNPR8CJ56SS1T0B"}
        )
        # An agent's view is of a target: a run's assembly has no agent (issue 20 beside 16).
        agent_and_run = await failure(
            client, "effective_instructions", {"run_id": env.run["run_id"], "agent": "codex"}
        )
    assert [e["code"] for e in (both, neither, budget_alone, agent_and_run)] == [
        "invalid_params"
    ] * 4
    assert (zero["code"], missing["code"]) == ("invalid_budget", "run_not_found")
    assert env.count("context_assemblies") == 0
