"""Shared helpers of the language-server end-to-end tests (this module holds no tests).

The server runs as a real subprocess (`python -m rutter_lsp.server`) with a temporary
`RUTTER_HOME`; the client is pytest-lsp's, extended to answer the server's requests that
pytest-lsp does not handle and to record our custom notification.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import attrs
import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.protocol import default_converter
from pygls.uris import from_fs_path
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import register_lsp_features

from rutter_core.store import open_store
from rutter_core.workspaces.service import Workspace, list_workspaces
from rutter_lsp.settings import plain
from tests.conftest import write_tree

T = TypeVar("T")

SERVER_COMMAND = [sys.executable, "-m", "rutter_lsp.server"]
CLIENTS = ["visual_studio_code", "neovim"]
TIMEOUT = 30.0
START_TIMEOUT = 60.0


class RutterClient(LanguageClient):
    """pytest-lsp's client, recording what rutter sends beyond the standard messages."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.registrations: list[types.Registration] = []
        self.lens_refreshes = 0
        self.instruction_changes: list[dict[str, Any]] = []
        self.runs_changes: list[list[str]] = []
        """The workspace IDs of each `rutter/runsChanged`."""
        self.sessions_changes: list[list[str]] = []
        """The workspace IDs of each `rutter/sessionsChanged`."""
        self.pin_proposal_changes: list[list[str]] = []
        """The workspace IDs of each `rutter/pinProposalsChanged`."""
        self.initialize_result: types.InitializeResult | None = None


def make_client() -> RutterClient:
    client = RutterClient(converter_factory=default_converter)
    register_lsp_features(client)

    def register_capability(params: types.RegistrationParams) -> None:
        client.registrations.extend(params.registrations)

    def code_lens_refresh(params: None) -> None:
        client.lens_refreshes += 1

    def instructions_changed(params: Any) -> None:
        client.instruction_changes.append(plain(params))

    def runs_changed(params: Any) -> None:
        client.runs_changes.append(list(plain(params)["workspace_ids"]))

    def sessions_changed(params: Any) -> None:
        client.sessions_changes.append(list(plain(params)["workspace_ids"]))

    def pin_proposals_changed(params: Any) -> None:
        client.pin_proposal_changes.append(list(plain(params)["workspace_ids"]))

    features: Any = client  # pytest-lsp's client API is untyped
    features.feature(types.CLIENT_REGISTER_CAPABILITY)(register_capability)
    features.feature(types.WORKSPACE_CODE_LENS_REFRESH)(code_lens_refresh)
    features.feature("rutter/instructionsChanged")(instructions_changed)
    features.feature("rutter/runsChanged")(runs_changed)
    features.feature("rutter/sessionsChanged")(sessions_changed)
    features.feature("rutter/pinProposalsChanged")(pin_proposals_changed)
    return client


@dataclass
class Prompter:
    """Answers the server's `window/showMessageRequest` with the queued titles (None: the
    person dismissed the message), recording what was asked. `before_answer` hooks run first,
    one per question (e.g. the disk changes while the person reads)."""

    answers: list[str | None] = field(default_factory=list)
    before_answer: list[Callable[[], object]] = field(default_factory=list)
    asked: list[types.ShowMessageRequestParams] = field(default_factory=list)

    def __call__(self, params: types.ShowMessageRequestParams) -> types.MessageActionItem | None:
        self.asked.append(params)
        if self.before_answer:
            self.before_answer.pop(0)()
        title = self.answers.pop(0) if self.answers else None
        return None if title is None else types.MessageActionItem(title=title)

    def install(self, client: RutterClient) -> None:
        features: Any = client  # pytest-lsp's client API is untyped
        features.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)(self)


def uri(path: Path) -> str:
    found = from_fs_path(str(path))
    assert found is not None
    return str(found)


def folder(path: Path, name: str | None = None) -> types.WorkspaceFolder:
    return types.WorkspaceFolder(uri=uri(path), name=name or path.name)


async def served(client: RutterClient, doc_uri: str) -> dict[str, Any]:
    """The answer for `doc_uri` once its folder is served (no longer `not_registered`)."""

    async def ask() -> dict[str, Any]:
        while True:
            answer = await effective(client, doc_uri)
            if answer.get("error", {}).get("code") != "not_registered":
                return answer
            await asyncio.sleep(0.02)

    return await within(ask())


async def add_served_folder(
    client: RutterClient, root: Path, files: dict[str, str | bytes], name: str | None = None
) -> Path:
    """Write `files` under `root`, add it as a workspace folder at run time, and return it once
    the server serves it."""
    write_tree(root, files)
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(added=[folder(root, name)], removed=[])
        )
    )
    await served(client, uri(root / "probe.txt"))
    return root


def capabilities(client_name: str) -> types.ClientCapabilities:
    return client_capabilities(client_name)


async def start(
    home: Path,
    caps: types.ClientCapabilities,
    folders: list[types.WorkspaceFolder],
    *,
    initialization_options: Any = None,
    configuration: dict[str, Any] | None = None,
    database_url: str | None = None,
) -> RutterClient:
    """A server subprocess with `home` as RUTTER_HOME (and `database_url` as
    RUTTER_DATABASE_URL when given), initialized with `folders`."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("RUTTER_")}
    env["RUTTER_HOME"] = str(home)
    if database_url is not None:
        env["RUTTER_DATABASE_URL"] = database_url
    config = ClientServerConfig(
        server_command=SERVER_COMMAND, client_factory=make_client, server_env=env
    )
    client = await config.start()
    assert isinstance(client, RutterClient)
    if configuration is not None:
        client.set_configuration(configuration, section="rutter")
    client.initialize_result = await asyncio.wait_for(
        client.initialize_session(
            types.InitializeParams(
                capabilities=caps,
                workspace_folders=folders,
                initialization_options=initialization_options,
            )
        ),
        START_TIMEOUT,
    )
    return client


@dataclass
class ServedRepo:
    """A server subprocess serving one git repository (one commit: `AGENTS.md` and
    `src/main.go`), its folder registered; `prompter` answers its questions."""

    client: RutterClient
    home: Path
    root: Path
    workspace_id: str
    prompter: Prompter


def git_repo(root: Path) -> None:
    write_tree(root, {"AGENTS.md": "rules\n", "src/main.go": "package main\n"})
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-q", "-m", "one"]):
        subprocess.run(
            ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@e.x", *args],
            check=True, capture_output=True, timeout=60,
        )  # fmt: skip


async def serve_git_repo(base: Path, client_name: str) -> ServedRepo:
    """`base/repo` made a git repository and served with `client_name`'s capabilities, with
    `base/home` as RUTTER_HOME; returns once its folder is registered. `stop(served.client)`
    ends it."""
    root = (base / "repo").resolve()
    git_repo(root)
    home = base / "home"
    client = await start(home, capabilities(client_name), [folder(root)])
    prompter = Prompter()
    prompter.install(client)
    await effective(client, uri(root / "AGENTS.md"))  # the folder is registered
    [workspace_id] = [ws.workspace_id for ws in registered(home)]
    return ServedRepo(client, home, root, workspace_id, prompter)


async def stop(client: RutterClient) -> None:
    """`shutdown` + `exit`; the server must then exit with status 0."""
    await asyncio.wait_for(client.shutdown_session(), TIMEOUT)
    server = client._server
    assert server is not None
    assert server.returncode == 0
    untyped: Any = client
    await asyncio.wait_for(untyped.stop(), TIMEOUT)


async def wait_until(
    predicate: Callable[[], Any], *, timeout: float = TIMEOUT, what: str = "condition"
) -> Any:
    """Poll `predicate` until it returns something truthy; that value is returned."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


async def within(awaitable: Awaitable[T], timeout: float = TIMEOUT) -> T:
    return await asyncio.wait_for(awaitable, timeout)


def open_text(client: RutterClient, path: Path, text: str | None = None) -> str:
    """`didOpen` for `path` with its disk content (undecodable bytes replaced, as an editor
    shows them), or `text`; returns the URI."""
    if text is None:
        text = path.read_bytes().decode("utf-8", "replace") if path.is_file() else ""
    doc_uri = uri(path)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=doc_uri, language_id="markdown", version=1, text=text
            )
        )
    )
    return doc_uri


def change_text(client: RutterClient, doc_uri: str, version: int, text: str) -> None:
    """Replace the whole buffer (an unsaved edit)."""
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=doc_uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


def close(client: RutterClient, doc_uri: str) -> None:
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=doc_uri))
    )


async def rejection(pending: Awaitable[object]) -> JsonRpcException:
    """The JSON-RPC error `pending` (a request) must fail with."""
    with pytest.raises(JsonRpcException) as raised:
        await pending
    return raised.value


async def rejected(pending: Awaitable[object]) -> tuple[int, dict[str, Any]]:
    """The JSON-RPC error `pending` must fail with: its code and its data, the error document."""
    error = await rejection(pending)
    data: Any = error.data
    assert isinstance(data, dict), error
    return error.code, data


async def request(client: RutterClient, method: str, params: Any) -> Any:
    """A request pygls knows no type for (ours); the answer as plain JSON-like data."""
    protocol: Any = client.protocol
    return plain(await within(protocol.send_request_async(method, params)))


async def effective(client: RutterClient, doc_uri: str) -> dict[str, Any]:
    """`rutter/effectiveInstructions` for `doc_uri` as an editor shows it: the snapshot, or
    `{"error": document}` when the request failed with a typed error (the document is the
    JSON-RPC error's `data`; any other failure is raised)."""
    try:
        result = await request(
            client, "rutter/effectiveInstructions", {"textDocument": {"uri": doc_uri}}
        )
    except JsonRpcException as error:
        document = plain(error.data)
        if not isinstance(document, dict) or "code" not in document:
            raise
        return {"error": document}
    data = plain(result)
    assert isinstance(data, dict)
    return data


async def execute(client: RutterClient, command: str, *arguments: Any) -> Any:
    result = await within(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=command, arguments=list(arguments))
        )
    )
    return plain(result)


def diagnostics_of(client: RutterClient, doc_uri: str) -> list[types.Diagnostic]:
    return list(client.diagnostics.get(doc_uri, []))


async def wait_for_diagnostics(
    client: RutterClient, doc_uri: str, predicate: Callable[[list[types.Diagnostic]], bool]
) -> list[types.Diagnostic]:
    """Until diagnostics were published for `doc_uri` and `predicate` holds for them."""

    def check() -> tuple[list[types.Diagnostic]] | None:
        if doc_uri in client.diagnostics:
            found = diagnostics_of(client, doc_uri)
            if predicate(found):
                return (found,)  # a tuple: truthy even when `found` is empty
        return None

    (found,) = await wait_until(check, what=f"diagnostics of {doc_uri}")
    return list(found)


def by_code(found: list[types.Diagnostic], code: str) -> list[types.Diagnostic]:
    return [item for item in found if item.code == code]


def span(item: types.Diagnostic) -> tuple[int, int, int, int]:
    r = item.range
    return (r.start.line, r.start.character, r.end.line, r.end.character)


def notify_watched(client: RutterClient, *changes: tuple[Path, types.FileChangeType]) -> None:
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=uri(path), type=kind) for path, kind in changes]
        )
    )


def registered(home: Path) -> list[Workspace]:
    with open_store(f"sqlite:///{home / 'rutter.db'}") as store:
        return list_workspaces(store)


def with_pull_diagnostics(caps: types.ClientCapabilities) -> types.ClientCapabilities:
    """`caps` plus pull diagnostics with refresh support."""
    workspace = caps.workspace or types.WorkspaceClientCapabilities()
    text_document = caps.text_document or types.TextDocumentClientCapabilities()
    return attrs.evolve(
        caps,
        workspace=attrs.evolve(
            workspace,
            diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True),
        ),
        text_document=attrs.evolve(
            text_document,
            diagnostic=types.DiagnosticClientCapabilities(dynamic_registration=False),
        ),
    )
