"""Session continuity in the language server end to end (issue 13), per client capability set.

A real server subprocess serves a git repository; the requests `rutter/session/*` and their
commands `rutter.session.*` answer with the CLI's JSON shapes, the source of messages and the
actor of notes and checkpoints is always "lsp" (a client cannot claim another), and failures
are JSON-RPC errors carrying the typed error.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from rutter_core.app.facade import Rutter
from rutter_core.app.runs import CreatedRun, CreateRunParams
from rutter_core.store import open_store
from tests.lsp_client import (
    CLIENTS,
    ServedRepo,
    execute,
    rejected,
    request,
    serve_git_repo,
    stop,
)

Session = ServedRepo

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]

TOKEN = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"
OPERATIONS = ("addMessage", "messages", "addNote", "notes", "editNote", "supersedeNote",
              "checkpoint", "node")  # fmt: skip


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=CLIENTS)
async def session(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Session]:
    client_name: str = request.param
    served = await serve_git_repo(
        tmp_path_factory.mktemp(f"lsp-session-{client_name}"), client_name
    )
    yield served
    await stop(served.client)


def new_run(session: Session) -> CreatedRun:
    """A run created by another process's store (the CLI's, in practice)."""
    with open_store(f"sqlite:///{session.home / 'rutter.db'}") as store:
        return Rutter(store).runs.create(
            CreateRunParams(goal="g", workspace_id=session.workspace_id), actor="cli"
        )


async def call(session: Session, name: str, params: Any) -> Any:
    return await request(session.client, f"rutter/session/{name}", params)


async def failure(session: Session, name: str, params: Any) -> tuple[int, dict[str, Any]]:
    return await rejected(call(session, name, params))


async def test_commands_are_advertised(session: Session) -> None:
    result = session.client.initialize_result
    assert result is not None
    assert result.capabilities.execute_command_provider is not None
    advertised = set(result.capabilities.execute_command_provider.commands)
    assert advertised >= {f"rutter.session.{name}" for name in OPERATIONS}


async def test_messages_notes_and_checkpoints_with_the_cli_shapes(session: Session) -> None:
    run = new_run(session)
    thread = run.thread_id
    added = await call(
        session, "addMessage", {"thread_id": thread, "role": "assistant", "text": f"k {TOKEN}"}
    )
    assert (added["source"], added["seq"], added["created"]) == ("lsp", 1, True)
    assert added["text"] == "k [REDACTED:github_token]"
    first = await call(
        session,
        "addMessage",
        {"thread_id": thread, "role": "user", "text": "hi", "external_id": "e-1"},
    )
    again = await execute(
        session.client,
        "rutter.session.addMessage",
        {"thread_id": thread, "role": "user", "text": "hi", "external_id": "e-1"},
    )
    assert (again["message_id"], again["created"]) == (first["message_id"], False)
    listed = await call(session, "messages", {"thread_id": thread, "limit": None})
    assert [m["seq"] for m in listed["messages"]] == [1, 2]

    note = await call(session, "addNote", {"thread_id": thread, "kind": "summary", "text": "s1"})
    assert (note["created_by"], note["version"]) == ("lsp", 1)
    edited = await call(
        session, "editNote", {"note_id": note["note_id"], "version": 1, "text": "s2"}
    )
    assert (edited["version"], edited["updated_by"]) == (2, "lsp")
    code, stale = await failure(
        session, "editNote", {"note_id": note["note_id"], "version": 1, "text": "lost"}
    )
    assert (code, stale["code"]) == (-32801, "conflict")
    assert stale["hint"] == {"fix": "reread_note", "note_id": note["note_id"],
                             "thread_id": thread, "version": 2}  # fmt: skip
    fact = await call(session, "addNote", {"thread_id": thread, "kind": "fact", "text": "f"})
    gone = await call(session, "supersedeNote", {"note_id": fact["note_id"], "version": 1})
    assert (gone["note"]["status"], gone["replacement"]) == ("superseded", None)
    notes = await call(session, "notes", {"thread_id": thread, "all": True})
    assert [n["note_id"] for n in notes["notes"]] == [note["note_id"], fact["note_id"]]

    node = await call(
        session, "checkpoint", {"run_id": run.run_id, "title": "From the editor", "summary": None}
    )
    assert (node["kind"], node["parent_node_id"], node["created_by"]) == (
        "checkpoint", run.root_node_id, "lsp",
    )  # fmt: skip
    snapshot = node["snapshot"]
    assert snapshot["protocol_version"] == "continuity_snapshot.v1"
    assert snapshot["compaction_summary"]["text"] == "s2"
    assert [m["source"] for m in snapshot["messages"]["items"]] == ["lsp", "lsp"]
    assert snapshot["git"]["branch"] == "main"
    assert await call(session, "node", {"node_id": node["node_id"]}) == node
    assert await execute(session.client, "rutter.session.node", {"node_id": node["node_id"]}) == (
        node
    )


async def test_refusals_are_typed_jsonrpc_errors(session: Session) -> None:
    run = new_run(session)
    thread = run.thread_id
    missing = "thr_01M8Y3HJTQYDNPR8CJ56SS1T0B"
    code, error = await failure(
        session, "addMessage", {"thread_id": missing, "role": "user", "text": "x"}
    )
    assert (code, error["code"], error["hint"]) == (-32803, "thread_not_found",
                                                    {"fix": "find_thread"})  # fmt: skip
    code, error = await failure(
        session, "addMessage", {"thread_id": thread, "role": "robot", "text": "x"}
    )
    assert (code, error["code"]) == (-32803, "invalid_role")
    code, error = await failure(
        session, "addMessage", {"thread_id": thread, "role": "user", "text": "x" * 65537}
    )
    assert (error["code"], error["details"]["max_bytes"]) == ("text_too_large", 65536)
    code, error = await failure(
        session, "checkpoint", {"run_id": "run_01M8Y3HJTQYDNPR8CJ56SS1T0B", "title": "t"}
    )
    assert (code, error["code"]) == (-32803, "run_not_found")
    code, error = await failure(session, "node", {"node_id": "node_01M8Y3HJTQYDNPR8CJ56SS1T0B"})
    assert error["code"] == "not_found"
    # The source and the actor are the server's own: a client cannot claim them.
    for planted in ({"source": "mcp"}, {"actor": "model"}, {"created_by": "cli"}):
        code, error = await failure(
            session, "addMessage", {"thread_id": thread, "role": "user", "text": "x", **planted}
        )
        assert (code, error["code"]) == (-32602, "invalid_params")
    code, error = await failure(session, "checkpoint", {"run_id": run.run_id, "title": 3})
    assert error["code"] == "invalid_params"
    assert (await call(session, "messages", {"thread_id": thread}))["messages"] == []
