"""Memory in the language server end to end (issue 5), per client capability set.

A real server subprocess serves two folders; the requests and commands `rutter/memory/*`
answer with the CLI's JSON shapes, failures are JSON-RPC errors carrying the typed error,
the actor is always "lsp", and delete happens only after the person chose "Delete
permanently" in the server's `window/showMessageRequest` (a client that cannot show one is
refused). Memories written by another process meanwhile are seen; deleted text is gone from
the database files the server keeps open.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import attrs
import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from rutter_core.memory.service import create_memory
from rutter_core.store import open_store
from tests.conftest import write_tree
from tests.lsp_client import (
    CLIENTS,
    Prompter,
    RutterClient,
    capabilities,
    effective,
    execute,
    folder,
    registered,
    rejection,
    request,
    start,
    stop,
    uri,
)

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]

TOKEN = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"
COMMANDS = {
    "rutter.memory.list",
    "rutter.memory.get",
    "rutter.memory.create",
    "rutter.memory.edit",
    "rutter.memory.setStatus",
    "rutter.memory.delete",
    "rutter.memory.export",
}


@dataclass
class Session:
    client: RutterClient
    client_name: str
    home: Path
    alpha: Path
    beta: Path
    alpha_id: str
    beta_id: str
    prompter: Prompter


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=CLIENTS)
async def session(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Session]:
    client_name: str = request.param
    base = tmp_path_factory.mktemp(f"lsp-memory-{client_name}")
    alpha, beta = (base / "alpha").resolve(), (base / "beta").resolve()
    write_tree(alpha, {"AGENTS.md": "alpha\n", "src/main.go": "package main\n"})
    write_tree(beta, {"AGENTS.md": "beta\n"})
    home = base / "home"
    client = await start(home, capabilities(client_name), [folder(alpha), folder(beta)])
    prompter = Prompter()
    prompter.install(client)
    await effective(client, uri(alpha / "AGENTS.md"))  # the folders are registered
    ids = {ws.root: ws.workspace_id for ws in registered(home)}
    yield Session(client, client_name, home, alpha, beta, ids[str(alpha)], ids[str(beta)], prompter)
    await stop(client)


async def memory(session: Session, method: str, params: Any) -> Any:
    return await request(session.client, f"rutter/memory/{method}", params)


async def failure(session: Session, method: str, params: Any) -> JsonRpcException:
    return await rejection(memory(session, method, params))


def typed(error: JsonRpcException) -> dict[str, Any]:
    data: Any = error.data
    assert isinstance(data, dict), error
    return data


async def test_commands_are_advertised(session: Session) -> None:
    result = session.client.initialize_result
    assert result is not None
    assert result.capabilities.execute_command_provider is not None
    assert set(result.capabilities.execute_command_provider.commands) >= COMMANDS


async def test_create_get_edit_set_status_with_the_cli_shapes(session: Session) -> None:
    created = await memory(
        session,
        "create",
        {
            "scope": "project",
            "uri": uri(session.alpha / "src/main.go"),
            "title": "Test convention",
            "content": "Run unit tests before packaging",
            "references": [" docs/testing.md", "docs/testing.md "],
            "retention": "720h",
        },
    )
    assert created["protocol_version"] == "context_memory.v1"
    assert (created["scope"], created["scope_id"]) == ("project", session.alpha_id)
    assert (created["created_by"], created["updated_by"], created["version"]) == ("lsp", "lsp", 1)
    assert created["references"] == ["docs/testing.md"]
    assert created["retention_until"] is not None
    memory_id = created["id"]
    assert await memory(session, "get", {"id": memory_id}) == created

    edited = await memory(
        session, "edit", {"id": memory_id, "version": 1, "content": "Run unit and API tests"}
    )
    assert (edited["version"], edited["content"], edited["updated_by"]) == (
        2,
        "Run unit and API tests",
        "lsp",
    )
    disabled = await memory(
        session, "setStatus", {"id": memory_id, "version": 2, "status": "disabled"}
    )
    assert (disabled["status"], disabled["version"]) == ("disabled", 3)
    listed = await memory(session, "list", {"scope": "project", "workspace_id": session.alpha_id})
    assert memory_id not in [item["id"] for item in listed["items"]]
    everything = await memory(
        session, "list", {"scope": "project", "workspace_id": session.alpha_id, "all": True}
    )
    assert disabled in everything["items"]
    enabled = await memory(
        session, "setStatus", {"id": memory_id, "version": 3, "status": "active"}
    )
    assert (enabled["status"], enabled["version"]) == ("active", 4)

    exported = await memory(
        session, "export", {"scope": "project", "uri": uri(session.alpha), "all": True}
    )
    assert exported["protocol_version"] == "context_memory_export.v1"
    assert exported["capability_grant"] is False
    assert (exported["scope"], exported["scope_id"]) == ("project", session.alpha_id)
    assert enabled in exported["items"]


async def test_workspace_from_workspace_id_uri_or_the_only_folder(session: Session) -> None:
    beta = await memory(
        session,
        "create",
        {"scope": "project", "workspace_id": session.beta_id, "title": "b", "content": "c"},
    )
    assert beta["scope_id"] == session.beta_id
    user = await memory(session, "create", {"scope": "user", "title": "u", "content": "c"})
    assert user["scope_id"] == "local-user"
    # Two folders are served: project scope must say which.
    unnamed = await failure(session, "create", {"scope": "project", "title": "p", "content": "c"})
    assert typed(unnamed)["code"] == "workspace_required"
    assert unnamed.code == -32602
    # Without a scope, a document's URI lists user memory and that project's memory.
    near = await memory(session, "list", {"uri": uri(session.beta / "AGENTS.md"), "all": True})
    scopes = {(item["scope"], item["scope_id"]) for item in near["items"]}
    assert scopes == {("user", "local-user"), ("project", session.beta_id)}
    everything = await memory(session, "list", {"all": True})
    assert ("project", session.alpha_id) in {
        (item["scope"], item["scope_id"]) for item in everything["items"]
    }
    missing = await failure(
        session,
        "create",
        {"scope": "project", "workspace_id": "ghost", "title": "p", "content": "c"},
    )
    assert typed(missing)["code"] == "not_registered"


async def test_refusals_are_typed_jsonrpc_errors(session: Session) -> None:
    created = await memory(session, "create", {"scope": "user", "title": "t", "content": "c"})
    memory_id = created["id"]
    await memory(session, "edit", {"id": memory_id, "version": 1, "title": "t2"})

    stale = await failure(session, "edit", {"id": memory_id, "version": 1, "content": "lost"})
    assert stale.code == -32801  # ContentModified
    assert typed(stale)["code"] == "conflict"
    assert typed(stale)["details"]["current_version"] == 2
    assert "is at version 2" in typed(stale)["message"]
    # What to do next travels as data; the editor words it (the message names no CLI flag).
    assert typed(stale)["hint"] == {"fix": "reread_memory", "id": memory_id, "version": 2}
    assert "--version" not in typed(stale)["message"]

    gone = await failure(session, "get", {"id": "mem_01J00000000000000000000000"})
    assert (gone.code, typed(gone)["code"]) == (-32803, "not_found")

    secret = await failure(
        session, "create", {"scope": "user", "title": "t", "content": f"key {TOKEN}"}
    )
    assert typed(secret)["code"] == "secret_detected"
    assert typed(secret)["hint"] == {"fix": "store_redacted"}
    assert TOKEN not in str(typed(secret))
    redacted = await memory(
        session,
        "create",
        {"scope": "user", "title": "t", "content": f"key {TOKEN}", "redact_sensitive": True},
    )
    assert (redacted["content"], redacted["redacted"]) == ("key [REDACTED:github_token]", True)
    cleaned = await memory(session, "edit", {"id": redacted["id"], "version": 1, "content": "ok"})
    assert cleaned["redacted"] is True

    for redact_sensitive in (False, True):
        sensitive = await failure(
            session,
            "create",
            {
                "scope": "user",
                "title": "t",
                "content": "c",
                "references": ["~/.ssh/id_ed25519"],
                "redact_sensitive": redact_sensitive,
            },
        )
        assert typed(sensitive)["code"] == "sensitive_source"
    bounds = await failure(session, "edit", {"id": memory_id, "version": 2, "retention": "3654d"})
    assert typed(bounds)["code"] == "retention_out_of_bounds"
    limit = await failure(session, "list", {"limit": 501})
    assert (limit.code, typed(limit)["code"]) == (-32602, "invalid_limit")

    # The actor is the server's own: a client cannot claim another, nor pass unknown fields.
    for planted in ({"actor": "model"}, {"created_by": "tool"}, {"retentionUntil": "1h"}):
        refused = await failure(
            session, "create", {"scope": "user", "title": "t", "content": "c", **planted}
        )
        assert typed(refused)["code"] == "invalid_params"
    for bad in ({"id": memory_id, "version": "2", "title": "x"}, {"id": memory_id, "title": "x"},
                {"id": memory_id, "version": True, "title": "x"}, [1, 2]):  # fmt: skip
        assert typed(await failure(session, "edit", bad))["code"] == "invalid_params"
    shown = await memory(session, "get", {"id": memory_id})
    assert (shown["version"], shown["title"], shown["updated_by"]) == (2, "t2", "lsp")


async def test_null_means_a_field_was_not_given(session: Session) -> None:
    created = await memory(
        session,
        "create",
        {
            "scope": "user",
            "workspace_id": None,
            "uri": None,
            "title": "t",
            "content": "c",
            "references": None,
            "retention": None,
            "redact_sensitive": None,
        },
    )
    assert (created["references"], created["retention_until"], created["redacted"]) == (
        [],
        None,
        False,
    )
    edited = await memory(
        session, "edit", {"id": created["id"], "version": 1, "title": None, "content": "d"}
    )
    assert (edited["title"], edited["content"], edited["version"]) == ("t", "d", 2)
    missing = await failure(session, "edit", {"id": created["id"], "version": None})
    assert typed(missing)["code"] == "invalid_params"


async def test_commands_take_the_same_object(session: Session) -> None:
    created = await execute(
        session.client,
        "rutter.memory.create",
        {"scope": "user", "title": "from the palette", "content": "c"},
    )
    memory_id = created["id"]
    assert await execute(session.client, "rutter.memory.get", memory_id) == created
    assert await execute(session.client, "rutter.memory.get", {"id": memory_id}) == created
    edited = await execute(
        session.client, "rutter.memory.edit", {"id": memory_id, "version": 1, "content": "d"}
    )
    assert edited["version"] == 2
    status = await execute(
        session.client,
        "rutter.memory.setStatus",
        {"id": memory_id, "version": 2, "status": "disabled"},
    )
    assert status["status"] == "disabled"
    listed = await execute(session.client, "rutter.memory.list", {"scope": "user", "all": True})
    assert status in listed["items"]
    exported = await execute(session.client, "rutter.memory.export", {"scope": "user"})
    assert status not in exported["items"]
    session.prompter.answers.append("Delete permanently")
    deleted = await execute(session.client, "rutter.memory.delete", {"id": memory_id, "version": 3})
    assert deleted["deleted"] is True


async def test_delete_asks_first_and_only_deletes_on_confirmation(session: Session) -> None:
    marker = f"forget-{uuid.uuid4().hex}"
    created = await memory(
        session,
        "create",
        {"scope": "user", "title": f"Note {marker}", "content": f"{marker} " * 200},
    )
    memory_id = created["id"]
    asked = len(session.prompter.asked)

    # A stale version or a missing memory is refused before anyone is asked.
    stale = await failure(session, "delete", {"id": memory_id, "version": 2})
    assert typed(stale)["code"] == "conflict"
    assert len(session.prompter.asked) == asked

    for answer in ("Cancel", None):  # chosen, or the message dismissed
        session.prompter.answers.append(answer)
        kept = await memory(session, "delete", {"id": memory_id, "version": 1})
        assert kept == {"id": memory_id, "version": 1, "deleted": False, "cancelled": True}
        assert (await memory(session, "get", {"id": memory_id}))["version"] == 1
    question = session.prompter.asked[-1]
    assert question.type == types.MessageType.Warning
    assert [action.title for action in question.actions or []] == ["Delete permanently", "Cancel"]
    assert f"Note {marker}" in question.message
    assert memory_id in question.message
    assert "permanently" in question.message

    session.prompter.answers.append("Delete permanently")
    deleted = await memory(session, "delete", {"id": memory_id, "version": 1})
    assert deleted == {
        "id": memory_id,
        "version": 1,
        "deleted": True,
        "recoverable": False,
        "purged": True,
    }
    assert len(session.prompter.asked) == asked + 3
    gone = await failure(session, "get", {"id": memory_id})
    assert typed(gone)["code"] == "not_found"
    again = await failure(session, "delete", {"id": memory_id, "version": 1})
    assert typed(again)["code"] == "not_found"
    listed = await memory(session, "list", {"all": True})
    assert memory_id not in [item["id"] for item in listed["items"]]
    # The server keeps the store open (so the WAL exists); the text is in no file of it.
    db = session.home / "rutter.db"
    for suffix in ("", "-wal", "-shm"):
        path = Path(f"{db}{suffix}")
        if path.exists():
            assert marker.encode() not in path.read_bytes(), f"found in rutter.db{suffix}"


async def test_memories_written_by_another_process_are_seen(session: Session) -> None:
    with open_store(f"sqlite:///{session.home / 'rutter.db'}") as store:
        outside = create_memory(
            store, scope="project", workspace_id=session.beta_id, title="from the CLI",
            content="c", actor="cli",
        )  # fmt: skip
    listed = await memory(session, "list", {"scope": "project", "workspace_id": session.beta_id})
    assert outside.to_json() in listed["items"]


async def test_delete_is_refused_without_a_way_to_ask(
    session: Session, tmp_path_factory: pytest.TempPathFactory
) -> None:
    base = tmp_path_factory.mktemp(f"lsp-memory-noask-{session.client_name}")
    root = (base / "proj").resolve()
    write_tree(root, {"AGENTS.md": "x\n"})
    caps = capabilities(session.client_name)
    assert caps.window is not None
    caps = attrs.evolve(caps, window=attrs.evolve(caps.window, show_message=None))
    client = await start(base / "home", caps, [folder(root)])
    try:
        created = await request(
            client, "rutter/memory/create", {"scope": "user", "title": "t", "content": "c"}
        )
        memory_id = created["id"]
        with pytest.raises(JsonRpcException) as raised:
            await request(client, "rutter/memory/delete", {"id": memory_id, "version": 1})
        data: Any = raised.value.data
        assert data["code"] == "confirmation_unavailable"
        assert f"rutter context memory delete {memory_id} --version 1" in data["message"]
        kept = await request(client, "rutter/memory/get", {"id": memory_id})
        assert kept["version"] == 1
    finally:
        await stop(client)
