"""`rutter mcp` against hostile input (issue 34), end to end: raw JSON-RPC lines written to the
server process's stdin, and the official SDK's client. A message nested deeper than the one
bound (64) is answered with a typed JSON-RPC error naming the rule, whatever its depth (the SDK
used to drop it without an answer), and the server serves the next call; errors name the field
and the rule, never the value; `effective_instructions`, which appends to a run's audit, is not
annotated read-only."""

from __future__ import annotations

import json
import os
import select
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from mcp import MCPError

from tests.conftest import write_tree
from tests.mcp_client import Env, mcp_client
from tests.testing import Cli

MARK = "Zq-MCP-ECHO-MARK-77"
"""Sent in values (not of an identifier's form): no answer may repeat it."""
DEPTHS = (65, 250, 600, 100_000)
"""Just over the bound; past the SDK's own parser (about 200: it dropped those); and deep
enough to kill a recursive parser."""


@pytest.fixture
def env(tmp_path: Path, workspace_root: Path) -> Env:
    """A workspace with one memory and a run (as `tests.test_mcp`'s)."""
    write_tree(workspace_root, {"AGENTS.md": "root rules\n", "src/a.go": "package a\n"})
    cli = Cli(tmp_path / "home", workspace_root / "src")
    cli.json("workspace", "register", "demo", str(workspace_root))
    cli.json("context", "memory", "create", "--scope", "project", "--workspace", "demo",
             "--title", "Tests", "--content", "run the tests first")  # fmt: skip
    run: dict[str, Any] = cli.json("run", "create", "--workspace", "demo", "--goal", "g")
    return Env(cli, workspace_root, run)


def nested(levels: int) -> Any:
    value: Any = MARK
    for _ in range(levels):
        value = [value]
    return value


def nested_text(levels: int) -> str:
    return "[" * levels + json.dumps(MARK) + "]" * levels


@dataclass
class Raw:
    """`rutter mcp` as a subprocess, spoken to in raw lines."""

    process: subprocess.Popen[bytes]
    buffer: bytes = b""
    answers: list[dict[str, Any]] = field(default_factory=list)

    def send(self, line: str | bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((line.encode() if isinstance(line, str) else line) + b"\n")
        self.process.stdin.flush()

    def request(self, request_id: int, method: str, params: dict[str, Any]) -> None:
        self.send(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method,
                              "params": params}))  # fmt: skip

    def until(self, request_id: int) -> list[dict[str, Any]]:
        """Every answer up to and including the one to `request_id` (a `ping` sent after a
        probe: the server answers in order, so a probe it drops is missing, not awaited)."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + 60
        got: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            while b"\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\n", 1)
                answer = json.loads(line)
                got.append(answer)
                if answer.get("id") == request_id:
                    return got
            ready, _, _ = select.select([fd], [], [], 1)
            if ready:
                chunk = os.read(fd, 1 << 20)
                assert chunk, f"rutter mcp closed its output ({self.process.poll()})"
                self.buffer += chunk
        raise AssertionError(f"no answer to request {request_id}")

    def probe(self, line: str | bytes, ping_id: int) -> list[dict[str, Any]]:
        """What the server answers to `line` before it answers a `ping` sent after it: a line
        refused on reading is answered then (the reading loop answers it before it reads the
        next line), a line it dropped has no answer, so a test never waits for one."""
        self.send(line)
        self.request(ping_id, "ping", {})
        got = self.until(ping_id)
        assert got[-1] == {"jsonrpc": "2.0", "id": ping_id, "result": {}}, got[-1]
        return got[:-1]


@contextmanager
def raw_server(env: Env, stderr: Path) -> Iterator[Raw]:
    with stderr.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "rutter", "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=sink,
            env={**os.environ, "RUTTER_HOME": str(env.cli.home)},
            cwd=env.root / "src",
        )
    raw = Raw(process)
    try:
        raw.request(1, "initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "0"}})  # fmt: skip
        [initialized] = raw.until(1)
        assert initialized["result"]["serverInfo"]["name"] == "rutter"
        raw.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        yield raw
    finally:
        assert process.stdin is not None
        process.stdin.close()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()


def call_line(request_id: int, arguments_text: str, tool: str = "memory_list") -> str:
    return (
        f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "tools/call", '
        f'"params": {{"name": "{tool}", "arguments": {{"workspace_id": {arguments_text}}}}}}}'
    )


def too_deep(answer: dict[str, Any], request_id: int | str | None) -> None:
    assert answer["id"] == request_id, answer
    error = answer["error"]
    assert error["code"] == -32600
    assert error["data"] == {
        "code": "nesting_too_deep",
        "message": "the message nests objects and arrays more than 64 levels deep",
        "details": {"max_depth": 64},
    }
    assert MARK not in json.dumps(answer)


# -- nesting, raw stdio -------------------------------------------------------------------------


@pytest.mark.parametrize("levels", DEPTHS)
def test_a_call_nested_too_deep_is_answered_and_the_server_goes_on(
    env: Env, tmp_path: Path, levels: int
) -> None:
    log = tmp_path / "mcp.log"
    with raw_server(env, log) as raw:
        [answer] = raw.probe(call_line(7, nested_text(levels)), ping_id=8)
        too_deep(answer, 7)
        # A string ID is recovered too, wherever it stands among the members.
        line = (
            f'{{"jsonrpc": "2.0", "method": "tools/call", "params": {{"name": "memory_list", '
            f'"arguments": {{"x": {nested_text(levels)}}}}}, "id": "call-\\"9\\""}}'
        )
        [answer] = raw.probe(line, ping_id=10)
        too_deep(answer, 'call-"9"')
        # A notification that deep has no answer (JSON-RPC), and breaks nothing.
        notification = json.dumps(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"x": 0}}
        ).replace("0}}", nested_text(levels) + "}}")
        assert raw.probe(notification, ping_id=11) == []
        # The server still serves.
        raw.request(
            12, "tools/call", {"name": "memory_list", "arguments": {"workspace_id": "demo"}}
        )
        listed = raw.until(12)[-1]
        items = listed["result"]["structuredContent"]["items"]
        assert [m["title"] for m in items] == ["Tests"]
    stderr = log.read_text(encoding="utf-8")
    assert "Traceback" not in stderr
    assert MARK not in stderr
    assert stderr.count("nested more than 64 levels deep") == 3, stderr


def test_within_the_bound_a_call_is_served_as_before(env: Env, tmp_path: Path) -> None:
    with raw_server(env, tmp_path / "mcp.log") as raw:
        raw.send(call_line(7, nested_text(58)))
        [answer] = raw.until(7)  # a tool call is served concurrently: awaited by its ID
    # Parsed, and refused by the tool's schema as a tool error, not by the bound.
    assert answer["id"] == 7
    assert answer["result"]["isError"] is True
    assert answer["result"]["structuredContent"]["error"]["code"] == "invalid_params"


def test_lines_that_are_not_json_rpc_are_answered_not_dropped(env: Env, tmp_path: Path) -> None:
    log = tmp_path / "mcp.log"
    with raw_server(env, log) as raw:
        [garbage] = raw.probe(f"{{not json {MARK}", ping_id=20)
        [batch] = raw.probe(json.dumps([{"jsonrpc": "2.0", "id": 5, "method": MARK}]), ping_id=21)
        [no_method] = raw.probe(json.dumps({"jsonrpc": "2.0", "id": 6, "params": MARK}), 22)
    assert (garbage["id"], garbage["error"]["code"]) == (None, -32700)
    assert garbage["error"]["data"]["code"] == "invalid_json"
    assert (batch["id"], batch["error"]["code"]) == (None, -32600)
    assert (no_method["id"], no_method["error"]["code"]) == (6, -32600)
    assert no_method["error"]["data"]["code"] == "invalid_request"
    assert MARK not in json.dumps([garbage, batch, no_method])
    assert "Traceback" not in log.read_text(encoding="utf-8")


def test_numbers_out_of_range_are_typed_errors_over_raw_stdio(env: Env, tmp_path: Path) -> None:
    log = tmp_path / "mcp.log"
    with raw_server(env, log) as raw:
        # More digits than the SDK's parser takes: it dropped the call without an answer.
        line = call_line(30, "1", tool="memory_list").replace(
            '"workspace_id": 1', '"limit": ' + "7" * 5000
        )
        [digits] = raw.probe(line, ping_id=31)
        # Parsed by the SDK (as infinity): refused by the tool, typed.
        raw.send(call_line(32, "1").replace('"workspace_id": 1', '"limit": 1e400'))
        infinite = raw.until(32)[-1]
    assert (digits["id"], digits["error"]["code"]) == (30, -32602)
    assert digits["error"]["data"]["code"] == "number_out_of_range"
    assert "7777" not in json.dumps(digits)
    assert infinite["result"]["isError"] is True
    assert infinite["result"]["structuredContent"]["error"]["code"] == "number_out_of_range"
    assert "Traceback" not in log.read_text(encoding="utf-8")


# -- nesting, the SDK's client ------------------------------------------------------------------


@pytest.mark.asyncio
async def test_the_sdk_client_gets_a_typed_error_for_a_call_too_deep(env: Env) -> None:
    async with mcp_client(env) as client:
        for levels in (65, 190, 250):  # 250: past the SDK server's parser, which dropped it
            with pytest.raises(MCPError) as raised:
                await client.call_tool(
                    "memory_list", {"workspace_id": nested(levels)}, read_timeout_seconds=30
                )
            assert raised.value.error.code == -32600, levels
            assert raised.value.error.data["code"] == "nesting_too_deep"
            assert MARK not in str(raised.value.error)
        listed = await client.call_tool("memory_list", {"workspace_id": "demo"})
    assert not listed.is_error
    assert [m["title"] for m in (listed.structured_content or {})["items"]] == ["Tests"]


# -- no echo ------------------------------------------------------------------------------------


async def refusal(client: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(name, arguments)
    assert result.is_error, result
    text = json.dumps(result.structured_content)
    assert MARK not in text, text
    assert MARK.lower() not in text.lower()
    error: dict[str, Any] = result.structured_content["error"]
    return error


@pytest.mark.asyncio
async def test_errors_name_the_field_and_the_rule_never_the_value(env: Env) -> None:
    run = env.run["run_id"]
    async with mcp_client(env) as client:
        unknown_run = await refusal(client, "checkpoint_create", {"run_id": MARK, "title": "t"})
        scope = await refusal(client, "memory_list", {"scope": MARK})
        typed = await refusal(client, "memory_list", {"limit": MARK})
        limit = await refusal(client, "memory_list", {"limit": 10**30})
        small = await refusal(client, "memory_list", {"limit": 10**6})
        unknown = await refusal(client, "memory_list", {"workspace_id": "demo", "actor": MARK})
        camel = await refusal(client, "context_pin_propose", {"runId": run, "text": MARK})
        secret_key = await refusal(client, "memory_list", {"AKIAQ3EGRTY5MZ7XKP2L": 1})
        long_key = await refusal(client, "memory_list", {"k" * 33: 1})
        tool = await refusal(client, "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8", {})
        missing = await refusal(client, "effective_instructions", {"target": f"../{MARK}/x"})
        outside = await refusal(client, "effective_instructions", {"target": f"../../{MARK}"})
    assert unknown_run["code"] == "run_not_found"
    assert scope["code"] == "invalid_scope"
    assert (typed["code"], limit["code"]) == ("invalid_params", "number_out_of_range")
    assert "'limit'" in typed["message"]
    assert "1000000000000000000000000000000" not in json.dumps(limit)
    assert limit["details"] == {"min_integer": -(2**63), "max_integer": 2**63 - 1}
    assert small["code"] == "invalid_limit"
    # An unknown key of an identifier's form is named (a key is not content), its value never;
    # a key that could hold a secret (too long, or shaped like one) is only "unknown".
    assert unknown["code"] == "invalid_params"
    assert "unknown field 'actor'" in unknown["message"]
    assert "unknown field 'runId'" in camel["message"]
    assert "AKIA" not in json.dumps(secret_key)
    assert "an unknown field" in secret_key["message"]
    assert secret_key["details"]["problems"] == [{"field": None, "rule": "unknown_field"}]
    assert {"field": "limit", "rule": "int_type"} in typed["details"]["problems"]
    assert "k" * 33 not in json.dumps(long_key)
    assert tool["code"] == "unknown_tool"
    assert "ghp_" not in json.dumps(tool)
    # A path is named by none of its parts (the error used to name the missing directory).
    assert (missing["code"], outside["code"]) == ("not_found", "invalid_target")


# -- annotations --------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_a_tool_that_appends_to_the_audit_is_not_annotated_read_only(env: Env) -> None:
    def assemblies() -> int:
        conn = sqlite3.connect(env.cli.home / "rutter.db")
        try:
            return int(conn.execute("SELECT count(*) FROM context_assemblies").fetchone()[0])
        finally:
            conn.close()

    async with mcp_client(env) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        before = assemblies()
        await client.call_tool("effective_instructions", {"run_id": env.run["run_id"]})
        await client.call_tool("effective_instructions", {"run_id": env.run["run_id"]})
    assert assemblies() == before + 2  # each call appends a row: not read-only, not idempotent
    hints = tools["effective_instructions"].annotations
    assert hints is not None
    assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint) == (
        False, False, False,
    )  # fmt: skip
    for name in ("memory_list", "history_search", "history_read"):
        read_only = tools[name].annotations
        assert read_only is not None
        assert read_only.read_only_hint is True, name
    for name in ("checkpoint_create", "context_report", "context_pin_propose"):
        writer = tools[name].annotations
        assert writer is not None
        assert (writer.read_only_hint, writer.destructive_hint) == (False, False), name
