"""The language-server session the run requests and drift are tested in (this module holds no
tests): a server per module and client with a prompter for reviews (`session`, a fixture), a run
created in it, and the waits and notifications the tests share."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types

from rutter_core.runs.service import latest_revision
from rutter_core.store import open_store
from tests.conftest import write_tree
from tests.lsp_client import (
    CLIENTS,
    Prompter,
    RutterClient,
    add_served_folder,
    capabilities,
    folder,
    registered,
    request,
    start,
    stop,
    uri,
    wait_until,
    within,
)
from tests.testing import Cli

DRIFT = "instructions_drift"
_names = itertools.count(1)


@dataclass
class Session:
    client: RutterClient
    client_name: str
    home: Path
    base: Path
    prompter: Prompter

    async def add_folder(self, files: dict[str, str | bytes]) -> tuple[Path, str]:
        root = await add_served_folder(
            self.client, (self.base / f"runs{next(_names)}").resolve(), files
        )
        [workspace_id] = [w.workspace_id for w in registered(self.home) if w.root == str(root)]
        return root, workspace_id

    def cli(self, *args: str) -> dict[str, Any]:
        """The `rutter` CLI (run in this process, not the server's) on the server's store."""
        done = Cli(self.home, self.base)(*args, "--json")
        assert done.returncode == 0, done.stderr
        result: dict[str, Any] = json.loads(done.stdout)
        return result

    async def runs(self, workspace_id: str) -> list[dict[str, Any]]:
        answer = await request(self.client, "rutter/runs", {"workspace_id": workspace_id})
        listed: list[dict[str, Any]] = answer["runs"]
        return listed

    def revisions(self, run_id: str) -> int | None:
        with open_store(f"sqlite:///{self.home / 'rutter.db'}") as store:
            latest = latest_revision(store, run_id)
        return None if latest is None else latest.revision


def make_session_client(prompter: Prompter) -> Callable[[RutterClient], None]:
    def install(client: RutterClient) -> None:
        prompter.install(client)
        # lsprotocol's client-side hook reads any code action that has a `command` member as
        # a bare Command; the spec (and VS Code, Neovim) tell them apart by whether `command`
        # is a string.
        converter = client.protocol._converter

        def code_action_or_command(value: Any, _: type) -> types.Command | types.CodeAction:
            if isinstance(value.get("command"), str):
                return converter.structure(value, types.Command)
            return converter.structure(value, types.CodeAction)

        converter.register_structure_hook(
            types.Command | types.CodeAction,
            code_action_or_command,
        )

    return install


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=CLIENTS)
async def session(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Session]:
    client_name: str = request.param
    base = tmp_path_factory.mktemp(f"lsp-runs-{client_name}")
    first = base / "first"
    write_tree(first, {"AGENTS.md": "first\n"})
    home = base / "home"
    client = await start(home, capabilities(client_name), [folder(first)])
    prompter = Prompter()
    make_session_client(prompter)(client)
    yield Session(client, client_name, home, base, prompter)
    await stop(client)


TREE: dict[str, str | bytes] = {
    "AGENTS.md": "root rules\n",
    "src/AGENTS.md": "src rules\nkeep functions short\n",
    "src/main.go": "package main\n",
}


async def created_run(session: Session) -> tuple[Path, str, str]:
    root, workspace_id = await session.add_folder(TREE)
    created = session.cli(
        "run", "create", "--workspace", workspace_id, "--goal", "fix the parser",
        "--target", "src/main.go",
    )  # fmt: skip
    run_id: str = created["run_id"]
    # Created by another process: the server notices the store change by itself.
    listed = await wait_until_async(lambda: session.runs(workspace_id), what="the new run")
    [run] = [entry for entry in listed if entry["run_id"] == run_id]
    await wait_until(
        lambda: [workspace_id] in session.client.runs_changes, what="rutter/runsChanged"
    )
    assert run["stale"] is False
    assert run["revision"] == 1
    assert run["target_path"] == "src/main.go"
    return root, workspace_id, run_id


async def wait_until_async(ask: Callable[[], Any], *, what: str) -> Any:
    async def poll() -> Any:
        while True:
            value = await ask()
            if value:
                return value
            await asyncio.sleep(0.05)

    return await within(poll())


def notify_changed(session: Session, path: Path, kind: types.FileChangeType) -> None:
    session.client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(changes=[types.FileEvent(uri=uri(path), type=kind)])
    )


async def code_actions(
    session: Session, doc_uri: str, found: list[types.Diagnostic]
) -> list[types.CodeAction]:
    result = await within(
        session.client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=doc_uri),
                range=found[0].range,
                context=types.CodeActionContext(diagnostics=found),
            )
        )
    )
    return [action for action in result or [] if isinstance(action, types.CodeAction)]
