"""The language-server session the context-assembly and compaction requests are tested in (this
module holds no tests): a server per module and client, with a run to assemble for (`session`, a
fixture), and a request's typed refusal (`failure`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from rutter_core.app.facade import Rutter
from rutter_core.app.memory import CreateMemoryParams, MemoryRecord, SetMemoryStatusParams
from rutter_core.app.runs import CreatedRun, CreateRunParams
from rutter_core.store import open_store
from tests.conftest import write_tree
from tests.lsp_client import (
    CLIENTS,
    RutterClient,
    capabilities,
    effective,
    folder,
    registered,
    rejected,
    request,
    start,
    stop,
    uri,
)


@dataclass
class Session:
    client: RutterClient
    home: Path
    workspace_id: str

    def app(self) -> Any:
        return open_store(f"sqlite:///{self.home / 'rutter.db'}")

    def new_run(self) -> CreatedRun:
        with self.app() as store:
            return Rutter(store).runs.create(
                CreateRunParams(goal="g", workspace_id=self.workspace_id), actor="cli"
            )

    def project_memory(self, content: str) -> MemoryRecord:
        with self.app() as store:
            return Rutter(store).memory.create(
                CreateMemoryParams(
                    scope="project", workspace_id=self.workspace_id, title="t", content=content
                ),
                actor="cli",
            )

    def disable(self, memory: MemoryRecord) -> None:
        with self.app() as store:
            Rutter(store).memory.set_status(
                SetMemoryStatusParams(id=memory.memory_id, version=1, status="disabled"),
                actor="cli",
            )


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=CLIENTS)
async def session(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Session]:
    client_name: str = request.param
    base = tmp_path_factory.mktemp(f"lsp-assembly-{client_name}")
    root = (base / "repo").resolve()
    write_tree(root, {"AGENTS.md": "rules\n"})
    home = base / "home"
    client = await start(home, capabilities(client_name), [folder(root)])
    await effective(client, uri(root / "AGENTS.md"))
    [workspace_id] = [ws.workspace_id for ws in registered(home)]
    yield Session(client, home, workspace_id)
    await stop(client)


async def failure(session: Session, method: str, params: Any) -> tuple[int, dict[str, Any]]:
    return await rejected(request(session.client, method, params))
