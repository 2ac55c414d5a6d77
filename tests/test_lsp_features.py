"""The language server end to end, read-only features (issue 3), once per client capability set.

One server per capability set serves a fixture tree for the whole module: workspace folder
registration, `rutter/effectiveInstructions` (request and command), hover, code lens, and
diagnostics for every fail-closed case and for secrets. Real files, a real subprocess.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from rutter_core.discovery.fsread import FileReader
from rutter_core.discovery.walk import discover
from rutter_core.store import open_store
from rutter_core.workspaces.service import register_workspace
from rutter_lsp.settings import plain
from tests.conftest import write_tree
from tests.lsp_client import (
    CLIENTS,
    RutterClient,
    by_code,
    capabilities,
    effective,
    execute,
    folder,
    open_text,
    registered,
    rejection,
    request,
    span,
    start,
    stop,
    uri,
    wait_for_diagnostics,
    within,
)
from tests.testing import THIS_MACHINE

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
SECRET_PREFIX = "- 日本語 😀 token: "
BAD_UTF8 = b"line one\ncaf\xc3\xa9 \xff bad\n"

DEMO: dict[str, str | bytes] = {
    "AGENTS.md": "root workflow\n",
    "CLAUDE.md": "claude root\n",
    ".prayu/instructions.ignore": "# private rules stay out\n.prayu/rules/private.md\n",
    ".prayu/rules/style.md": "use tabs\n",
    ".prayu/rules/private.md": "private plan\n",
    "internal/AGENTS.md": "internal rules\n",
    "internal/parser/input.go": "package parser\n",
    "svc/AGENTS.md": "old svc rules\n",
    "svc/AGENTS.override.md": "svc override\n",
    "svc/main.go": "package main\n",
    "cmd/tool.go": "package main\n",
    "notes/CLAUDE.md": f"# Notes\n{SECRET_PREFIX}{TOKEN}\n",
    "bad-symlink/real.md": "target of the link\n",
    "bad-large/.prayu/rules/big.md": "a\n" * 35_000,
    "bad-utf8/AGENTS.md": BAD_UTF8,
    "bad-utf8/x.go": "package x\n",
    "bad-nul/CLAUDE.md": b"ok\nab\x00cd\n",
    "bad-empty/AGENTS.md": "  \n",
}


@dataclass
class Session:
    client: RutterClient
    client_name: str
    home: Path
    demo: Path
    broken: Path
    chosen: Path
    twin: Path
    outside: Path
    encoding: str
    docs: dict[str, str]
    """Workspace-relative path in `demo` (or `broken:`-prefixed) → URI of the open document."""


def build_tree(base: Path) -> dict[str, Path]:
    demo = base / "demo"
    write_tree(demo, DEMO)
    (demo / "bad-symlink" / "AGENTS.md").symlink_to("missing.md")  # dangling: refused
    (demo / "bad-fifo").mkdir()
    os.mkfifo(demo / "bad-fifo" / "CLAUDE.md")
    broken = base / "broken-ignore"
    write_tree(
        broken,
        {
            "AGENTS.md": "x\n",
            "CLAUDE.md": b"x\x00",
            ".prayu/instructions.ignore": "# ok\n*.tmp\n../x\n",
        },
    )
    chosen = base / "pre-registered"
    write_tree(chosen, {"AGENTS.md": "chosen\n"})
    twin = base / "other" / "demo"
    write_tree(twin, {"AGENTS.md": "twin\n"})
    outside = base / "outside"
    write_tree(outside, {"README.md": "not served\n"})
    return {
        "demo": demo.resolve(),
        "broken": broken.resolve(),
        "chosen": chosen.resolve(),
        "twin": twin.resolve(),
        "outside": outside.resolve(),
    }


OPEN_IN_DEMO = [
    "internal/parser/input.go",
    "svc/main.go",
    "cmd/tool.go",
    "AGENTS.md",
    "internal/AGENTS.md",
    "svc/AGENTS.md",
    ".prayu/rules/private.md",
    ".prayu/instructions.ignore",
    "notes/CLAUDE.md",
    "bad-symlink/AGENTS.md",
    "bad-large/.prayu/rules/big.md",
    "bad-utf8/AGENTS.md",
    "bad-nul/CLAUDE.md",
    "bad-fifo/CLAUDE.md",
    "bad-empty/AGENTS.md",
]


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=CLIENTS)
async def session(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Session]:
    client_name: str = request.param
    base = tmp_path_factory.mktemp(f"lsp-{client_name}")
    paths = build_tree(base)
    home = base / "home"
    with open_store(f"sqlite:///{home / 'rutter.db'}") as store:
        register_workspace(store, "chosen", paths["chosen"], cwd=base, machine=THIS_MACHINE)
    client = await start(
        home,
        capabilities(client_name),
        [
            folder(paths["demo"], "Demo Project"),
            folder(paths["broken"]),
            folder(paths["chosen"]),
            folder(paths["twin"], "Demo Project"),
        ],
    )
    assert client.initialize_result is not None
    encoding = client.initialize_result.capabilities.position_encoding or "utf-16"
    docs = {rel: open_text(client, paths["demo"] / rel) for rel in OPEN_IN_DEMO}
    docs["broken:ignore"] = open_text(client, paths["broken"] / ".prayu/instructions.ignore")
    docs["broken:AGENTS.md"] = open_text(client, paths["broken"] / "AGENTS.md")
    docs["broken:CLAUDE.md"] = open_text(client, paths["broken"] / "CLAUDE.md")
    yield Session(
        client, client_name, home, paths["demo"], paths["broken"], paths["chosen"],
        paths["twin"], paths["outside"], str(encoding), docs,
    )  # fmt: skip
    await stop(client)


# -- initialize and workspace folders -------------------------------------------------------


async def test_initialize_registers_each_folder(session: Session) -> None:
    result = session.client.initialize_result
    assert result is not None
    assert result.server_info is not None
    assert result.server_info.name == "rutter"
    caps = result.capabilities
    assert caps.hover_provider
    assert caps.code_lens_provider is not None
    assert caps.execute_command_provider is not None
    assert {"rutter.effectiveInstructions", "rutter.showApplicableFiles"} <= set(
        caps.execute_command_provider.commands
    )
    # Neither capability set can be asked to re-pull after a disk change: push only.
    assert caps.diagnostic_provider is None
    expected_encoding = "utf-8" if session.client_name == "neovim" else "utf-16"
    assert session.encoding == expected_encoding

    await effective(session.client, uri(session.demo / "AGENTS.md"))  # waits for `initialized`
    roots = {ws.root: ws.workspace_id for ws in registered(session.home)}
    assert roots == {
        str(session.demo): "demo-project",  # from the folder name
        str(session.broken): "broken-ignore",
        str(session.chosen): "chosen",  # an existing registration of the root is reused
        str(session.twin): "demo-project-2",  # the same name again: a numeric suffix
    }


# -- rutter/effectiveInstructions -----------------------------------------------------------


async def test_effective_instructions_for_several_files(session: Session) -> None:
    client, demo = session.client, session.demo
    parser = await effective(client, uri(demo / "internal/parser/input.go"))
    assert parser["protocol_version"] == "project_instruction_snapshot.v1"
    assert parser["workspace_id"] == "demo-project"
    assert parser["target_path"] == "internal/parser/input.go"
    assert [s["path"] for s in parser["sources"]] == [
        "AGENTS.md",
        "CLAUDE.md",
        ".prayu/rules/style.md",
        "internal/AGENTS.md",
    ]
    assert [s["precedence"] for s in parser["sources"]] == [0, 1, 10, 100]
    assert parser["sources"][3]["why_effective"] == (
        "internal/AGENTS.md; inherited by internal/parser/input.go (depth 1); "
        "overrides AGENTS.md where they conflict"
    )
    assert parser["ignored"] == [
        {
            "path": ".prayu/rules/private.md",
            "reason": "ignore_file",
            "line": 2,
            "pattern": ".prayu/rules/private.md",
        }
    ]
    assert parser["conflicts"] == [
        {
            "role": "agents",
            "lower_precedence_path": "AGENTS.md",
            "higher_precedence_path": "internal/AGENTS.md",
            "resolution": "both apply; internal/AGENTS.md is nearer to the target and wins "
            "where they conflict",
        }
    ]
    # Exactly what the core delivers for the same tree.
    core = discover("demo-project", str(demo), "internal/parser/input.go", reader=FileReader())
    assert parser["fingerprint"] == core.fingerprint

    service = await effective(client, uri(demo / "svc/main.go"))
    assert [s["path"] for s in service["sources"]][-1] == "svc/AGENTS.override.md"
    assert {
        "path": "svc/AGENTS.md",
        "reason": "superseded",
        "superseded_by": "svc/AGENTS.override.md",
    } in service["ignored"]

    tool = await effective(client, uri(demo / "cmd/tool.go"))
    assert [s["path"] for s in tool["sources"]] == [
        "AGENTS.md",
        "CLAUDE.md",
        ".prayu/rules/style.md",
    ]

    notes = await effective(client, uri(demo / "notes/CLAUDE.md"))
    [redacted] = [s for s in notes["sources"] if s["path"] == "notes/CLAUDE.md"]
    assert redacted["redacted"] is True
    assert redacted["redactions"] == [{"kind": "github_token", "count": 1}]
    assert TOKEN not in redacted["content"]

    # A file of another folder is answered from its own workspace.
    twin = await effective(client, uri(session.twin / "main.go"))
    assert twin["workspace_id"] == "demo-project-2"
    assert [s["content"] for s in twin["sources"]] == ["twin\n"]


async def test_command_form_gives_the_same_snapshot(session: Session) -> None:
    target = uri(session.demo / "internal/parser/input.go")
    by_request = await effective(session.client, target)
    by_command = await execute(session.client, "rutter.effectiveInstructions", target)
    assert by_command["fingerprint"] == by_request["fingerprint"]
    assert by_command["sources"] == [
        {**source, "loaded_at": by_command["sources"][i]["loaded_at"]}
        for i, source in enumerate(by_request["sources"])
    ]


async def failure(pending: Awaitable[object]) -> JsonRpcException:
    return await rejection(pending)


def document(error: JsonRpcException) -> dict[str, Any]:
    """The error document a failed custom request carries as the JSON-RPC error's `data`."""
    data = plain(error.data)
    assert isinstance(data, dict), error
    assert error.message == f"{data['code']}: {data['message']}"
    return data


async def test_failures_are_jsonrpc_errors_with_the_error_document(session: Session) -> None:
    client = session.client

    def ask(path: Path) -> Awaitable[object]:
        return request(client, "rutter/effectiveInstructions", {"textDocument": {"uri": uri(path)}})

    failed = await failure(ask(session.demo / "bad-utf8/x.go"))
    assert failed.code == types.LSPErrorCodes.RequestFailed
    body = document(failed)
    assert body == {
        "code": "invalid_utf8",
        "message": body["message"],
        "path": "bad-utf8/AGENTS.md",
        "details": {"offset": 15},
    }
    assert "UTF-8" in body["message"]

    ignore = document(await failure(ask(session.broken / "main.go")))
    assert ignore["code"] == "invalid_ignore"
    assert ignore["details"] == {"line": 3}

    outside_path = session.outside / "README.md"
    outside = await failure(ask(outside_path))
    assert outside.code == types.LSPErrorCodes.RequestFailed
    assert document(outside)["code"] == "not_registered"
    assert document(outside)["path"] == str(outside_path)
    assert "workspace" in document(outside)["message"]

    by_command = await failure(execute(client, "rutter.effectiveInstructions", uri(outside_path)))
    assert by_command.code == types.LSPErrorCodes.RequestFailed
    assert document(by_command) == document(outside)

    # The helper the other tests use shows a failure as editors do: the typed document.
    assert await effective(client, uri(outside_path)) == {"error": document(outside)}


@pytest.mark.parametrize(
    ("params", "problem", "listed"),
    [
        ({}, "missing field 'textDocument'", {"field": "textDocument", "rule": "missing"}),
        ({"uri": "file:///x.go"}, "unknown field 'uri'", {"field": "uri", "rule": "unknown_field"}),
        (
            {"textDocument": {"uri": "file:///x.go", "version": 1}},
            "unknown field 'textDocument.version'",
            {"field": "textDocument.version", "rule": "unknown_field"},
        ),
        (
            {"textDocument": {"uri": 3}},
            "'textDocument.uri'",
            {"field": "textDocument.uri", "rule": "string_type"},
        ),
    ],
)
async def test_malformed_request_is_invalid_params(
    session: Session, params: dict[str, Any], problem: str, listed: dict[str, Any]
) -> None:
    refused = await failure(request(session.client, "rutter/effectiveInstructions", params))
    assert refused.code == types.ErrorCodes.InvalidParams
    body = document(refused)
    assert body["code"] == "invalid_params"
    assert problem in body["message"]
    # Listed as every surface lists them: field and rule, never the value.
    assert listed in body["details"]["problems"]
    assert "file:///x.go" not in str(body)


async def test_an_unknown_field_is_not_named(session: Session) -> None:
    # A key is the client's text as much as a value: it may hold a secret.
    key = "ghp_" + "unknownFieldNamedLikeAToken0123456789"
    params = {"textDocument": {"uri": "file:///x.go"}, key: 1}
    refused = await failure(request(session.client, "rutter/effectiveInstructions", params))
    body = document(refused)
    assert body["code"] == "invalid_params"
    assert "an unknown field" in body["message"]
    assert body["details"]["problems"] == [{"field": None, "rule": "unknown_field"}]
    assert key not in str(body)


async def test_malformed_command_arguments_are_invalid_params(session: Session) -> None:
    client = session.client
    for command in ("rutter.effectiveInstructions", "rutter.showApplicableFiles"):
        refused = await failure(execute(client, command))
        assert refused.code == types.ErrorCodes.InvalidParams
        assert document(refused)["code"] == "invalid_params"
    target = uri(session.demo / "cmd/tool.go")
    extra = await failure(execute(client, "rutter.effectiveInstructions", target, "more"))
    assert document(extra)["code"] == "invalid_params"


# -- hover ----------------------------------------------------------------------------------


async def hover_text(session: Session, rel: str, line: int = 0) -> str:
    result = await within(
        session.client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=session.docs[rel]),
                position=types.Position(line=line, character=0),
            )
        )
    )
    assert result is not None
    assert isinstance(result.contents, types.MarkupContent)
    assert result.contents.kind == types.MarkupKind.Markdown
    return result.contents.value


async def test_hover_on_effective_agents_md(session: Session) -> None:
    text = await hover_text(session, "AGENTS.md")
    assert "`AGENTS.md` — **effective**" in text
    assert "- kind: `agents`" in text
    assert "- scope: `.` (depth 0)" in text
    assert "- precedence: 0 (ordinal 1 of 3)" in text
    assert "- why: workspace-root AGENTS.md; applies to the whole workspace (depth 0)" in text
    assert (
        "- applies to 3 open file(s): `cmd/tool.go`, `internal/parser/input.go`, `svc/main.go`"
        in text
    )
    assert "`agents`: `internal/AGENTS.md` is nearer to its targets and wins" in text


async def test_hover_on_nested_agents_md_shows_what_it_overrides(session: Session) -> None:
    text = await hover_text(session, "internal/AGENTS.md")
    assert "- scope: `internal` (depth 1)" in text
    assert "- precedence: 100" in text
    assert "- applies to 1 open file(s): `internal/parser/input.go`" in text
    assert "`agents`: overrides `AGENTS.md` where they conflict" in text


async def test_hover_on_superseded_agents_md(session: Session) -> None:
    text = await hover_text(session, "svc/AGENTS.md")
    assert "**superseded by svc/AGENTS.override.md**" in text
    assert "- superseded by `svc/AGENTS.override.md`" in text
    assert "- precedence: 100 if it were delivered" in text
    assert "applies to" not in text


async def test_hover_on_ignored_rule(session: Session) -> None:
    text = await hover_text(session, ".prayu/rules/private.md")
    assert "**ignored by .prayu/instructions.ignore:2**" in text
    assert "- ignored by `.prayu/instructions.ignore:2` (pattern `.prayu/rules/private.md`)" in text
    assert "- kind: `prayu_rule`" in text


async def test_hover_on_the_ignore_file(session: Session) -> None:
    text = await hover_text(session, ".prayu/instructions.ignore", line=1)
    assert "control file" in text
    assert "- line 2 (`.prayu/rules/private.md`) ignores:\n  - `.prayu/rules/private.md`" in text
    elsewhere = await hover_text(session, ".prayu/instructions.ignore", line=0)
    assert "ignores:" not in elsewhere
    assert "- `.prayu/rules/private.md` by line 2" in elsewhere


async def test_hover_on_a_broken_file(session: Session) -> None:
    text = await hover_text(session, "bad-utf8/AGENTS.md")
    assert "**fails closed: invalid_utf8**" in text
    assert "offset 15" in text


async def test_no_hover_outside_instruction_files(session: Session) -> None:
    result = await within(
        session.client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(
                    uri=session.docs["internal/parser/input.go"]
                ),
                position=types.Position(line=0, character=0),
            )
        )
    )
    assert result is None


# -- code lens ------------------------------------------------------------------------------


async def lens(session: Session, rel: str) -> types.CodeLens:
    result = await within(
        session.client.text_document_code_lens_async(
            types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=session.docs[rel]))
        )
    )
    assert result is not None
    [only] = result
    assert only.range.start == types.Position(line=0, character=0)
    assert only.command is not None
    return only


async def test_code_lens(session: Session) -> None:
    root = await lens(session, "AGENTS.md")
    assert root.command is not None
    assert root.command.title == "rutter: applies to 3 open files"
    assert root.command.command == "rutter.showApplicableFiles"
    assert root.command.arguments is not None
    assert root.command.arguments[0] == session.docs["AGENTS.md"]
    listed = root.command.arguments[1]
    assert isinstance(listed, list)
    assert sorted(listed) == sorted(
        session.docs[rel] for rel in ("cmd/tool.go", "internal/parser/input.go", "svc/main.go")
    )

    superseded = await lens(session, "svc/AGENTS.md")
    assert superseded.command is not None
    assert superseded.command.title == "rutter: superseded by svc/AGENTS.override.md"
    ignored = await lens(session, ".prayu/rules/private.md")
    assert ignored.command is not None
    assert ignored.command.title == "rutter: ignored by .prayu/instructions.ignore:2"

    shown = await execute(session.client, "rutter.showApplicableFiles", *root.command.arguments)
    assert len(shown["files"]) == 3
    assert any(
        "AGENTS.md applies to 3 open file(s): cmd/tool.go, internal/parser/input.go, svc/main.go"
        in message.message
        for message in session.client.messages
    )


# -- diagnostics ----------------------------------------------------------------------------


async def error_of(session: Session, key: str, code: str) -> types.Diagnostic:
    found = await wait_for_diagnostics(
        session.client, session.docs[key], lambda items: bool(by_code(items, code))
    )
    errors = [item for item in found if item.severity == types.DiagnosticSeverity.Error]
    assert [item.code for item in errors] == [code]  # exactly one Error, located here
    assert errors[0].source == "rutter"
    return errors[0]


async def test_error_for_symlinked_agents_md(session: Session) -> None:
    item = await error_of(session, "bad-symlink/AGENTS.md", "symlink")
    assert span(item)[:2] == (0, 0)
    assert "is a link that discovery cannot follow: it is dangling" in item.message


async def test_error_for_oversized_rule(session: Session) -> None:
    item = await error_of(session, "bad-large/.prayu/rules/big.md", "too_large")
    assert span(item) == (0, 0, 0, 1)
    assert "70000 bytes" in item.message


async def test_error_at_the_invalid_utf8_byte(session: Session) -> None:
    item = await error_of(session, "bad-utf8/AGENTS.md", "invalid_utf8")
    # "café " precedes the bad byte on line 1: 5 UTF-16 code units, 6 UTF-8 bytes.
    column = 6 if session.encoding == "utf-8" else 5
    assert span(item) == (1, column, 1, column + 1)


async def test_error_on_the_invalid_ignore_line(session: Session) -> None:
    item = await error_of(session, "broken:ignore", "invalid_ignore")
    assert span(item) == (2, 0, 2, 4)
    assert "line 3" in item.message


async def test_error_at_the_nul_byte(session: Session) -> None:
    item = await error_of(session, "bad-nul/CLAUDE.md", "nul_byte")
    assert span(item) == (1, 2, 1, 3)


async def test_error_for_a_fifo(session: Session) -> None:
    item = await error_of(session, "bad-fifo/CLAUDE.md", "not_regular_file")
    assert span(item)[:2] == (0, 0)
    assert "FIFO" in item.message


async def test_error_for_an_empty_source(session: Session) -> None:
    item = await error_of(session, "bad-empty/AGENTS.md", "empty_source")
    assert span(item)[:2] == (0, 0)


async def test_secret_warning_has_the_exact_range(session: Session) -> None:
    found = await wait_for_diagnostics(session.client, session.docs["notes/CLAUDE.md"], bool)
    [item] = found
    assert item.severity == types.DiagnosticSeverity.Warning
    assert item.code == "secret"
    assert "this will be redacted before any agent sees it (kind github_token)" in item.message
    # The prefix holds CJK characters and an emoji: columns differ per encoding.
    if session.encoding == "utf-8":
        start = len(SECRET_PREFIX.encode("utf-8"))
        assert start == 24
    else:
        start = len(SECRET_PREFIX) + 1  # the emoji is a surrogate pair in UTF-16
        assert start == 16
    assert span(item) == (1, start, 1, start + len(TOKEN))


async def test_information_for_superseded_and_ignored(session: Session) -> None:
    superseded = await wait_for_diagnostics(session.client, session.docs["svc/AGENTS.md"], bool)
    assert [(d.severity, d.code) for d in superseded] == [
        (types.DiagnosticSeverity.Information, "superseded")
    ]
    assert "superseded by svc/AGENTS.override.md" in superseded[0].message
    ignored = await wait_for_diagnostics(
        session.client, session.docs[".prayu/rules/private.md"], bool
    )
    assert [(d.severity, d.code) for d in ignored] == [
        (types.DiagnosticSeverity.Information, "ignore_file")
    ]
    assert "ignored by .prayu/instructions.ignore:2" in ignored[0].message


async def test_healthy_files_have_no_diagnostics(session: Session) -> None:
    for rel in ("internal/AGENTS.md", ".prayu/instructions.ignore"):
        assert await wait_for_diagnostics(session.client, session.docs[rel], lambda i: True) == []
    # Only what an agent profile says (issue 20): the CLAUDE.md beside it does not import it.
    root = await wait_for_diagnostics(session.client, session.docs["AGENTS.md"], lambda i: True)
    assert [(d.severity, d.code) for d in root] == [
        (types.DiagnosticSeverity.Information, "not_read")
    ]
    # Diagnostics are only for instruction files.
    assert session.docs["internal/parser/input.go"] not in session.client.diagnostics


async def test_a_file_behind_another_files_failure(session: Session) -> None:
    """Discovery stops at the invalid ignore file: a healthy file gets no Error (the hover says
    why nothing is delivered), a broken one still gets its own Error."""
    healthy = session.docs["broken:AGENTS.md"]
    assert await wait_for_diagnostics(session.client, healthy, lambda items: True) == []
    text = await hover_text(session, "broken:AGENTS.md")
    assert "**not delivered: discovery fails closed at .prayu/instructions.ignore" in text
    assert "fails closed at `.prayu/instructions.ignore` (`invalid_ignore`)" in text
    item = await error_of(session, "broken:CLAUDE.md", "nul_byte")
    assert span(item) == (0, 1, 0, 2)
