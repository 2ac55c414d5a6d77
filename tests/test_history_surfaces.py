"""History search and read on every surface (issue 16, docs/reference/history.md and
docs/reference/surfaces.md): the CLI as real processes (exit codes 4 and 5, the same documents as
the app), the language server's `rutter/historySearch` and `rutter/historyRead` through pytest-lsp
for both client capability sets, and the MCP tools `history_search` / `history_read` through the
SDK's stdio client."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from rutter_core.app.continuity import AddMessageParams, AddNoteParams, EditNoteParams
from rutter_core.app.facade import Rutter
from rutter_core.app.history import HistorySearchParams
from rutter_core.app.memory import CreateMemoryParams, SetMemoryStatusParams
from rutter_core.app.runs import CreateRunParams
from rutter_core.store import open_store
from tests.conftest import write_tree
from tests.lsp_client import (
    CLIENTS,
    RutterClient,
    capabilities,
    effective,
    folder,
    registered,
    rejection,
    request,
    start,
    stop,
    uri,
)
from tests.mcp_client import Env, call, failure, mcp_client
from tests.testing import Cli

SENTINEL = "sentinel-history-argument-77c1"


# -- CLI ---------------------------------------------------------------------------------------


def test_the_cli_searches_pages_and_reads_with_exit_codes(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write_tree(root, {"AGENTS.md": "rules\n"})
    cli = Cli(tmp_path / "home", root)
    cli.json("workspace", "register", "demo", str(root))
    run = cli.json("run", "create", "--workspace", "demo", "--goal", "g")
    thread = run["thread_id"]
    for n in range(3):
        cli.json("session", "message", "add", thread, "--role", "user",
                 "--text", f"删除后不可恢复的 step {n}")  # fmt: skip
    tool = cli.json("session", "message", "add", thread, "--role", "tool",
                    "--text", "def parse_input_stream(): pass")  # fmt: skip
    note = cli.json("session", "note", "add", thread, "--kind", "fact", "--text", "不可恢复 note")
    memory = cli.json("context", "memory", "create", "--scope", "project", "--workspace", "demo",
                      "--title", "T", "--content", "project 不可恢复 memory")  # fmt: skip
    first = cli.json("history", "search", "不可恢复", "--run", run["run_id"], "--limit", "2")
    assert set(first) == {"hits", "next_cursor"}
    assert [hit["source_id"] for hit in first["hits"]] == [memory["id"], note["note_id"]]
    assert set(first["hits"][0]) == {
        "handle", "source_kind", "source_id", "version", "thread_id", "recorded_at", "snippet",
    }  # fmt: skip
    assert all(
        re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", hit["recorded_at"])
        for hit in first["hits"]
    )
    assert [hit["thread_id"] for hit in first["hits"]] == [None, thread]
    second = cli.json("history", "search", "不可恢复", "--run", run["run_id"], "--limit", "2",
                      "--cursor", first["next_cursor"])  # fmt: skip
    assert [hit["source_kind"] for hit in second["hits"]] == ["message", "message"]
    code = cli.json("history", "search", "input_stream", "--run", run["run_id"],
                    "--scope", "receipt")  # fmt: skip
    assert [hit["source_id"] for hit in code["hits"]] == [tool["message_id"]]
    short = cli.json("history", "search", "恢复", "--run", run["run_id"], "--scope", "note")
    assert [hit["source_id"] for hit in short["hits"]] == [note["note_id"]]
    handle = first["hits"][1]["handle"]
    read = cli.json("history", "read", handle)
    assert read == {"handle": handle, "page": 1, "pages": 1, "text": "不可恢复 note"}
    text = cli("history", "read", handle)
    assert text.returncode == 0
    assert "不可恢复 note" in text.stdout
    cli.json("session", "note", "edit", note["note_id"], "--version", "1", "--text", "changed")
    changed = cli.json("history", "read", handle, code=4)
    assert changed["error"]["code"] == "conflict"
    assert "不可恢复" not in json.dumps(changed)
    memory_handle = first["hits"][0]["handle"]
    cli.json("context", "memory", "disable", memory["id"], "--version", "1")
    gone = cli.json("history", "read", memory_handle, code=5)
    assert gone["error"]["code"] == "gone"
    assert "memory" not in gone["error"].get("details", {})
    plain = cli("history", "read", memory_handle)
    assert plain.returncode == 5
    assert "search again" in plain.stderr
    forged = cli.json("history", "read", f"rh1.{SENTINEL}.x", code=2)
    assert forged["error"]["code"] == "invalid_handle"
    assert SENTINEL not in json.dumps(forged)
    bad = cli.json("history", "search", "x", "--scope", SENTINEL, code=2)
    assert bad["error"]["code"] == "invalid_scope"
    assert SENTINEL not in json.dumps(bad)


# -- language server ---------------------------------------------------------------------------


@dataclass
class Served:
    client: RutterClient
    home: Path
    workspace_id: str
    run_id: str
    thread_id: str

    def app_call(self, call: Any) -> Any:
        with open_store(f"sqlite:///{self.home / 'rutter.db'}") as store:
            return call(Rutter(store))


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=CLIENTS)
async def served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Served]:
    client_name: str = request.param
    base = tmp_path_factory.mktemp(f"lsp-history-{client_name}")
    root = (base / "repo").resolve()
    write_tree(root, {"AGENTS.md": "rules\n"})
    home = base / "home"
    client = await start(home, capabilities(client_name), [folder(root)])
    await effective(client, uri(root / "AGENTS.md"))
    [workspace_id] = [ws.workspace_id for ws in registered(home)]
    with open_store(f"sqlite:///{home / 'rutter.db'}") as store:
        run = Rutter(store).runs.create(
            CreateRunParams(goal="g", workspace_id=workspace_id), actor="cli"
        )
    yield Served(client, home, workspace_id, run.run_id, run.thread_id)
    await stop(client)


async def lsp_failure(client: RutterClient, method: str, params: Any) -> tuple[int, Any]:
    error = await rejection(request(client, method, params))
    return error.code, error.data


@pytest.mark.asyncio(loop_scope="module")
async def test_the_language_server_searches_and_reads(served: Served) -> None:
    note = served.app_call(
        lambda app: app.continuity.add_note(
            AddNoteParams(thread_id=served.thread_id, kind="decision", text="使用 input_stream"),
            actor="cli",
        )
    )
    served.app_call(
        lambda app: app.continuity.add_message(
            AddMessageParams(thread_id=served.thread_id, role="user", text="設定を読む"),
            source="cli",
        )
    )
    memory = served.app_call(
        lambda app: app.memory.create(
            CreateMemoryParams(scope="user", title="t", content="input_stream 用户记忆"),
            actor="cli",
        )
    )
    found = await request(
        served.client, "rutter/historySearch", {"query": "INPUT_STREAM", "run_id": served.run_id}
    )
    assert [h["source_id"] for h in found["hits"]] == [memory.memory_id, note.note_id]
    # The same document as the app's.
    direct = served.app_call(
        lambda app: app.history.search(
            HistorySearchParams(query="INPUT_STREAM", run_id=served.run_id)
        ).to_json()
    )
    assert direct == found
    short = await request(
        served.client, "rutter/historySearch", {"query": "設定", "run_id": served.run_id}
    )
    assert [h["source_kind"] for h in short["hits"]] == ["message"]
    read = await request(
        served.client, "rutter/historyRead", {"handle": found["hits"][1]["handle"]}
    )
    assert read == {
        "handle": found["hits"][1]["handle"], "page": 1, "pages": 1, "text": "使用 input_stream",
    }  # fmt: skip
    served.app_call(
        lambda app: app.continuity.edit_note(
            EditNoteParams(note_id=note.note_id, version=1, text="使用 other"), actor="cli"
        )
    )
    code, data = await lsp_failure(
        served.client, "rutter/historyRead", {"handle": found["hits"][1]["handle"]}
    )
    assert (code, data["code"], data["hint"]["fix"]) == (-32801, "conflict", "search_history_again")
    served.app_call(
        lambda app: app.memory.set_status(
            SetMemoryStatusParams(id=memory.memory_id, version=1, status="disabled"), actor="cli"
        )
    )
    code, data = await lsp_failure(
        served.client, "rutter/historyRead", {"handle": found["hits"][0]["handle"]}
    )
    assert (code, data["code"]) == (-32803, "gone")
    assert "text" not in data
    code, data = await lsp_failure(
        served.client, "rutter/historySearch", {"query": "x", "surprise": SENTINEL}
    )
    assert (code, data["code"]) == (-32602, "invalid_params")
    assert SENTINEL not in json.dumps(data)
    code, data = await lsp_failure(served.client, "rutter/historyRead", {"handle": SENTINEL})
    assert (code, data["code"]) == (-32602, "invalid_handle")
    assert SENTINEL not in json.dumps(data)


# -- MCP ---------------------------------------------------------------------------------------


@pytest.fixture
def env(tmp_path: Path, workspace_root: Path) -> Env:
    write_tree(workspace_root, {"AGENTS.md": "root rules\n", "src/a.go": "package a\n"})
    cli = Cli(tmp_path / "home", workspace_root / "src")
    cli.json("workspace", "register", "demo", str(workspace_root))
    cli.json("context", "memory", "create", "--scope", "project", "--workspace", "demo",
             "--title", "Tests", "--content", "run the tests first")  # fmt: skip
    run: dict[str, Any] = cli.json("run", "create", "--workspace", "demo", "--goal", "g")
    return Env(cli, workspace_root, run)


@pytest.mark.asyncio
async def test_the_mcp_tools_search_and_read_read_only(env: Env) -> None:
    thread = env.run["thread_id"]
    env.cli.json("session", "message", "add", thread, "--role", "tool",
                  "--text", "parse_input_stream returned 3")  # fmt: skip
    async with mcp_client(env) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        for name in ("history_search", "history_read"):
            annotations = listed[name].annotations
            assert annotations is not None
            assert annotations.read_only_hint is True
            assert listed[name].input_schema["additionalProperties"] is False
        assert listed["history_search"].input_schema["required"] == ["query"]
        found = await call(
            client, "history_search", {"query": "input_stream", "run_id": env.run["run_id"]}
        )
        page = await call(client, "history_read", {"handle": found["hits"][0]["handle"]})
        tests = await call(
            client, "history_search", {"query": "tests first", "workspace_id": "demo"}
        )
        forged = await failure(client, "history_read", {"handle": f"rh1.{SENTINEL}.x"})
        extra = await failure(client, "history_search", {"query": "x", "write": SENTINEL})
    # The same document as the CLI's (handles are deterministic for the same source and run).
    assert found == env.cli.json("history", "search", "input_stream", "--run", env.run["run_id"])
    assert found["hits"][0]["source_kind"] == "receipt"
    assert page["text"] == "parse_input_stream returned 3"
    assert [hit["source_kind"] for hit in tests["hits"]] == ["memory"]
    assert forged["code"] == "invalid_handle"
    assert extra["code"] == "invalid_params"


def test_people_read_numbered_hits_with_their_thread_and_what_was_searched(
    tmp_path: Path,
) -> None:
    root = tmp_path / "repo"
    write_tree(root, {"AGENTS.md": "rules\n"})
    cli = Cli(tmp_path / "home", root)
    cli.json("workspace", "register", "demo", str(root))
    run = cli.json("run", "create", "--workspace", "demo", "--goal", "g")
    cli.json("session", "note", "add", run["thread_id"], "--kind", "fact", "--text", "kiwi note")
    found = cli("history", "search", "kiwi", "--run", run["run_id"])
    assert found.returncode == 0, found.stderr
    lines = found.stdout.splitlines()
    assert lines[0] == (
        f"1 hit in run {run['run_id']}'s lineage (its threads and those it came from) and its "
        "memories:"
    )
    assert lines[1].startswith(" 1. note note_")
    assert re.fullmatch(
        rf" 1\. note note_\w+ v1, \d{{4}}-\d\d-\d\dT\d\d:\d\d:\d\dZ in thread {run['thread_id']}",
        lines[1],
    )
    assert lines[2] == "    kiwi note"
    assert lines[3].startswith("    read: rutter history read rh1.")
    none = cli("history", "search", "kiwi", "--workspace", "demo")
    assert none.returncode == 0, none.stderr
    assert none.stdout.splitlines() == [
        "No hits in the memories of workspace demo and your user memories.",
        "Without --run only memories are searched: give --run RUN to search that run's notes, "
        "messages, receipts, summaries and checkpoints too.",
    ]
