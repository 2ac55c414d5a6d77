"""The MCP tools as a model meets them (issue 32), through the official SDK's stdio client on
`rutter mcp` as a subprocess: every tool declares an input schema and an output schema, and
every structured result validates against its tool's output schema; a thread and a run given
together are accepted when the run is the thread's and refused (`thread_run_mismatch`) when
not; an agent reads back its own proposals and the person's answers, and nobody else's; the
server's instructions name every tool."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]  # the SDK's own
from mcp import Client

from tests.mcp_client import SENTINEL, TOOLS, Env, call, env, failure, mcp_client

__all__ = ["env"]  # the fixture, from tests.mcp_client

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
        answers["context_pin_proposals"] = [
            await call(client, "context_pin_proposals", {"run_id": run_id})
        ]
        output = "".join(f"collected item {n}\n" for n in range(400))
        env.cli.json("session", "message", "add", env.run["thread_id"], "--role", "tool",
                     "--text", f"[tool result call-1]\n{output}")  # fmt: skip
        assembly = await call(client, "effective_instructions", {"run_id": run_id})
        answers["effective_instructions"].append(assembly)
        [receipt] = [entry for entry in assembly["entries"] if entry["kind"] == "receipt"]
        answers["receipt_read"] = [
            await call(client, "receipt_read", {"receipt_id": receipt["id"]})
        ]
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


async def test_a_thread_and_its_run_are_accepted_together_and_a_mismatch_refused(
    env: Env,
) -> None:
    run = env.run
    other = env.cli.json("run", "create", "--workspace", "demo", "--goal", "another")
    async with mcp_client(env) as client:
        both = await call(
            client,
            "context_pin_propose",
            {"thread_id": run["thread_id"], "run_id": run["run_id"], "text": "Keep it small."},
        )
        mismatched = await failure(
            client,
            "context_pin_propose",
            {"thread_id": other["thread_id"], "run_id": run["run_id"], "text": SENTINEL},
        )
        neither = await failure(client, "context_pin_propose", {"text": SENTINEL})
    assert (both["thread_id"], both["run_id"], both["status"]) == (
        run["thread_id"], run["run_id"], "pending",
    )  # fmt: skip
    assert mismatched["code"] == "thread_run_mismatch"
    assert run["run_id"] not in mismatched["message"]  # the IDs sent are not repeated
    assert other["thread_id"] not in mismatched["message"]
    assert neither["code"] == "thread_or_run"
    assert env.count("pin_proposals") == 1  # the refused ones stored nothing


async def test_an_agent_reads_its_own_proposals_and_how_each_was_answered(env: Env) -> None:
    run = env.run
    async with mcp_client(env) as client:
        first = await call(
            client, "context_pin_propose", {"run_id": run["run_id"], "text": "Use tabs."}
        )
        second = await call(
            client, "context_pin_propose", {"run_id": run["run_id"], "text": "Ship daily."}
        )
        third = await call(
            client, "context_pin_propose", {"run_id": run["run_id"], "text": "Test first."}
        )
        pending = await call(client, "context_pin_proposals", {"run_id": run["run_id"]})
        env.cli.json("context", "pin", "answer", first["proposal_id"], "pin")
        env.cli.json("context", "pin", "answer", second["proposal_id"], "discuss", "--text",
                     "not every day")  # fmt: skip
        listed = await call(
            client,
            "context_pin_proposals",
            {"thread_id": run["thread_id"], "run_id": run["run_id"]},
        )
        answered = await call(
            client, "context_pin_proposals", {"thread_id": run["thread_id"], "status": "answered"}
        )
        waiting = await call(
            client, "context_pin_proposals", {"thread_id": run["thread_id"], "status": "pending"}
        )
        other = env.cli.json("run", "create", "--workspace", "demo", "--goal", "another")
        elsewhere = await call(client, "context_pin_proposals", {"run_id": other["run_id"]})
        mismatched = await failure(
            client,
            "context_pin_proposals",
            {"thread_id": other["thread_id"], "run_id": run["run_id"]},
        )
        bad_status = await failure(
            client, "context_pin_proposals", {"run_id": run["run_id"], "status": "rejected"}
        )
        listed_tools = (await client.list_tools()).tools
    ids = [first["proposal_id"], second["proposal_id"], third["proposal_id"]]
    assert [p["status"] for p in pending["proposals"]] == ["pending"] * 3
    assert [p["proposal_id"] for p in listed["proposals"]] == ids
    by_id = {p["proposal_id"]: p for p in listed["proposals"]}
    pinned, discussed, open_one = (by_id[i] for i in ids)
    assert (pinned["status"], pinned["choice"], pinned["answered_by"]) == ("answered", "pin", "cli")
    assert pinned["pin_id"].startswith("pin_")
    assert (discussed["choice"], discussed["reply"], discussed["pin_id"]) == (
        "discuss", "not every day", None,
    )  # fmt: skip
    assert (open_one["status"], open_one["choice"]) == ("pending", None)
    assert [p["proposal_id"] for p in answered["proposals"]] == ids[:2]
    assert [p["proposal_id"] for p in waiting["proposals"]] == ids[2:]
    assert elsewhere == {"proposals": [], "has_more": False}  # another thread's: none
    assert mismatched["code"] == "thread_run_mismatch"
    assert bad_status["code"] == "invalid_params"
    [tool] = [tool for tool in listed_tools if tool.name == "context_pin_proposals"]
    assert tool.input_schema["properties"]["status"]["anyOf"][0]["enum"] == ["pending", "answered"]


def without_bodies(document: dict[str, Any]) -> dict[str, Any]:
    """A snapshot without what differs between answers: load times and bodies."""
    dropped = {"loaded_at", "content", "content_cut"}
    sources = [{k: v for k, v in s.items() if k not in dropped} for s in document["sources"]]
    return {**{k: v for k, v in document.items() if k != "loaded_at"}, "sources": sources}


async def test_instruction_sources_without_bodies_or_bounded(env: Env) -> None:
    (env.root / "src" / "deep").mkdir()
    (env.root / "src" / "deep" / "AGENTS.md").write_text("é" * 10, encoding="utf-8")
    target = {"target": "deep/b.go"}
    async with mcp_client(env) as client:
        schema = (await schemas_of(client))["effective_instructions"]
        full = await call(client, "effective_instructions", target)
        bare = await call(client, "effective_instructions", {**target, "include_content": False})
        bounded = await call(client, "effective_instructions", {**target, "max_content_bytes": 5})
        roomy = await call(client, "effective_instructions", {**target, "max_content_bytes": 1000})
        viewed = await call(
            client,
            "effective_instructions",
            {**target, "agent": "codex", "include_content": False},
        )
        refusals = [
            await failure(client, "effective_instructions", arguments)
            for arguments in (
                {**target, "include_content": False, "max_content_bytes": 5},
                {**target, "max_content_bytes": 0},
                {**target, "max_content_bytes": 1_048_577},
                {**target, "include_content": "no"},
                {"run_id": env.run["run_id"], "include_content": False},
                {"run_id": env.run["run_id"], "max_content_bytes": 5},
            )
        ]
        listed = (await client.list_tools()).tools
    # By default every body, whole, and no word of cutting (the answer is unchanged).
    contents = {s["path"]: s["content"] for s in full["sources"]}
    assert contents == {
        "AGENTS.md": "root rules\n", "src/CLAUDE.md": "src rules\n", "src/deep/AGENTS.md": "é" * 10,
    }  # fmt: skip
    assert all("content_cut" not in s for s in full["sources"])
    # Without bodies: the same sources (paths, sizes, digests, why), no text, the cut said.
    assert without_bodies(bare) == without_bodies(full)
    assert bare["fingerprint"] == full["fingerprint"]
    for source in bare["sources"]:
        lost = len(contents[source["path"]].encode("utf-8"))
        assert (source["content"], source["content_cut"]) == (
            "", {"kept_bytes": 0, "lost_bytes": lost},
        )  # fmt: skip
    # Bounded: each longer body cut at a character boundary, with a marker, the cut said.
    assert without_bodies(bounded) == without_bodies(full)
    cut = {s["path"]: s for s in bounded["sources"]}
    assert cut["AGENTS.md"]["content"].startswith("root ")
    assert cut["AGENTS.md"]["content_cut"] == {"kept_bytes": 5, "lost_bytes": 6}
    assert "6 more bytes not shown" in cut["AGENTS.md"]["content"]
    assert cut["src/deep/AGENTS.md"]["content"].startswith("éé\n[")  # 4 of the 5 bytes
    assert cut["src/deep/AGENTS.md"]["content_cut"] == {"kept_bytes": 4, "lost_bytes": 16}
    assert without_bodies(roomy) == without_bodies(full)  # a bound over every body: no cut
    assert all("content_cut" not in s for s in roomy["sources"])
    assert [s["content"] for s in roomy["sources"]] == list(contents.values())
    assert viewed["agent"] == "codex"  # an agent's view carries no bodies: nothing to cut
    assert [error["code"] for error in refusals] == ["invalid_params"] * 6
    for document in (full, bare, bounded, roomy, viewed):
        conforms(document, schema)
    [tool] = [tool for tool in listed if tool.name == "effective_instructions"]
    bound = tool.input_schema["properties"]["max_content_bytes"]["anyOf"][0]
    assert (bound["minimum"], bound["maximum"]) == (1, 1_048_576)
    assert tool.input_schema["properties"]["include_content"]["default"] is True
