"""Agent profiles in the language server (issue 20): `rutter/effectiveInstructions` with a
`profile` (and the command with one), and the agents' diagnostics on instruction files, for
both capability sets; the `agentDiagnostics` setting turns them off."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.conftest import write_tree
from tests.lsp_client import (
    CLIENTS,
    by_code,
    capabilities,
    effective,
    execute,
    folder,
    notify_watched,
    open_text,
    request,
    start,
    stop,
    uri,
    wait_for_diagnostics,
)

pytestmark = [pytest.mark.asyncio]


@pytest.fixture(autouse=True)
def agent_homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty home: the agents' user settings of whoever runs the tests never count."""
    home = tmp_path / "empty-user-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CODEX_HOME", raising=False)


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


# -- files only agents read, changed by another process ----------------------------------------


def registered_patterns(client: Any) -> list[Any]:
    return [
        watcher["globPattern"]
        for registration in client.registrations
        if registration.method == "workspace/didChangeWatchedFiles"
        for watcher in registration.register_options["watchers"]
    ]


async def codes_after(
    client: Any, doc: str, want: Callable[[list[types.Diagnostic]], bool]
) -> list[types.Diagnostic]:
    found = await wait_for_diagnostics(
        client, doc, lambda items: want([i for i in items if i.code in AGENT_CODES])
    )
    return [item for item in found if item.code in AGENT_CODES]


def has(code: str, text: str = "") -> Callable[[list[types.Diagnostic]], bool]:
    return lambda items: any(i.code == code and text in i.message for i in items)


def lacks(code: str) -> Callable[[list[types.Diagnostic]], bool]:
    return lambda items: not any(i.code == code for i in items)


@pytest.mark.parametrize("client_name", CLIENTS)
async def test_a_change_on_disk_to_each_kind_of_agent_file_updates_the_diagnostics(
    client_name: str, tmp_path: Path, workspace_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Watched (registered where the client registers watchers) and, on each change, the
    agent diagnostics of the open files are computed again from the disk."""
    home = tmp_path / "user-home"
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir(parents=True)
    (home / ".gemini").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    write_tree(
        workspace_root,
        {
            "AGENTS.md": "".join(f"line {n:05}\n" for n in range(4000)),  # 44,000 bytes
            "GEMINI.md": "g @../one.md\n",
            ".cursor/rules/go.mdc": "---\nglobs: **/*.go\n---\ngo\n",
            ".github/instructions/rs.instructions.md": '---\napplyTo: "**/*.rs"\n---\nrs\n',
        },
    )
    subprocess.run(["git", "init", "-q", str(workspace_root)], check=True, capture_output=True)
    client = await start(
        tmp_path / "rutter-home", capabilities(client_name), [folder(workspace_root)]
    )
    try:
        agents_md = open_text(client, workspace_root / "AGENTS.md")
        gemini = open_text(client, workspace_root / "GEMINI.md")
        cursor = open_text(client, workspace_root / ".cursor" / "rules" / "go.mdc")
        copilot = open_text(
            client, workspace_root / ".github" / "instructions" / "rs.instructions.md"
        )
        await codes_after(client, agents_md, has("budget_cut", "at line 2979 (byte 32768)"))
        found = await codes_after(client, gemini, has("import_outside"))
        assert len(by_code(found, "import_outside")) == 1
        await codes_after(client, cursor, has("glob_matches_nothing"))
        await codes_after(client, copilot, has("glob_matches_nothing"))
        if client_name == "visual_studio_code":
            patterns = registered_patterns(client)
            for pattern in ("**/GEMINI.md", "**/.cursor/rules/**", "**/.gemini/settings.json"):
                assert pattern in patterns
            bases = {p["pattern"] for p in patterns if not isinstance(p, str)}
            watched = capabilities(client_name).workspace
            assert watched is not None
            assert watched.did_change_watched_files is not None
            # The user's settings files, outside the workspace: where relative patterns work.
            relative = watched.did_change_watched_files.relative_pattern_support
            assert bases == ({"config.toml", "settings.json"} if relative else set())

        def changed(path: Path, text: str, kind: types.FileChangeType) -> None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            notify_watched(client, (path, kind))

        created, edited = types.FileChangeType.Created, types.FileChangeType.Changed
        # CLAUDE.local.md: Claude Code now works here and does not read AGENTS.md.
        changed(workspace_root / "CLAUDE.local.md", "local\n", created)
        await codes_after(client, agents_md, has("not_read", "Claude Code will not read"))
        # .claude/rules/**: a rule importing AGENTS.md, so Claude Code reads it after all.
        changed(workspace_root / ".claude" / "rules" / "r.md", "@../../AGENTS.md\n", created)
        await codes_after(client, agents_md, lacks("not_read"))
        # GEMINI.md rewritten by another process: two imports outside now.
        changed(workspace_root / "GEMINI.md", "@../one.md\n@../two.md\n", edited)
        await codes_after(client, gemini, lambda items: len(by_code(items, "import_outside")) == 2)
        # .cursor/rules/** and .github/instructions/**: globs that now match a file.
        changed(
            workspace_root / ".cursor" / "rules" / "go.mdc", "---\nglobs: **/*.md\n---\n", edited
        )
        await codes_after(client, cursor, lacks("glob_matches_nothing"))
        changed(
            workspace_root / ".github" / "instructions" / "rs.instructions.md",
            '---\napplyTo: "**/*.md"\n---\nmd\n', edited,
        )  # fmt: skip
        await codes_after(client, copilot, lacks("glob_matches_nothing"))
        # $CODEX_HOME/config.toml (outside the workspace): Codex's budget.
        user_config = codex_home / "config.toml"
        changed(user_config, "project_doc_max_bytes = 100\n", created)
        await codes_after(client, agents_md, has("budget_cut", "at line 10 (byte 100)"))
        # .codex/config.toml: read once the user's config trusts the project.
        key = f'"{workspace_root.resolve()}"'
        user_config.write_text(
            f'project_doc_max_bytes = 100\n[projects.{key}]\ntrust_level = "trusted"\n'
        )
        changed(workspace_root / ".codex" / "config.toml", "project_doc_max_bytes = 220\n", created)
        await codes_after(client, agents_md, has("budget_cut", "at line 21 (byte 220)"))
        # .gemini/settings.json: Gemini CLI reads OTHER.md instead of GEMINI.md.
        changed(
            workspace_root / ".gemini" / "settings.json",
            '{"context": {"fileName": "OTHER.md"}}', created,
        )  # fmt: skip
        await codes_after(client, gemini, lacks("import_outside"))
        # Profiles are views: the default discovery did not change, so nothing was announced.
        assert client.instruction_changes == []
    finally:
        await stop(client)


@pytest.mark.parametrize("client_name", CLIENTS)
async def test_a_file_named_by_the_agents_settings_is_watched_and_diagnosed(
    client_name: str, tmp_path: Path, workspace_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "user-home"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text(
        'project_doc_max_bytes = 100\nproject_doc_fallback_filenames = ["CONTEXT.md"]\n'
    )
    monkeypatch.setenv("HOME", str(home))
    write_tree(workspace_root, {"CONTEXT.md": "c" * 299 + "\n", "NOTES.md": "notes\n"})
    client = await start(
        tmp_path / "rutter-home", capabilities(client_name), [folder(workspace_root)]
    )
    try:
        context = open_text(client, workspace_root / "CONTEXT.md")
        found = await codes_after(client, context, has("budget_cut", "at line 1 (byte 100)"))
        [cut] = by_code(found, "budget_cut")
        assert cut.message.startswith("Codex will cut this file at line 1 (byte 100)")
        if client_name == "visual_studio_code":
            assert "**/CONTEXT.md" in registered_patterns(client)
        (workspace_root / "CONTEXT.md").write_text("c" * 50 + "\n")
        notify_watched(client, (workspace_root / "CONTEXT.md", types.FileChangeType.Changed))
        await codes_after(client, context, lacks("budget_cut"))
        # A name configured while the server runs: watched and diagnosed from then on.
        notes = open_text(client, workspace_root / "NOTES.md")  # not yet an agent's file
        write_tree(
            workspace_root,
            {".gemini/settings.json": '{"context": {"fileName": ["NOTES.md"]}}',
             "NOTES.md": "see @../outside.md\n"},
        )  # fmt: skip
        notify_watched(
            client, (workspace_root / ".gemini" / "settings.json", types.FileChangeType.Created)
        )
        [outside] = by_code(
            await codes_after(client, notes, has("import_outside")), "import_outside"
        )
        assert outside.message.startswith("this import is outside the workspace")
        if client_name == "visual_studio_code":
            latest = [
                r for r in client.registrations if r.method == "workspace/didChangeWatchedFiles"
            ]
            assert len(latest) == 2
            options: Any = latest[-1].register_options
            assert "**/NOTES.md" in [w["globPattern"] for w in options["watchers"]]
    finally:
        await stop(client)
