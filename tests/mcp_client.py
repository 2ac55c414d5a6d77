"""Shared helpers of the MCP server's end-to-end tests (this module holds no tests): a store
with a workspace and a run (`env`, a fixture), the server as a real process (`mcp_client`), and
a tool's answer or refusal as its document (`call`, `failure`)."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.conftest import write_tree
from tests.testing import Cli, raw_rows

GITHUB = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"
SENTINEL = "sentinel-mcp-argument-41d9"
TOOLS = {
    "effective_instructions", "context_pin_propose", "checkpoint_create", "memory_list",
    "history_search", "history_read", "context_report", "context_pin_proposals", "receipt_read",
}  # fmt: skip
READ_ONLY = {
    "memory_list", "history_search", "history_read", "context_pin_proposals", "receipt_read",
}  # fmt: skip
"""Not `effective_instructions`: with `run_id` it appends a row to the run's audit."""


@dataclass
class Env:
    cli: Cli
    root: Path
    run: dict[str, Any]

    def count(self, table: str) -> int:
        """Rows in `table` of the store, read behind the server's back (`raw_rows`, either
        engine; never a new empty file)."""
        return int(raw_rows(self.cli.store_url, f"SELECT count(*) FROM {table}")[0][0])


@pytest.fixture
def env(tmp_path: Path, workspace_root: Path) -> Env:
    write_tree(
        workspace_root,
        {"AGENTS.md": "root rules\n", "src/CLAUDE.md": "src rules\n", "src/a.go": "package a\n"},
    )
    cli = Cli(tmp_path / "home", workspace_root / "src")
    cli.json("workspace", "register", "demo", str(workspace_root))
    cli.json("context", "memory", "create", "--scope", "project", "--workspace", "demo",
             "--title", "Tests", "--content", "run the tests first")  # fmt: skip
    run: dict[str, Any] = cli.json("run", "create", "--workspace", "demo", "--goal", "g")
    return Env(cli, workspace_root, run)


@asynccontextmanager
async def mcp_client(env: Env, extra_env: dict[str, str] | None = None) -> AsyncIterator[Client]:
    """The SDK's client on `rutter mcp` started by it in the workspace's `src/` (as an agent
    starts its MCP servers in the project), on the test's store (the CLI's home and its
    `extra_env`, e.g. RUTTER_DATABASE_URL; `extra_env`: more of the server's environment)."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "rutter", "mcp"],
        env={"RUTTER_HOME": str(env.cli.home), **env.cli.extra_env, **(extra_env or {})},
        cwd=env.root / "src",
    )
    async with Client(params, read_timeout_seconds=60) as client:
        yield client


async def call(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(name, arguments)
    assert not result.is_error, result
    document = result.structured_content
    assert isinstance(document, dict)
    [text] = result.content
    assert json.loads(getattr(text, "text", "")) == document  # the same document, as text
    return document


async def failure(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(name, arguments)
    assert result.is_error, result
    document = result.structured_content
    assert isinstance(document, dict)
    assert set(document) == {"error"}
    assert SENTINEL not in json.dumps(document)
    error: dict[str, Any] = document["error"]
    return error


def without_times(document: dict[str, Any]) -> dict[str, Any]:
    """A snapshot without its load times (each discovery has its own)."""
    sources = [{k: v for k, v in s.items() if k != "loaded_at"} for s in document["sources"]]
    return {**{k: v for k, v in document.items() if k != "loaded_at"}, "sources": sources}
