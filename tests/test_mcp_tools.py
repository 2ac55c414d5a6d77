"""The MCP tools as a model meets them (issue 32), through the official SDK's stdio client on
`rutter mcp` as a subprocess: every tool declares an input schema and an output schema, and
every structured result validates against its tool's output schema; the server's instructions
name every tool."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]  # the SDK's own
from mcp import Client

from tests.test_mcp import TOOLS, Env, call, env, mcp_client

__all__ = ["env"]  # the fixture, shared with tests.test_mcp

pytestmark = [pytest.mark.asyncio]


async def schemas_of(client: Client) -> dict[str, dict[str, Any]]:
    """Each tool's output schema, by name."""
    listed = (await client.list_tools()).tools
    schemas = {}
    for tool in listed:
        assert tool.output_schema is not None, tool.name
        schemas[tool.name] = tool.output_schema
    return schemas


def conforms(document: dict[str, Any], schema: dict[str, Any]) -> None:
    errors = [error.message for error in Draft202012Validator(schema).iter_errors(document)]
    assert errors == []


async def test_every_tool_declares_its_input_and_output_schema(env: Env) -> None:
    async with mcp_client(env) as client:
        listed = (await client.list_tools()).tools
    assert {tool.name for tool in listed} == TOOLS
    for tool in listed:
        Draft202012Validator.check_schema(tool.input_schema)
        assert tool.input_schema["type"] == "object", tool.name
        assert tool.output_schema is not None, tool.name
        Draft202012Validator.check_schema(tool.output_schema)
        assert tool.output_schema["type"] == "object", tool.name
    outputs = {tool.name: tool.output_schema or {} for tool in listed}
    # From the operations' result models: their fields, required as the documents carry them.
    assert {"proposal_id", "status", "choice", "reply"} <= set(
        outputs["context_pin_propose"]["properties"]
    )
    assert {"items"} <= set(outputs["memory_list"]["required"])
    # The answer to effective_instructions depends on its arguments: one of four documents.
    assert len(outputs["effective_instructions"]["anyOf"]) == 4


async def test_every_structured_result_matches_its_output_schema(env: Env) -> None:
    run_id = env.run["run_id"]
    async with mcp_client(env) as client:
        schemas = await schemas_of(client)
        answers = {
            "effective_instructions": [
                await call(client, "effective_instructions", {"target": "a.go"}),
                await call(client, "effective_instructions", {"target": "a.go", "agent": "codex"}),
                await call(client, "effective_instructions", {"target": "a.go", "agent": "all"}),
            ],
            "memory_list": [await call(client, "memory_list", {"workspace_id": "demo"})],
            "checkpoint_create": [
                await call(client, "checkpoint_create", {"run_id": run_id, "title": "t"})
            ],
            "context_pin_propose": [
                await call(client, "context_pin_propose", {"run_id": run_id, "text": "Be brief."})
            ],
        }
        assembly = await call(client, "effective_instructions", {"run_id": run_id})
        answers["effective_instructions"].append(assembly)
        delivered = [entry["id"] for entry in assembly["entries"] if entry["text"] is not None]
        answers["context_report"] = [
            await call(
                client,
                "context_report",
                {"assembly_id": assembly["assembly_id"], "followed": delivered},
            )
        ]
        hits = await call(client, "history_search", {"query": "tests", "workspace_id": "demo"})
        answers["history_search"] = [hits]
        answers["history_read"] = [
            await call(client, "history_read", {"handle": hits["hits"][0]["handle"]})
        ]
    assert set(answers) == TOOLS  # every tool answered at least once
    for name, documents in answers.items():
        for document in documents:
            conforms(document, schemas[name])


async def test_the_instructions_name_every_tool(env: Env) -> None:
    async with mcp_client(env) as client:
        text = client.instructions
        listed = (await client.list_tools()).tools
    assert text is not None
    for tool in listed:
        assert f"- {tool.name}: " in text, tool.name
