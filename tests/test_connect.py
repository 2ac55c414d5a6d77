"""`rutter connect AGENT`: real files in a real project and home directory, and for each agent
the server started exactly as its configuration says (command, arguments, environment,
directory) by the MCP SDK's client, reaching the store `rutter connect` named. Codex's server is
started with an empty environment, as Codex starts it with almost none."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.conftest import write_tree

CONFIG_FILES = {
    "claude-code": ".mcp.json",
    "codex": ".codex/config.toml",
    "gemini": ".gemini/settings.json",
    "vscode": ".vscode/mcp.json",
    "cursor": ".cursor/mcp.json",
}
SERVERS_KEY = {"codex": "mcp_servers", "vscode": "servers"}
HOOK_FILES = {"claude-code": ".claude/settings.json", "gemini": ".gemini/settings.json"}
"""Where the agents with a session-start hook keep it (Gemini CLI: beside its MCP servers)."""


@dataclass
class Setup:
    tmp: Path
    home: Path  # the person's home directory (HOME)
    store_home: Path  # RUTTER_HOME: where the store is
    root: Path  # the project, registered as `demo`

    def run(
        self, *args: str, cwd: Path | None = None, **env: str
    ) -> subprocess.CompletedProcess[str]:
        environment = {
            k: v for k, v in os.environ.items() if not k.startswith(("RUTTER_", "CODEX_"))
        }
        environment |= {"HOME": str(self.home), "RUTTER_HOME": str(self.store_home), **env}
        return subprocess.run(
            [sys.executable, "-m", "rutter", *args],
            cwd=cwd or self.root / "src", env=environment, capture_output=True, text=True,
            timeout=120, check=False,
        )  # fmt: skip

    def json(self, *args: str, code: int = 0, cwd: Path | None = None, **env: str) -> Any:
        result = self.run(*args, "--json", cwd=cwd, **env)
        assert result.returncode == code, (result.stdout, result.stderr)
        return json.loads(result.stdout)

    def error(self, *args: str, code: int, cwd: Path | None = None, **env: str) -> dict[str, Any]:
        error: dict[str, Any] = self.json(*args, code=code, cwd=cwd, **env)["error"]
        return error


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    root = tmp_path / "project"
    write_tree(root, {"AGENTS.md": "root rules\n", "src/a.go": "package a\n"})
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    home = tmp_path / "home"
    home.mkdir()
    made = Setup(tmp_path, home, tmp_path / "store-home", root)
    made.json("workspace", "register", "demo", str(root))
    return made


def entry_in(agent: str, path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    document = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    entry: dict[str, Any] = document[SERVERS_KEY.get(agent, "mcpServers")]["rutter"]
    return entry


def hook_in(path: Path) -> dict[str, Any]:
    """rutter's session-start hook in a settings file (the one running `hook session-start`)."""
    document = json.loads(path.read_text(encoding="utf-8"))
    found = [
        hook
        for group in document["hooks"]["SessionStart"]
        for hook in group["hooks"]
        if " hook session-start " in hook["command"]
    ]
    assert len(found) == 1, document
    entry: dict[str, Any] = found[0]
    return entry


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


# -- what is written, and where ---------------------------------------------------------------


@pytest.mark.parametrize("agent", sorted(CONFIG_FILES))
def test_project_scope_writes_the_agents_file_at_the_workspace_root(
    setup: Setup, agent: str
) -> None:
    answer = setup.json("connect", agent)
    path = setup.root / CONFIG_FILES[agent]
    store = f"sqlite:///{setup.store_home / 'rutter.db'}"
    hook = None
    if agent in HOOK_FILES:
        hook_path = setup.root / HOOK_FILES[agent]
        hook = {
            "event": "SessionStart", "path": str(hook_path), "entry": hook_in(hook_path),
            "changed": True, "replaced": False, "written": True,
        }  # fmt: skip
    assert answer == {
        "agent": agent, "scope": "project", "path": str(path), "server": "rutter",
        "entry": entry_in(agent, path), "changed": True, "replaced": False, "written": True,
        "dry_run": False, "store": store, "workspace_id": "demo", "hook": hook,
    }  # fmt: skip
    entry = answer["entry"]
    assert Path(entry["command"]).is_absolute()
    assert entry["args"][-3:] == ["--database-url", store, "mcp"]
    again = setup.json("connect", agent)
    assert (again["changed"], again["written"]) == (False, False)
    if hook is not None:
        assert (again["hook"]["changed"], again["hook"]["written"]) == (False, False)


def test_user_scope_keeps_the_rest_of_the_users_file(setup: Setup) -> None:
    claude = setup.home / ".claude.json"
    others: dict[str, Any] = {"other": {"type": "stdio", "command": "npx", "args": []}}
    before = {"numStartups": 3, "projects": {"/x": {"allowedTools": []}}, "mcpServers": others}
    claude.write_text(json.dumps(before, indent=2) + "\n", encoding="utf-8")
    claude.chmod(0o640)
    answer = setup.json("connect", "claude-code", "--scope", "user", cwd=setup.tmp)
    assert (answer["path"], answer["workspace_id"]) == (str(claude), None)
    after = json.loads(claude.read_text(encoding="utf-8"))
    assert after == {**before, "mcpServers": {**others, "rutter": answer["entry"]}}
    assert "cwd" not in answer["entry"]
    assert stat.S_IMODE(claude.stat().st_mode) == 0o640  # the file's permissions are kept
    assert leftovers(setup.home) == []
    # A new file in the home directory is private; Codex's home is $CODEX_HOME when set.
    codex_home = setup.tmp / "codex-home"
    answer = setup.json("connect", "codex", "--scope", "user", CODEX_HOME=str(codex_home))
    assert answer["path"] == str(codex_home / "config.toml")
    assert stat.S_IMODE((codex_home / "config.toml").stat().st_mode) == 0o600
    cursor = setup.json("connect", "cursor", "--scope", "user")
    assert cursor["path"] == str(setup.home / ".cursor" / "mcp.json")


def test_dry_run_writes_nothing_and_prints_the_change(setup: Setup) -> None:
    vscode = setup.root / ".vscode"
    answer = setup.json("connect", "vscode", "--dry-run")
    assert (answer["changed"], answer["written"], answer["dry_run"]) == (True, False, True)
    assert not vscode.exists()  # not even the directory
    existing = b'{\n  "servers": {\n    "other": {"command": "x"}\n  }\n}\n'
    write_tree(setup.root, {".vscode/mcp.json": existing})
    result = setup.run("connect", "vscode", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert (vscode / "mcp.json").read_bytes() == existing
    assert f"--- {vscode / 'mcp.json'}" in result.stdout
    assert '+    "rutter": {' in result.stdout
    assert "nothing written" in result.stdout
    assert leftovers(vscode) == []


def test_a_different_rutter_entry_needs_force(setup: Setup) -> None:
    path = setup.root / ".gemini" / "settings.json"
    old = {"mcpServers": {"rutter": {"command": "rutter", "args": ["mcp"]}}, "theme": "x"}
    write_tree(setup.root, {".gemini/settings.json": json.dumps(old)})
    error = setup.error("connect", "gemini", code=4)
    assert error["code"] == "config_conflict"
    assert "--force" in error["message"]
    assert json.loads(path.read_text(encoding="utf-8")) == old
    answer = setup.json("connect", "gemini", "--force")
    assert (answer["replaced"], answer["written"]) == (True, True)
    assert json.loads(path.read_text(encoding="utf-8"))["theme"] == "x"


def test_links_and_invalid_files_are_refused_and_left_as_they_were(setup: Setup) -> None:
    elsewhere = setup.tmp / "elsewhere.json"
    elsewhere.write_text('{"mcpServers": {}}', encoding="utf-8")
    (setup.root / ".mcp.json").symlink_to(elsewhere)
    error = setup.error("connect", "claude-code", code=3)
    assert (error["code"], error["path"]) == ("config_symlink", str(setup.root / ".mcp.json"))
    assert elsewhere.read_text(encoding="utf-8") == '{"mcpServers": {}}'
    # A linked directory on the way is refused too.
    (setup.tmp / "cursor-dir").mkdir()
    (setup.root / ".cursor").symlink_to(setup.tmp / "cursor-dir")
    assert setup.error("connect", "cursor", code=3)["code"] == "config_symlink"
    assert list((setup.tmp / "cursor-dir").iterdir()) == []
    # Not TOML: refused, the file untouched, no temporary file left.
    broken = b'model = "o3\n[mcp_servers.docs]\n'
    write_tree(setup.root, {".codex/config.toml": broken})
    error = setup.error("connect", "codex", code=3)
    assert error["code"] == "config_invalid"
    assert "o3" not in error["message"]
    assert (setup.root / ".codex" / "config.toml").read_bytes() == broken
    assert leftovers(setup.root / ".codex") == []
    # Not a regular file.
    (setup.root / ".gemini" / "settings.json").mkdir(parents=True)
    assert setup.error("connect", "gemini", code=3)["code"] == "config_invalid"


def test_an_unknown_agent_or_scope_is_refused_without_echoing_it(setup: Setup) -> None:
    error = setup.error("connect", "emacs-sentinel", code=2)
    assert (error["code"], error["details"]["allowed"]) == ("invalid_agent", list(CONFIG_FILES))
    assert "emacs-sentinel" not in error["message"]
    error = setup.error("connect", "cursor", "--scope", "global-sentinel", code=2)
    assert error["code"] == "invalid_scope"
    assert "global-sentinel" not in error["message"]


def test_vscode_user_scope_is_refused(setup: Setup) -> None:
    error = setup.error("connect", "vscode", "--scope", "user", code=2)
    assert error["code"] == "unsupported_scope"
    assert "--scope project" in error["message"]


# -- which project, which store ---------------------------------------------------------------


def test_a_git_repository_that_is_not_registered_is_the_project(setup: Setup) -> None:
    other = setup.tmp / "other"
    (other / "deep").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    answer = setup.json("connect", "cursor", cwd=other / "deep")
    assert (answer["path"], answer["workspace_id"]) == (str(other / ".cursor/mcp.json"), None)
    result = setup.run("connect", "cursor", "--dry-run", cwd=other / "deep")
    assert "is not a registered workspace in this store" in result.stdout


def test_errors_name_the_store_they_read(setup: Setup) -> None:
    nowhere = setup.tmp / "nowhere"
    nowhere.mkdir()
    error = setup.error("connect", "claude-code", code=2, cwd=nowhere)
    store = str(setup.store_home / "rutter.db")
    assert error["code"] == "workspace_required"
    assert store in error["details"]["store"]
    assert store in error["message"]
    error = setup.error("connect", "claude-code", "--workspace", "nope", code=5, cwd=nowhere)
    assert (error["code"], store in error["details"]["store"]) == ("not_registered", True)
    error = setup.error("connect", "claude-code", "--scope", "user", "--workspace", "demo", code=2)
    assert error["code"] == "usage"


def test_the_store_is_named_absolutely_and_never_with_a_password(setup: Setup) -> None:
    relative = setup.json("--database-url", "sqlite:///rel.db", "connect", "cursor", "--dry-run",
                          "--scope", "user")  # fmt: skip
    assert relative["store"] == f"sqlite:///{setup.root / 'src' / 'rel.db'}"
    assert relative["entry"]["args"][-2] == relative["store"]
    secret = "s3cr3t-pass-91"
    url = f"postgresql://me:{secret}@db/rutter"
    error = setup.error("--database-url", url, "connect", "cursor", "--scope", "user", code=3)
    assert error["code"] == "store_url_has_password"
    assert secret not in json.dumps(error)
    memory = setup.error("--database-url", "sqlite://", "connect", "cursor", "--scope", "user",
                         code=3)  # fmt: skip
    assert memory["code"] == "store_not_shareable"
    assert not (setup.home / ".cursor").exists()


# -- the configured server, started as the agent starts it ------------------------------------


@pytest.mark.asyncio
@pytest.mark.parametrize("agent", sorted(CONFIG_FILES))
async def test_the_configured_server_reaches_the_store(setup: Setup, agent: str) -> None:
    """The command, arguments, environment and directory the file gives, and nothing else of
    the test's: no RUTTER_* variable, and a HOME whose default store is empty (Codex: no
    environment at all). Agents without a `cwd` field start servers in the project."""
    setup.json("connect", agent)
    entry = entry_in(agent, setup.root / CONFIG_FILES[agent])
    env = {str(k): str(v) for k, v in entry.get("env", {}).items()}
    cwd = entry.get("cwd", str(setup.root))
    if agent == "codex":
        # `env -i`: the server gets exactly the configured variables (none), not even PATH.
        params = StdioServerParameters(
            command="/usr/bin/env",
            args=["-i", *(f"{k}={v}" for k, v in env.items()), entry["command"], *entry["args"]],
            cwd=cwd,
        )
    else:
        empty_home = setup.tmp / "agent-home"
        empty_home.mkdir(exist_ok=True)
        params = StdioServerParameters(
            command=entry["command"], args=entry["args"],
            env={"HOME": str(empty_home), "XDG_DATA_HOME": str(empty_home), **env}, cwd=cwd,
        )  # fmt: skip
    async with Client(params, read_timeout_seconds=60) as client:
        result = await client.call_tool("effective_instructions", {"target": "src/a.go"})
    assert not result.is_error, result
    document = result.structured_content
    assert isinstance(document, dict)
    assert document["workspace_id"] == "demo"
    assert [source["path"] for source in document["sources"]] == ["AGENTS.md"]


# -- the session-start hook -------------------------------------------------------------------

CLAUDE_SETTINGS: dict[str, Any] = {
    "permissions": {"allow": ["Bash(go test:*)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}],
        "SessionStart": [
            {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hello"}]}
        ],
    },
}


def test_claude_codes_hook_goes_into_its_settings_beside_the_other_hooks(setup: Setup) -> None:
    settings = setup.root / ".claude" / "settings.json"
    text = json.dumps(CLAUDE_SETTINGS, indent=4) + "\n"
    write_tree(setup.root, {".claude/settings.json": text})
    dry = setup.run("connect", "claude-code", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert f"Would write {settings} (nothing written, --dry-run):" in dry.stdout
    assert '+                        "type": "command",' in dry.stdout  # its own indentation
    assert settings.read_text(encoding="utf-8") == text
    assert not (setup.root / ".mcp.json").exists()
    answer = setup.json("connect", "claude-code")
    after = json.loads(settings.read_text(encoding="utf-8"))
    groups = after["hooks"]["SessionStart"]
    assert groups[0] == CLAUDE_SETTINGS["hooks"]["SessionStart"][0]  # kept, first
    assert groups[1] == {"hooks": [answer["hook"]["entry"]]}  # every start: no matcher
    assert after["hooks"]["PreToolUse"] == CLAUDE_SETTINGS["hooks"]["PreToolUse"]
    assert after["permissions"] == CLAUDE_SETTINGS["permissions"]
    store = f"sqlite:///{setup.store_home / 'rutter.db'}"
    command = answer["hook"]["entry"]["command"]
    assert f"--database-url {store} hook session-start --agent claude-code" in command
    # Idempotent: the same hook again changes nothing; a moved store needs --force.
    assert setup.json("connect", "claude-code")["hook"]["changed"] is False
    moved = setup.error("--database-url", f"sqlite:///{setup.tmp / 'moved.db'}",
                        "connect", "claude-code", code=4)  # fmt: skip
    assert moved["code"] == "config_conflict"
    assert json.loads(settings.read_text(encoding="utf-8")) == after
    # --no-hook leaves the settings alone.
    other = setup.json("connect", "claude-code", "--no-hook", "--scope", "user")
    assert other["hook"] is None
    assert not (setup.home / ".claude" / "settings.json").exists()


def test_gemini_gets_server_and_hook_in_one_settings_file(setup: Setup) -> None:
    settings = setup.root / ".gemini" / "settings.json"
    before: dict[str, Any] = {
        "theme": "GitHub",
        "mcpServers": {"docs": {"command": "npx", "args": ["docs-mcp"]}},
        "hooks": {"BeforeTool": [{"matcher": "write_file", "hooks": [
            {"name": "scan", "type": "command", "command": "scan.sh"}]}]},
    }  # fmt: skip
    write_tree(setup.root, {".gemini/settings.json": json.dumps(before, indent=2)})
    answer = setup.json("connect", "gemini")
    assert (answer["path"], answer["hook"]["path"]) == (str(settings), str(settings))
    assert (answer["written"], answer["hook"]["written"]) == (True, True)
    after = json.loads(settings.read_text(encoding="utf-8"))
    assert after["theme"] == "GitHub"
    assert after["mcpServers"]["docs"] == before["mcpServers"]["docs"]
    assert after["hooks"]["BeforeTool"] == before["hooks"]["BeforeTool"]
    assert after["hooks"]["SessionStart"] == [{"hooks": [answer["hook"]["entry"]]}]
    assert answer["hook"]["entry"]["name"] == "rutter-session-start"
    again = setup.json("connect", "gemini")
    assert (again["changed"], again["hook"]["changed"], again["written"]) == (False, False, False)


@pytest.mark.parametrize("agent", sorted(HOOK_FILES))
def test_the_installed_hook_run_as_the_agent_runs_it_gives_the_context(
    setup: Setup, agent: str
) -> None:
    """The hook's command through a shell, with the agent's JSON on stdin and none of the
    test's environment (no RUTTER_*, an empty HOME): the store named in the command is read."""
    setup.json("connect", agent)
    command = hook_in(setup.root / HOOK_FILES[agent])["command"]
    empty_home = setup.tmp / "agent-home"
    empty_home.mkdir(exist_ok=True)
    hook_input = {
        "session_id": f"{agent}-session-1", "transcript_path": str(setup.tmp / "t.jsonl"),
        "cwd": str(setup.root / "src"), "hook_event_name": "SessionStart", "source": "startup",
    }  # fmt: skip
    result = subprocess.run(
        ["/bin/sh", "-c", command], input=json.dumps(hook_input), capture_output=True,
        text=True, env={"HOME": str(empty_home), "PATH": "/usr/bin:/bin"}, cwd=setup.root,
        timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    output = json.loads(result.stdout)["hookSpecificOutput"]
    assert output["hookEventName"] == "SessionStart"
    assert "## instruction AGENTS.md (version 1)\n\nroot rules\n" in output["additionalContext"]
