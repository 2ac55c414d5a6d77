"""`receipt_read` through `rutter mcp` (issue 29), driven by the official SDK's stdio client as
an agent drives it: the receipt its assembled context holds pages back the whole tool result,
the same document as the CLI's, and a receipt outside the run's reach returns no text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write_tree
from tests.mcp_client import Env, call, failure, mcp_client
from tests.testing import Cli

pytestmark = [pytest.mark.asyncio]


@pytest.fixture
def env(tmp_path: Path, workspace_root: Path) -> Env:
    write_tree(workspace_root, {"AGENTS.md": "root rules\n", "src/a.go": "package a\n"})
    cli = Cli(tmp_path / "home", workspace_root / "src")
    cli.json("workspace", "register", "demo", str(workspace_root))
    run: dict[str, Any] = cli.json("run", "create", "--workspace", "demo", "--goal", "g")
    return Env(cli, workspace_root, run)


async def test_an_agent_reads_its_receipt_back(env: Env) -> None:
    thread = env.run["thread_id"]
    output = "".join(f"collected item {n}\n" for n in range(400))
    env.cli.json("session", "message", "add", thread, "--role", "tool", "--text",
                 f"[tool result call-9]\n{output}")  # fmt: skip
    async with mcp_client(env) as client:
        assembled = await call(client, "effective_instructions", {"run_id": env.run["run_id"]})
        [receipt] = [e for e in assembled["entries"] if e["kind"] == "receipt"]
        first = await call(client, "receipt_read", {"receipt_id": receipt["id"]})
        second = await call(client, "receipt_read", {"receipt_id": receipt["id"], "page": 2})
        other = env.cli.json("run", "create", "--workspace", "demo", "--goal", "other")
        forged = receipt["id"].rsplit("_", 1)[0] + "_" + other["run_id"].removeprefix("run_")
        refused = await failure(client, "receipt_read", {"receipt_id": forged})
    assert first == env.cli.json("session", "receipt", "read", receipt["id"])
    assert (first["page"], first["pages"]) == (1, 2)
    assert first["text"] + second["text"] == f"[tool result call-9]\n{output}"
    assert refused["code"] == "receipt_not_found"
    assert "text" not in refused
