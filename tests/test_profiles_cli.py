"""Agent profiles through the CLI process (`rutter context instructions --as AGENT`) and the MCP
stdio client (`effective_instructions` with `agent`), on a real git repository (issue 20,
docs/reference/profiles.md)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write_tree
from tests.mcp_client import Env, call, failure, mcp_client
from tests.testing import Cli


@pytest.fixture(autouse=True)
def agent_homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty home: the agents' user settings of whoever runs the tests never count."""
    home = tmp_path / "empty-user-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CODEX_HOME", raising=False)


SOURCE_KEYS = {"path", "why", "truncation"}


def git_init(path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(path)], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path, workspace_root: Path) -> Cli:
    """A workspace holding a git repository in `app/` (the project root agents start from)."""
    write_tree(
        workspace_root,
        {
            "AGENTS.md": "workspace root: outside the repository\n",
            "app/AGENTS.md": "a" * 30_000 + "\n",
            "app/src/AGENTS.md": "é" * 2_000 + "\n",
            "app/src/main.go": "package main\n",
            "app/CLAUDE.md": "@AGENTS.md\n",
            "app/.cursor/rules/go.mdc": "---\nglobs: **/*.go\n---\ngo\n",
        },
    )
    git_init(workspace_root / "app")
    cli = Cli(tmp_path / "home", workspace_root / "app" / "src")
    cli.json("workspace", "register", "demo", str(workspace_root))
    return cli


def test_as_codex_prints_the_contract_document_with_the_cut(repo: Cli) -> None:
    view = repo.json("context", "instructions", "--as", "codex", "--target", "main.go")
    assert set(view) == {"agent", "sources"}
    assert view["agent"] == "codex"
    assert all(set(source) == SOURCE_KEYS for source in view["sources"])
    # The git root (app/) is the project root: the workspace root's AGENTS.md is not read.
    assert [s["path"] for s in view["sources"]] == ["app/AGENTS.md", "app/src/AGENTS.md"]
    assert view["sources"][0]["truncation"] is None
    # 32,768 - 30,001 = 2,767 bytes remain: the cut splits the 1,384th é (2 bytes each).
    assert view["sources"][1]["truncation"] == {"byte": 2767, "line": 1, "lost_bytes": 1234}


def test_as_all_prints_every_profile_in_order(repo: Cli) -> None:
    views = repo.json("context", "instructions", "--as", "all", "--target", "main.go")
    assert set(views) == {"profiles"}
    found = {view["agent"]: [s["path"] for s in view["sources"]] for view in views["profiles"]}
    assert list(found) == ["codex", "claude", "gemini", "copilot", "cursor"]
    assert found["claude"] == ["app/AGENTS.md", "app/CLAUDE.md"]
    assert found["gemini"] == []
    assert found["copilot"] == ["app/src/AGENTS.md"]
    assert found["cursor"] == ["app/.cursor/rules/go.mdc", "app/AGENTS.md", "app/src/AGENTS.md"]


def test_people_read_where_each_agent_cuts_and_what_is_lost(repo: Cli) -> None:
    result = repo("context", "instructions", "--as", "codex", "--target", "main.go")
    assert result.returncode == 0, result.stderr
    assert "Codex would load 2 files for main.go, in this order:" in result.stdout
    assert "CUT: Codex keeps bytes 0-2766 and cuts at line 1; 1234 bytes are lost" in result.stdout
    whole = repo("context", "instructions", "--as", "gemini", "--target", "main.go")
    assert "Gemini CLI would load no project instruction file for main.go." in whole.stdout


def test_wrong_combinations_are_usage_errors(repo: Cli) -> None:
    for args in (
        ("--as", "vim", "--target", "main.go"),
        ("--as", "codex"),
        ("--as", "codex", "--run", "run_01M8Y3HJTQYDNPR8CJ56SS1T0B"),
    ):
        result = repo("context", "instructions", *args)
        assert result.returncode == 2, (args, result.stderr)
    assert "vim" not in repo("context", "instructions", "--as", "vim", "--target", "x").stderr


def test_a_file_an_agent_reads_fails_closed_with_a_typed_error(
    repo: Cli, workspace_root: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "private.md"
    outside.write_text("private notes\n")
    (workspace_root / "app" / "src" / "CLAUDE.md").symlink_to(outside)
    result = repo("context", "instructions", "--as", "claude", "--target", "main.go", "--json")
    assert result.returncode == 3
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "symlink"
    assert error["path"] == "app/src/CLAUDE.md"
    assert "private notes" not in result.stdout + result.stderr
    # Other agents do not read it: their views still answer.
    repo.json("context", "instructions", "--as", "codex", "--target", "main.go")


@pytest.mark.asyncio
async def test_mcp_effective_instructions_takes_an_agent(repo: Cli, workspace_root: Path) -> None:
    run: dict[str, Any] = repo.json("run", "create", "--workspace", "demo", "--goal", "g")
    env = Env(repo, workspace_root / "app", run)  # the MCP server starts in app/src
    async with mcp_client(env) as client:
        codex = await call(
            client, "effective_instructions", {"target": "main.go", "agent": "codex"}
        )
        every = await call(client, "effective_instructions", {"target": "main.go", "agent": "all"})
        default = await call(client, "effective_instructions", {"target": "main.go"})
        wrong = await failure(client, "effective_instructions", {"target": "main.go", "agent": "x"})
    assert codex == repo.json("context", "instructions", "--as", "codex", "--target", "main.go")
    assert every == repo.json("context", "instructions", "--as", "all", "--target", "main.go")
    assert default["protocol_version"] == "project_instruction_snapshot.v1"
    assert wrong["code"] == "invalid_params"


def test_the_answer_for_people_names_what_agents_load_beyond_it(repo: Cli) -> None:
    result = repo("context", "instructions", "--target", "main.go")
    assert result.returncode == 0, result.stderr
    tail = result.stdout.split("Agents also load files of their own here", 1)[1]
    assert (
        "- Cursor: app/.cursor/rules/go.mdc; see `rutter context instructions --as cursor "
        "--target main.go`"
    ) in tail
    assert "Codex" not in tail  # Codex loads nothing the answer does not deliver
    assert "Agents also load" not in repo("context", "instructions", "--target", "main.go",
                                          "--json").stdout  # fmt: skip
