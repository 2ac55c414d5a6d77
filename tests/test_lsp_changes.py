"""The language server end to end, while things change (issue 3), per client capability set.

One server per capability set; each test adds its own workspace folder at run time, so tests
stay independent: folder changes, file-change notifications leading to republished
diagnostics and `rutter/instructionsChanged`, saves, unsaved edits, 1,000 open documents,
settings changes, and (in the fixture's teardown) a clean shutdown.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types

from rutter_core.discovery.fsread import FileReader
from rutter_core.discovery.walk import discover
from rutter_lsp.settings import plain
from tests.conftest import write_tree
from tests.lsp_client import (
    CLIENTS,
    RutterClient,
    add_served_folder,
    by_code,
    capabilities,
    change_text,
    close,
    effective,
    folder,
    open_text,
    registered,
    served,
    span,
    start,
    stop,
    uri,
    wait_for_diagnostics,
    wait_until,
    within,
)

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]

_names = itertools.count(1)


@dataclass
class Session:
    client: RutterClient
    client_name: str
    home: Path
    base: Path

    async def add_folder(self, files: dict[str, str | bytes], name: str | None = None) -> Path:
        """A new workspace folder, added at run time; returns its root once it is served."""
        root = (self.base / f"ws{next(_names)}").resolve()
        return await add_served_folder(self.client, root, files, name)

    async def served(self, doc_uri: str) -> dict[str, Any]:
        return await served(self.client, doc_uri)

    def remove_folder(self, root: Path) -> None:
        self.client.workspace_did_change_workspace_folders(
            types.DidChangeWorkspaceFoldersParams(
                event=types.WorkspaceFoldersChangeEvent(added=[], removed=[folder(root)])
            )
        )

    def changes_for(self, workspace_id: str) -> list[list[str]]:
        return [
            change["paths"]
            for change in self.client.instruction_changes
            if change["workspace_id"] == workspace_id
        ]


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=CLIENTS)
async def session(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Session]:
    client_name: str = request.param
    base = tmp_path_factory.mktemp(f"lsp-changes-{client_name}")
    first = base / "first"
    write_tree(first, {"AGENTS.md": "first\n"})
    home = base / "home"
    client = await start(home, capabilities(client_name), [folder(first)])
    yield Session(client, client_name, home, base)
    await stop(client)


def workspace_id_of(session: Session, root: Path) -> str:
    [found] = [ws.workspace_id for ws in registered(session.home) if ws.root == str(root)]
    return found


async def test_file_watchers_are_registered_dynamically_where_supported(session: Session) -> None:
    await session.served(uri(session.base / "first" / "x.go"))
    watchers = [
        registration
        for registration in session.client.registrations
        if registration.method == "workspace/didChangeWatchedFiles"
    ]
    if session.client_name == "neovim":  # its capabilities say: no dynamic registration
        assert watchers == []
        return
    [registration] = watchers
    options = registration.register_options
    patterns = [watcher["globPattern"] for watcher in options["watchers"]]  # type: ignore[index]
    assert [pattern for pattern in patterns if isinstance(pattern, str)] == [
        "**/AGENTS.md",
        "**/AGENTS.override.md",
        "**/CLAUDE.md",
        "**/.claude/CLAUDE.md",
        "**/.prayu/**",
        # Files only agents read, and their settings (agent profiles; see test_profiles_lsp).
        "**/GEMINI.md",
        "**/CLAUDE.local.md",
        "**/.claude/rules/**",
        "**/.cursor/rules/**",
        "**/.github/instructions/**",
        "**/.github/copilot-instructions.md",
        "**/.codex/config.toml",
        "**/.gemini/settings.json",
    ]


async def test_folder_named_by_its_full_path_gets_an_id_from_its_last_part(
    session: Session,
) -> None:
    files: dict[str, str | bytes] = {"AGENTS.md": "named by path\n"}
    root = await session.add_folder(files, str(session.base / "Some Checkout"))
    assert workspace_id_of(session, root).startswith(root.name.lower())
    session.remove_folder(root)  # later tests expect only their own folders to be served


async def test_folders_added_and_removed_at_run_time(session: Session) -> None:
    files: dict[str, str | bytes] = {"AGENTS.md": "runtime\n", "src/a.go": "package a\n"}
    root = await session.add_folder(files, "Run Time")
    workspace_id = workspace_id_of(session, root)
    assert workspace_id.startswith("run-time")
    snapshot = await effective(session.client, uri(root / "src/a.go"))
    assert snapshot["workspace_id"] == workspace_id
    assert [s["content"] for s in snapshot["sources"]] == ["runtime\n"]

    doc = open_text(session.client, root / "AGENTS.md")
    await wait_for_diagnostics(session.client, doc, lambda items: True)

    session.remove_folder(root)

    async def not_served() -> None:
        while (await effective(session.client, uri(root / "src/a.go"))).get("error") is None:
            await asyncio.sleep(0.02)

    await within(not_served())
    gone = await effective(session.client, uri(root / "src/a.go"))
    assert gone["error"]["code"] == "not_registered"
    # Serving stops; the registration stays.
    assert workspace_id_of(session, root) == workspace_id
    close(session.client, doc)


async def test_disk_changes_republish_diagnostics_and_notify(session: Session) -> None:
    client = session.client
    root = await session.add_folder(
        {"AGENTS.md": "root\n", "CLAUDE.md": "claude\n", "src/a.go": "package a\n"}
    )
    workspace_id = workspace_id_of(session, root)
    claude = open_text(client, root / "CLAUDE.md")
    source = open_text(client, root / "src/a.go")
    assert await wait_for_diagnostics(client, claude, lambda items: True) == []

    # An editor-independent change on disk: CLAUDE.md gets an invalid byte.
    (root / "CLAUDE.md").write_bytes(b"claude\n\xfe\n")
    client.instruction_changes.clear()
    notify = [(root / "CLAUDE.md", types.FileChangeType.Changed)]
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=uri(path), type=kind) for path, kind in notify]
        )
    )
    await wait_until(lambda: session.changes_for(workspace_id), what="rutter/instructionsChanged")
    assert session.changes_for(workspace_id) == [["CLAUDE.md"]]
    found = await wait_for_diagnostics(
        client, claude, lambda items: bool(by_code(items, "invalid_utf8"))
    )
    [error] = found
    assert error.severity == types.DiagnosticSeverity.Error
    assert span(error) == (1, 0, 1, 1)
    failing = await effective(client, source)
    assert failing["error"]["code"] == "invalid_utf8"

    # A new rule file is created, and CLAUDE.md is repaired, in one burst.
    write_tree(root, {".prayu/rules/new.md": "new rule\n", "CLAUDE.md": "claude again\n"})
    client.instruction_changes.clear()
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[
                types.FileEvent(
                    uri=uri(root / ".prayu/rules/new.md"), type=types.FileChangeType.Created
                ),
                types.FileEvent(uri=uri(root / "CLAUDE.md"), type=types.FileChangeType.Changed),
            ]
        )
    )
    await wait_until(lambda: session.changes_for(workspace_id), what="rutter/instructionsChanged")
    assert session.changes_for(workspace_id) == [[".prayu/rules/new.md", "CLAUDE.md"]]
    assert await wait_for_diagnostics(client, claude, lambda items: not items) == []
    snapshot = await effective(client, source)
    assert [s["path"] for s in snapshot["sources"]] == [
        "AGENTS.md",
        "CLAUDE.md",
        ".prayu/rules/new.md",
    ]
    for doc in (claude, source):
        close(client, doc)
    session.remove_folder(root)


async def test_save_of_an_instruction_file_counts_as_a_change(session: Session) -> None:
    client = session.client
    root = await session.add_folder({"AGENTS.md": "before\n", "main.go": "package main\n"})
    workspace_id = workspace_id_of(session, root)
    agents = open_text(client, root / "AGENTS.md")
    (root / "AGENTS.md").write_text("after\n")
    client.instruction_changes.clear()
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=agents))
    )
    await wait_until(lambda: session.changes_for(workspace_id), what="rutter/instructionsChanged")
    assert session.changes_for(workspace_id) == [["AGENTS.md"]]
    snapshot = await effective(client, uri(root / "main.go"))
    assert [s["content"] for s in snapshot["sources"]] == ["after\n"]
    close(client, agents)
    session.remove_folder(root)


async def test_unsaved_edits_show_on_the_buffer_but_not_in_discovery(session: Session) -> None:
    client = session.client
    root = await session.add_folder({"AGENTS.md": "on disk\n", "main.go": "package main\n"})
    agents = open_text(client, root / "AGENTS.md")
    assert await wait_for_diagnostics(client, agents, lambda items: True) == []

    token = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
    change_text(client, agents, 2, f"on disk\nédité: {token}\n")
    [warning] = await wait_for_diagnostics(client, agents, bool)
    assert warning.code == "secret"
    assert warning.severity == types.DiagnosticSeverity.Warning
    start_column = 9 if session.client_name == "neovim" else 7  # "é": 2 bytes, 1 unit
    assert span(warning) == (1, start_column, 1, start_column + len(token))

    change_text(client, agents, 3, "   \n")
    [empty] = await wait_for_diagnostics(
        client, agents, lambda items: bool(by_code(items, "empty_source"))
    )
    assert empty.severity == types.DiagnosticSeverity.Warning
    assert "once saved" in empty.message

    # Agents read the disk: the unsaved buffer changes nothing they get.
    snapshot = await effective(client, uri(root / "main.go"))
    assert [s["content"] for s in snapshot["sources"]] == ["on disk\n"]

    change_text(client, agents, 4, "on disk\n")
    assert await wait_for_diagnostics(client, agents, lambda items: not items) == []
    close(client, agents)
    session.remove_folder(root)


async def test_a_change_reaching_1000_open_documents(session: Session) -> None:
    client = session.client
    files: dict[str, str | bytes] = {"AGENTS.md": "root\n"}
    for d in range(50):
        files[f"pkg{d}/AGENTS.md"] = f"package {d}\n"
        for f in range(20):
            files[f"pkg{d}/file{f}.go"] = "package x\n"
    root = await session.add_folder(files)
    workspace_id = workspace_id_of(session, root)
    docs = [open_text(client, root / rel, "package x\n") for rel in files if rel.endswith(".go")]
    assert len(docs) == 1000
    agents = open_text(client, root / "AGENTS.md")
    nested = [open_text(client, root / f"pkg{d}/AGENTS.md") for d in range(50)]

    async def lens_title() -> str:
        result = await within(
            client.text_document_code_lens_async(
                types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=agents))
            )
        )
        assert result is not None
        assert result[0].command is not None
        return result[0].command.title

    assert await lens_title() == "rutter: applies to 1000 open files"

    (root / "AGENTS.md").write_text("root, changed\n")
    client.instruction_changes.clear()
    began = time.monotonic()
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[
                types.FileEvent(uri=uri(root / "AGENTS.md"), type=types.FileChangeType.Changed)
            ]
        )
    )
    # The server keeps answering while it re-runs discovery for the open documents.
    latencies = []
    for doc in docs[::100]:
        asked = time.monotonic()
        snapshot = await effective(client, doc)
        latencies.append(time.monotonic() - asked)
        assert snapshot["sources"][0]["path"] == "AGENTS.md"
    assert max(latencies) < 2.0, latencies
    await wait_until(lambda: session.changes_for(workspace_id), what="rutter/instructionsChanged")
    assert time.monotonic() - began < 20
    assert session.changes_for(workspace_id) == [["AGENTS.md"]]
    assert await lens_title() == "rutter: applies to 1000 open files"
    for doc in [*docs, agents, *nested]:
        close(client, doc)
    session.remove_folder(root)


async def test_a_deep_change_rediscovers_what_it_reaches_and_keeps_the_rest(
    session: Session,
) -> None:
    """Only the directories at or below a changed file's level are discovered again; the
    answers for the others are kept, and every answer stays the one a full pass would give."""
    client = session.client
    files: dict[str, str | bytes] = {
        "AGENTS.md": "root\n",
        "a/AGENTS.md": "a\n",
        "a/deep/x.go": "package x\n",
        "a/y.go": "package y\n",
        "b/AGENTS.md": "b\n",
        "b/z.go": "package z\n",
        "ab/w.go": "package w\n",  # a sibling whose name starts like `a`: not reached
    }
    root = await session.add_folder(files)
    workspace_id = workspace_id_of(session, root)
    docs = [open_text(client, root / rel) for rel in files if rel.endswith(".go")]
    root_agents = open_text(client, root / "AGENTS.md")
    a_agents = open_text(client, root / "a/AGENTS.md")

    async def lens(doc: str) -> str:
        result = await within(
            client.text_document_code_lens_async(
                types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=doc))
            )
        )
        assert result is not None
        assert result[0].command is not None
        return result[0].command.title

    async def changed(rel: str, content: bytes) -> None:
        (root / rel).write_bytes(content)
        client.instruction_changes.clear()
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                changes=[types.FileEvent(uri=uri(root / rel), type=types.FileChangeType.Changed)]
            )
        )
        await wait_until(lambda: session.changes_for(workspace_id), what="instructionsChanged")
        assert session.changes_for(workspace_id) == [[rel]]

    assert await lens(root_agents) == "rutter: applies to 4 open files"
    assert await lens(a_agents) == "rutter: applies to 2 open files"
    # a/AGENTS.md fails: the two documents under a/ get nothing; b/ and ab/ keep theirs.
    await changed("a/AGENTS.md", b"a\n\xfe\n")
    assert await wait_for_diagnostics(client, a_agents, bool)
    assert await lens(root_agents) == "rutter: applies to 2 open files"
    await changed("a/AGENTS.md", b"a, repaired\n")
    assert await wait_for_diagnostics(client, a_agents, lambda items: not items) == []
    assert await lens(root_agents) == "rutter: applies to 4 open files"
    assert await lens(a_agents) == "rutter: applies to 2 open files"
    # A change at the root reaches every directory.
    await changed("AGENTS.md", b"root\n\xfe\n")
    assert await wait_for_diagnostics(client, root_agents, bool)
    for doc in docs:
        failing = await effective(client, doc)
        assert failing["error"]["code"] == "invalid_utf8"
    for doc in [*docs, root_agents, a_agents]:
        close(client, doc)
    session.remove_folder(root)


async def test_opening_and_closing_discover_only_new_directories_with_current_answers(
    session: Session,
) -> None:
    """Opening or closing a document rebuilds the index from the directories it already holds
    plus the new ones; what the editor is told stays what discovery answers now, including for
    a directory that changed on disk while none of its documents was open."""
    client = session.client
    files: dict[str, str | bytes] = {
        "AGENTS.md": "root\n", "a/x.go": "package x\n", "b/y.go": "package y\n",
    }  # fmt: skip
    root = await session.add_folder(files)
    workspace_id = workspace_id_of(session, root)
    root_agents = open_text(client, root / "AGENTS.md")

    async def lens(doc: str) -> str:
        result = await within(
            client.text_document_code_lens_async(
                types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=doc))
            )
        )
        assert result is not None
        assert result[0].command is not None
        return result[0].command.title

    async def created(rel: str, content: str) -> None:
        (root / rel).write_text(content)
        client.instruction_changes.clear()
        notify = types.FileEvent(uri=uri(root / rel), type=types.FileChangeType.Created)
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(changes=[notify])
        )
        await wait_until(lambda: session.changes_for(workspace_id), what="instructionsChanged")

    def stack_of(rel: str) -> list[str]:
        found = discover(workspace_id, str(root), rel, reader=FileReader())
        return [source.path for source in found.sources]

    async def answered(doc: str, rel: str) -> None:
        answer = await effective(client, doc)
        assert [source["path"] for source in answer["sources"]] == stack_of(rel)

    x = open_text(client, root / "a/x.go")
    assert await lens(root_agents) == "rutter: applies to 1 open file"
    await created("b/AGENTS.md", "b\n")  # no document of b/ is open
    y = open_text(client, root / "b/y.go")
    await answered(y, "b/y.go")
    assert "b/AGENTS.md" in stack_of("b/y.go")
    assert await lens(root_agents) == "rutter: applies to 2 open files"
    close(client, x)
    assert await lens(root_agents) == "rutter: applies to 1 open file"
    await created("a/AGENTS.md", "a\n")  # a/ is no longer indexed
    x = open_text(client, root / "a/x.go")
    await answered(x, "a/x.go")
    assert await lens(root_agents) == "rutter: applies to 2 open files"
    b_agents = open_text(client, root / "b/AGENTS.md")
    assert await lens(b_agents) == "rutter: applies to 1 open file"
    for doc in (x, y, root_agents, b_agents):
        close(client, doc)
    session.remove_folder(root)


async def test_a_request_waiting_for_a_file_to_settle_lets_others_through(
    session: Session,
) -> None:
    """Issue 12 item 3: a request whose discovery meets an instruction file written moments
    ago waits for it to settle off the disk worker, so a request sent after it (that needs no
    such file) is answered first; its own answer is that of a fresh discovery of the file. The
    file is stamped ahead, so it is still unsettled however slow the machine is."""
    client = session.client
    root = await session.add_folder(
        {"a/AGENTS.md": "a before\n", "a/x.go": "", "b/AGENTS.md": "b\n", "b/y.go": ""}
    )
    a_uri, b_uri = uri(root / "a/x.go"), uri(root / "b/y.go")
    await session.served(b_uri)  # b's files are settled from here on
    agents = root / "a/AGENTS.md"
    agents.write_text("a after\n")
    ahead = time.time() + 3600
    os.utime(agents, (ahead, ahead))

    protocol: Any = client.protocol
    answered: list[str] = []
    pending: list[asyncio.Future[Any]] = []
    for name, doc in (("a", a_uri), ("b", b_uri)):
        future = asyncio.ensure_future(  # tasks start, and so send, in creation order
            protocol.send_request_async(
                "rutter/effectiveInstructions", {"textDocument": {"uri": doc}}
            )
        )
        future.add_done_callback(lambda _, name=name: answered.append(name))
        pending.append(future)
    first, second = await within(asyncio.gather(*pending))
    assert answered == ["b", "a"]
    assert [s["content"] for s in plain(second)["sources"]] == ["b\n"]
    fresh = discover(workspace_id_of(session, root), str(root), "a/x.go", reader=FileReader())
    assert [s["content"] for s in plain(first)["sources"]] == ["a after\n"]
    assert [s.content for s in fresh.sources] == ["a after\n"]
    assert [(s["path"], s["content"]) for s in plain(first)["sources"]] == [
        (s.path, s.content) for s in fresh.sources
    ]
    session.remove_folder(root)


async def test_configuration_change_moves_to_another_store(session: Session) -> None:
    """Last in the module: it switches the server's store."""
    client = session.client
    other = session.base / "other-home"
    url = f"sqlite:///{other / 'other.db'}"
    client.set_configuration({"databaseUrl": url, "logLevel": "debug"}, section="rutter")
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"rutter": {"databaseUrl": url}})
    )

    def in_other_store() -> list[str]:
        if not (other / "other.db").exists():
            return []
        from rutter_core.store import open_store
        from rutter_core.workspaces.service import list_workspaces

        with open_store(url) as store:
            return [ws.workspace_id for ws in list_workspaces(store)]

    assert await wait_until(in_other_store, what="registration in the new store") == ["first"]
    root = await session.add_folder({"AGENTS.md": "new store\n"}, "After Switch")
    assert "after-switch" in in_other_store()
    assert all(ws.root != str(root) for ws in registered(session.home))
    await wait_until(
        lambda: any("settings applied: logLevel=debug" in m.message for m in client.log_messages),
        what="window/logMessage about the new settings",
    )
