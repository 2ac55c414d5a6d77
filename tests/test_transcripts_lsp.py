"""`rutter/session/import` in the language server, per client capability set: a real server
subprocess imports a fixture transcript into a thread of the folder's workspace, a second import
appends nothing, the source is `import:<agent>` whatever the client sends, and failures are
JSON-RPC errors carrying the typed error (never the file's content)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from rutter_core.app.continuity import ListMessagesParams
from rutter_core.app.facade import Rutter
from rutter_core.store import open_store
from tests.conftest import write_tree
from tests.lsp_client import (
    CLIENTS,
    RutterClient,
    capabilities,
    effective,
    execute,
    folder,
    registered,
    rejected,
    request,
    start,
    stop,
    uri,
)

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"


@dataclass
class Served:
    client: RutterClient
    home: Path
    base: Path
    workspace_id: str


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=CLIENTS)
async def served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Served]:
    client_name: str = request.param
    base = tmp_path_factory.mktemp(f"lsp-import-{client_name}")
    root = (base / "repo").resolve()
    write_tree(root, {"AGENTS.md": "rules\n"})
    home = base / "home"
    client = await start(home, capabilities(client_name), [folder(root)])
    await effective(client, uri(root / "AGENTS.md"))  # the folder is registered
    [workspace_id] = [ws.workspace_id for ws in registered(home)]
    yield Served(client, home, base, workspace_id)
    await stop(client)


async def failure(served: Served, params: Any) -> tuple[int, dict[str, Any]]:
    return await rejected(request(served.client, "rutter/session/import", params))


async def test_import_then_again_appends_nothing(served: Served) -> None:
    params = {"agent": "codex", "path": str(FIXTURES / "codex-rollout.jsonl"),
              "workspace_id": served.workspace_id}  # fmt: skip
    first = await request(served.client, "rutter/session/import", params)
    assert (first["imported"], first["thread_created"], first["workspace_id"]) == (
        14, True, served.workspace_id,
    )  # fmt: skip
    assert [s["line"] for s in first["skipped"]] == [21, 22, 23]
    again = await execute(served.client, "rutter.session.import", params)
    assert (again["thread_id"], again["imported"], again["already_present"]) == (
        first["thread_id"], 0, 14,
    )  # fmt: skip
    with open_store(f"sqlite:///{served.home / 'rutter.db'}") as store:
        listed = Rutter(store).continuity.messages(
            ListMessagesParams(thread_id=first["thread_id"], limit=500)
        )
    assert len(listed.messages) == 14
    assert {m.source for m in listed.messages} == {"import:codex"}


async def test_failures_are_typed_and_echo_nothing(served: Served) -> None:
    path = str(FIXTURES / "claude-code-session.jsonl")
    for planted in ({"source": "lsp"}, {"actor": "model"}, {"watch": True}):
        code, error = await failure(served, {"agent": "claude-code", "path": path, **planted})
        assert (code, error["code"]) == (-32602, "invalid_params")
    code, error = await failure(served, {"agent": "gemini", "path": path})
    assert error["code"] == "invalid_agent"
    # no workspace given, and the transcript ran in a directory no workspace contains
    code, error = await failure(served, {"agent": "claude-code", "path": path})
    assert error["code"] == "workspace_required"
    (served.base / "dir.jsonl").mkdir(exist_ok=True)
    code, error = await failure(
        served, {"agent": "claude-code", "path": str(served.base / "dir.jsonl")}
    )
    assert (error["code"], error["details"]) == (
        "transcript_not_regular_file",
        {"kind": "directory"},
    )
    assert "parser test" not in json.dumps(error)
