"""Agent profiles in the language server (issue 20): `rutter/effectiveInstructions` with a
`profile` (and the command with one), and the agents' diagnostics on instruction files, for
both capability sets; the `agentDiagnostics` setting turns them off."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.conftest import write_tree
from tests.test_lsp_helpers import (
    CLIENTS,
    by_code,
    capabilities,
    effective,
    execute,
    folder,
    open_text,
    request,
    start,
    stop,
    uri,
    wait_for_diagnostics,
)

pytestmark = [pytest.mark.asyncio]

AGENT_CODES = {
    "budget_cut", "budget_dropped", "not_read", "import_outside", "import_too_deep",
    "glob_matches_nothing", "excluded_agent", "too_large_skipped", "import_unreadable",
}  # fmt: skip


def tree(root: Path) -> None:
    write_tree(
        root,
        {
            "AGENTS.md": "r" * 30_000 + "\n",
            "svc/AGENTS.md": "".join(f"rule {n:04}\n" for n in range(600)),  # 6,000 bytes
            "svc/main.go": "package main\n",
            "CLAUDE.md": "# Claude\n\nSee @AGENTS.md.\nAnd @../outside.md too.\n",
            "docs/AGENTS.md": "docs agents\n",
            "docs/CLAUDE.md": "docs claude, which does not import AGENTS.md\n",
            "notes/AGENTS.md": "no CLAUDE.md here: nothing to say\n",
            ".github/instructions/rust.instructions.md": '---\napplyTo: "**/*.rs"\n---\nrust\n',
            ".github/instructions/go.instructions.md": '---\napplyTo: "**/*.go"\n---\ngo\n',
        },
    )
    subprocess.run(["git", "init", "-q", str(root)], check=True, capture_output=True)


async def agent_diagnostics(client: Any, path: Path) -> list[types.Diagnostic]:
    doc = open_text(client, path)
    found = await wait_for_diagnostics(client, doc, lambda items: True)
    return [item for item in found if item.code in AGENT_CODES]


@pytest.mark.parametrize("client_name", CLIENTS)
async def test_profiles_answer_requests_and_diagnose_instruction_files(
    client_name: str, tmp_path: Path, workspace_root: Path
) -> None:
    tree(workspace_root)
    client = await start(tmp_path / "home", capabilities(client_name), [folder(workspace_root)])
    try:
        main = open_text(client, workspace_root / "svc" / "main.go")
        codex = await request(
            client, "rutter/effectiveInstructions",
            {"textDocument": {"uri": main}, "profile": "codex"},
        )  # fmt: skip
        assert codex["agent"] == "codex"
        assert [s["path"] for s in codex["sources"]] == ["AGENTS.md", "svc/AGENTS.md"]
        # 32,768 - 30,001 = 2,767 bytes of svc/AGENTS.md (10-byte lines): cut in line 277.
        assert codex["sources"][1]["truncation"] == {
            "byte": 2767, "line": 277, "lost_bytes": 6000 - 2767,
        }  # fmt: skip
        every = await execute(client, "rutter.effectiveInstructions", main, "all")
        assert [view["agent"] for view in every["profiles"]] == [
            "codex", "claude", "gemini", "copilot", "cursor",
        ]  # fmt: skip
        assert (await effective(client, main))["protocol_version"] == (
            "project_instruction_snapshot.v1"  # without a profile: the default answer
        )
        with pytest.raises(JsonRpcException) as refused:
            await request(
                client, "rutter/effectiveInstructions",
                {"textDocument": {"uri": main}, "profile": "vim"},
            )  # fmt: skip
        assert "vim" not in str(refused.value)

        [cut] = by_code(
            await agent_diagnostics(client, workspace_root / "svc" / "AGENTS.md"), "budget_cut"
        )
        assert cut.severity == types.DiagnosticSeverity.Warning
        assert cut.source == "rutter"
        assert cut.range.start.line == 276
        assert cut.message.startswith("Codex will cut this file at line 277 (byte 2767)")
        assert "after AGENTS.md 29.3 KiB" in cut.message

        claude = await agent_diagnostics(client, workspace_root / "CLAUDE.md")
        [outside] = by_code(claude, "import_outside")
        assert outside.severity == types.DiagnosticSeverity.Information
        assert outside.range.start.line == 3
        assert not by_code(claude, "not_read")

        docs = await agent_diagnostics(client, workspace_root / "docs" / "AGENTS.md")
        [skipped] = by_code(docs, "not_read")
        assert skipped.message.startswith(
            "Claude Code will not read this AGENTS.md: CLAUDE.md in this directory does not"
        )
        notes = await agent_diagnostics(client, workspace_root / "notes" / "AGENTS.md")
        assert not by_code(notes, "not_read")
        root_agents = await agent_diagnostics(client, workspace_root / "AGENTS.md")
        assert not by_code(root_agents, "not_read")  # CLAUDE.md imports it

        rust = workspace_root / ".github" / "instructions" / "rust.instructions.md"
        [nothing] = by_code(await agent_diagnostics(client, rust), "glob_matches_nothing")
        assert nothing.severity == types.DiagnosticSeverity.Warning
        assert nothing.range.start.line == 1
        assert nothing.message.startswith("Copilot's `applyTo:` globs match no file")
        go = workspace_root / ".github" / "instructions" / "go.instructions.md"
        assert await agent_diagnostics(client, go) == []
    finally:
        await stop(client)


async def test_agent_diagnostics_can_be_turned_off(tmp_path: Path, workspace_root: Path) -> None:
    tree(workspace_root)
    client = await start(
        tmp_path / "home", capabilities("neovim"), [folder(workspace_root)],
        initialization_options={"agentDiagnostics": ["copilot"]},
    )  # fmt: skip
    try:
        # Codex is not asked: its cut is not reported; Copilot still is.
        assert await agent_diagnostics(client, workspace_root / "svc" / "AGENTS.md") == []
        rust = workspace_root / ".github" / "instructions" / "rust.instructions.md"
        assert [d.code for d in await agent_diagnostics(client, rust)] == ["glob_matches_nothing"]
        client.set_configuration({"agentDiagnostics": False}, section="rutter")
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"rutter": {"agentDiagnostics": False}})
        )
        doc = uri(rust)
        await wait_for_diagnostics(
            client, doc, lambda items: not any(i.code in AGENT_CODES for i in items)
        )
    finally:
        await stop(client)
