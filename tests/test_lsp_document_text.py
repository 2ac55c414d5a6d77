"""Which open documents' text the server keeps: only instruction files' (the buffers rutter
reads). Any other document is known as open, with its version, but its edits are not applied,
so a 5 MB minified bundle open in the editor costs nothing per keystroke."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from rutter_lsp.protocol import MAX_TRACKED_CHARS, may_need_text
from rutter_lsp.server import RutterServer
from rutter_lsp.setup import create_server


class _Writer:
    def write(self, data: bytes) -> None:
        pass

    def close(self) -> None:
        pass


def _send(server: RutterServer, method: str, params: dict[str, Any]) -> None:
    message = {"jsonrpc": "2.0", "method": method, "params": params}
    server.protocol.handle_message(
        json.loads(json.dumps(message), object_hook=server.protocol.structure_message)
    )


def _open(server: RutterServer, uri: str, text: str) -> None:
    item = {"uri": uri, "languageId": "markdown", "version": 1, "text": text}
    _send(server, "textDocument/didOpen", {"textDocument": item})


def _edit(server: RutterServer, uri: str, version: int, line: int, text: str) -> None:
    where = {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}}
    _send(
        server,
        "textDocument/didChange",
        {"textDocument": {"uri": uri, "version": version},
         "contentChanges": [{"range": where, "text": text}]},
    )  # fmt: skip


@pytest.mark.parametrize(
    ("uri", "needed"),
    [
        ("file:///w/AGENTS.md", True),
        ("file:///w/sub/CLAUDE.md", True),
        ("file:///w/.claude/CLAUDE.md", True),
        ("file:///w/.prayu/instructions.md", True),
        ("file:///w/.prayu/rules/go/style.md", True),
        ("file:///w/.prayu/instructions.ignore", True),
        ("file:///w/dist/bundle.min.js", False),
        ("file:///w/README.md", False),
        ("untitled:AGENTS.md", False),
        ("file:///w/My%20Dir/AGENTS.md", True),
    ],
)
def test_only_instruction_files_need_their_text(uri: str, needed: bool) -> None:
    assert may_need_text(uri) is needed


def _initialized(home: Path, monkeypatch: pytest.MonkeyPatch) -> RutterServer:
    monkeypatch.setenv("RUTTER_HOME", str(home))
    monkeypatch.delenv("RUTTER_DATABASE_URL", raising=False)
    server = create_server()
    server.protocol.set_writer(_Writer())
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"processId": None, "rootUri": None, "capabilities": {}}}  # fmt: skip
    server.protocol.handle_message(
        json.loads(json.dumps(request), object_hook=server.protocol.structure_message)
    )
    server.session.ready.set()  # no folders are served: the handlers only look documents up
    return server


@pytest.mark.asyncio
async def test_other_documents_keep_no_text_and_instruction_buffers_follow_edits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = _initialized(tmp_path, monkeypatch)
    bundle, agents = "file:///w/dist/bundle.min.js", "file:///w/AGENTS.md"
    _open(server, bundle, "x" * 5_000_000)
    _open(server, agents, "# Rules\n")
    for version in range(2, 6):
        _edit(server, bundle, version, 0, "y")
        _edit(server, agents, version, 1, f"- rule {version}\n")
    await asyncio.sleep(0)
    documents = server.workspace.text_documents
    assert bundle in documents
    assert documents[bundle].version == 5
    assert server.buffer(bundle) is None
    assert server.buffer(agents) == "# Rules\n- rule 5\n- rule 4\n- rule 3\n- rule 2\n"
    _send(server, "textDocument/didClose", {"textDocument": {"uri": bundle}})
    assert bundle not in server.workspace.text_documents
    assert bundle not in server.protocol.untracked


@pytest.mark.asyncio
async def test_an_instruction_buffer_past_the_bound_stops_being_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = _initialized(tmp_path, monkeypatch)
    agents = "file:///w/AGENTS.md"
    _open(server, agents, "a" * (MAX_TRACKED_CHARS - 1))
    assert server.buffer(agents) is not None
    _edit(server, agents, 2, 0, "bb")
    await asyncio.sleep(0)
    assert server.buffer(agents) is None
    assert server.workspace.text_documents[agents].version == 2
    _open(server, "file:///w/sub/AGENTS.md", "a" * (MAX_TRACKED_CHARS + 1))
    assert server.buffer("file:///w/sub/AGENTS.md") is None
