"""`rutter mcp` end to end (issue 15, docs/reference/surfaces.md): the official SDK's stdio client
drives the server as a subprocess, as an agent does. It lists the tools (annotations mark the
read-only ones), calls each and gets the CLI's `--json` documents, fails with tool errors that
carry the error document; a proposal made through it reaches a language server's client as
`rutter/pinProposalsChanged`, is answered from the CLI (a real process) and its pin is listed;
and no path through the MCP server writes a memory or a pin."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from typing import Any

import pytest

from tests.lsp_client import (
    CLIENTS,
    capabilities,
    effective,
    folder,
    request,
    start,
    stop,
    uri,
    wait_until,
)
from tests.mcp_client import (
    GITHUB,
    READ_ONLY,
    SENTINEL,
    TOOLS,
    Env,
    call,
    env,
    failure,
    mcp_client,
    without_times,
)

__all__ = ["env"]  # the fixture

pytestmark = [pytest.mark.asyncio]


async def test_tools_are_listed_with_their_annotations_and_schemas(env: Env) -> None:
    async with mcp_client(env) as client:
        listed = (await client.list_tools()).tools
    assert {tool.name for tool in listed} == TOOLS
    for tool in listed:
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is (tool.name in READ_ONLY), tool.name
        if tool.name not in READ_ONLY:
            assert tool.annotations.destructive_hint is False
        assert tool.input_schema["type"] == "object"
        assert tool.input_schema["additionalProperties"] is False  # unknown fields refused
        assert tool.description
    schemas = {tool.name: tool.input_schema for tool in listed}
    assert set(schemas["context_pin_propose"]["required"]) == {"text"}
    assert set(schemas["checkpoint_create"]["required"]) == {"run_id", "title"}


async def test_each_tool_answers_with_the_cli_document(env: Env) -> None:
    async with mcp_client(env) as client:
        # Relative to the server's directory (src/), as the CLI's targets are to its own.
        found = await call(client, "effective_instructions", {"target": "a.go"})
        memories = await call(client, "memory_list", {"workspace_id": "demo"})
        node = await call(
            client, "checkpoint_create", {"run_id": env.run["run_id"], "title": "by the agent"}
        )
        proposal = await call(
            client,
            "context_pin_propose",
            {"run_id": env.run["run_id"], "text": f"Never print {GITHUB}."},
        )
    # effective_instructions: the server's directory (src/) names the workspace, as the CLI's
    # working directory does.
    cli_found = env.cli.json("context", "instructions", "--target", "a.go")
    assert without_times(found) == without_times(cli_found)
    assert [s["path"] for s in found["sources"]] == ["AGENTS.md", "src/CLAUDE.md"]
    assert memories == env.cli.json("context", "memory", "list", "--workspace", "demo")
    assert [m["title"] for m in memories["items"]] == ["Tests"]
    assert (node["kind"], node["created_by"], node["run_id"]) == (
        "checkpoint", "mcp", env.run["run_id"],
    )  # fmt: skip
    assert node == env.cli.json("session", "show", node["node_id"])
    assert proposal["proposal_id"].startswith("prop_")
    assert (proposal["status"], proposal["proposed_by"], proposal["thread_id"]) == (
        "pending", "mcp", env.run["thread_id"],
    )  # fmt: skip
    assert proposal["text"] == "Never print [REDACTED:github_token]."
    listed = env.cli.json("context", "pin", "proposals")["proposals"]
    assert [p["proposal_id"] for p in listed] == [proposal["proposal_id"]]
    assert env.count("pins") == 0  # a proposal never pins by itself


async def test_failures_are_tool_errors_with_the_error_document(env: Env) -> None:
    async with mcp_client(env) as client:
        unknown_run = await failure(
            client, "checkpoint_create", {"run_id": "run_01M8Y3HJTQYDNPR8CJ56SS1T0B", "title": "t"}
        )
        extra = await failure(client, "memory_list", {"workspace_id": "demo", "content": SENTINEL})
        claimed = await failure(
            client,
            "context_pin_propose",
            {"run_id": env.run["run_id"], "text": "x", "actor": "cli"},
        )
        escaped = await failure(client, "effective_instructions", {"target": "../../outside.go"})
        other = env.cli.json("run", "create", "--workspace", "demo", "--goal", "another")
        mismatched = await failure(
            client,
            "context_pin_propose",
            {"run_id": env.run["run_id"], "thread_id": other["thread_id"], "text": "x"},
        )
    assert unknown_run["code"] == "run_not_found"
    assert (extra["code"], claimed["code"]) == ("invalid_params", "invalid_params")
    # Refused as unknown and named, as a short identifier with no secret in it is; the value
    # never (tests/test_mcp_hardening.py: keys that could hold a secret are not named).
    assert "unknown field 'content'" in extra["message"]
    assert "unknown field 'actor'" in claimed["message"]
    assert claimed["details"]["problems"] == [{"field": "actor", "rule": "unknown_field"}]
    assert SENTINEL not in str(extra)
    assert "'cli'" not in claimed["message"]
    assert escaped["code"] == "invalid_target"
    assert mismatched["code"] == "thread_run_mismatch"
    assert env.count("pin_proposals") == 0


async def test_no_mcp_path_writes_a_memory_or_a_pin(env: Env) -> None:
    memories, pins = env.count("memories"), env.count("pins")
    attempts: list[tuple[str, dict[str, Any]]] = [
        ("memory_create", {"scope": "user", "title": "t", "content": SENTINEL}),
        ("memory_edit", {"id": "mem_x", "version": 1, "content": SENTINEL}),
        ("memory_delete", {"id": "mem_x", "version": 1}),
        ("context_pin_add", {"thread_id": env.run["thread_id"], "text": SENTINEL}),
        ("memory_list", {"scope": "user", "title": "t", "content": SENTINEL}),
        ("memory_list", {"create": True, "content": SENTINEL}),
        ("context_pin_propose", {"run_id": env.run["run_id"], "text": "x", "pin": True}),
        ("context_pin_propose", {"run_id": env.run["run_id"], "text": "x", "choice": "pin"}),
        ("checkpoint_create", {"run_id": env.run["run_id"], "title": "t", "memory": SENTINEL}),
        ("effective_instructions", {"target": "a.go", "remember": SENTINEL}),
    ]
    async with mcp_client(env) as client:
        codes = [(await failure(client, name, arguments))["code"] for name, arguments in attempts]
        listed = (await client.list_tools()).tools
    assert codes == ["unknown_tool"] * 4 + ["invalid_params"] * 6
    writers = {tool.name for tool in listed if "memory" in tool.name or "pin" in tool.name}
    # Reads and a proposal.
    assert writers == {"memory_list", "context_pin_propose", "context_pin_proposals"}
    assert (env.count("memories"), env.count("pins")) == (memories, pins)
    conn = sqlite3.connect(env.cli.home / "rutter.db")
    try:
        stored = json.dumps(conn.execute("SELECT * FROM memories").fetchall())
    finally:
        conn.close()
    assert SENTINEL not in stored


@pytest.mark.parametrize("client_name", CLIENTS)
async def test_a_proposal_reaches_the_editor_and_is_answered_from_the_cli(
    env: Env, client_name: str
) -> None:
    lsp = await start(env.cli.home, capabilities(client_name), [folder(env.root)])
    try:
        await effective(lsp, uri(env.root / "AGENTS.md"))  # the folder is served
        async with mcp_client(env) as client:
            proposal = await call(
                client,
                "context_pin_propose",
                {"thread_id": env.run["thread_id"], "text": "Keep the API stable."},
            )
        await wait_until(
            lambda: ["demo"] in lsp.pin_proposal_changes, what="rutter/pinProposalsChanged"
        )
        pending = await request(lsp, "rutter/pin/proposals", {"workspace_id": "demo"})
        assert [p["proposal_id"] for p in pending["proposals"]] == [proposal["proposal_id"]]

        heard = lsp.pin_proposal_changes.count(["demo"])
        answered = env.cli.json("context", "pin", "answer", proposal["proposal_id"], "pin")
        pin = answered["pin"]
        assert (pin["text"], pin["proposal_id"], pin["created_by"]) == (
            "Keep the API stable.", proposal["proposal_id"], "cli",
        )  # fmt: skip
        listed = env.cli.json("context", "pin", "list", env.run["thread_id"])
        assert [p["pin_id"] for p in listed["pins"]] == [pin["pin_id"]]
        by_run = env.cli.json("context", "pin", "list", env.run["run_id"])
        assert by_run["pins"] == listed["pins"]
        assert (await request(lsp, "rutter/pin/list", {"run_id": env.run["run_id"]}))["pins"] == (
            listed["pins"]
        )
        # The answer empties the workspace's pending set: the editor hears of that too.
        await wait_until(
            lambda: lsp.pin_proposal_changes.count(["demo"]) > heard, what="a second change"
        )
        again = env.cli.json("context", "pin", "answer", proposal["proposal_id"], "discuss", code=4)
        assert again["error"]["code"] == "conflict"
    finally:
        await stop(lsp)


async def test_the_command_line_imports_no_mcp_sdk_until_rutter_mcp_runs() -> None:
    """Cold start: other commands do not pay for the SDK (a count of modules, not a time)."""
    probe = (
        "import sys\n"
        "from rutter_cli.main import main\n"
        "main(['--help'])\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types', "
        "'rutter_mcp', 'starlette', 'uvicorn')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip().splitlines()[-1] == "[]"
