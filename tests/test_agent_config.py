"""The agents' MCP configuration formats and rutter's entry merged into them (pure: text in,
text out). `tests/test_connect.py` runs `rutter connect` on real files and starts what it wrote."""

from __future__ import annotations

import json
import tomllib
from typing import Any

import pytest

from rutter_cli.agent_config import (
    FORMATS,
    HOOK_FORMATS,
    Agent,
    Launch,
    hook_entry,
    hook_location,
    location,
    merge,
    merge_hook,
    server_entry,
)
from rutter_core.kernel.errors import RutterError

LAUNCH = Launch(
    "/opt/rutter/bin/rutter",
    ("--database-url", "sqlite:////home/me/.local/share/rutter/rutter.db", "mcp"),
    {},
    "/work/project",
)
ARGS = list(LAUNCH.args)
SENTINEL = "sentinel-config-value-7c1f"
JSON_AGENTS: list[Agent] = ["claude-code", "gemini", "vscode", "cursor"]

EXPECTED_ENTRIES: dict[Agent, dict[str, Any]] = {
    "claude-code": {"type": "stdio", "command": LAUNCH.command, "args": ARGS},
    "codex": {"command": LAUNCH.command, "args": ARGS, "cwd": "/work/project"},
    "gemini": {"command": LAUNCH.command, "args": ARGS, "cwd": "/work/project"},
    "vscode": {"type": "stdio", "command": LAUNCH.command, "args": ARGS, "cwd": "/work/project"},
    "cursor": {"command": LAUNCH.command, "args": ARGS},
}
SERVERS_KEY: dict[Agent, str] = {
    "claude-code": "mcpServers", "codex": "mcp_servers", "gemini": "mcpServers",
    "vscode": "servers", "cursor": "mcpServers",
}  # fmt: skip


def parse(agent: Agent, text: str) -> dict[str, Any]:
    document: dict[str, Any] = (
        tomllib.loads(text) if FORMATS[agent].kind == "toml" else json.loads(text)
    )
    return document


def error_of(agent: Agent, existing: str | None, *, force: bool = False) -> RutterError:
    with pytest.raises(RutterError) as caught:
        merge(agent, existing, server_entry(agent, LAUNCH), force=force)
    assert SENTINEL not in caught.value.message  # the file's content is never echoed
    return caught.value


@pytest.mark.parametrize("agent", sorted(FORMATS))
def test_a_new_file_holds_the_entry_in_the_agents_own_shape(agent: Agent) -> None:
    entry = server_entry(agent, LAUNCH)
    assert entry == EXPECTED_ENTRIES[agent]
    merged = merge(agent, None, entry, force=False)
    assert (merged.changed, merged.replaced) == (True, False)
    assert parse(agent, merged.text) == {SERVERS_KEY[agent]: {"rutter": entry}}
    assert merged.text.endswith("\n")


def test_codex_table_is_written_as_codex_documents_it() -> None:
    merged = merge("codex", None, server_entry("codex", LAUNCH), force=False)
    assert merged.text == (
        "[mcp_servers.rutter]\n"
        'command = "/opt/rutter/bin/rutter"\n'
        'args = ["--database-url", "sqlite:////home/me/.local/share/rutter/rutter.db", "mcp"]\n'
        'cwd = "/work/project"\n'
    )


@pytest.mark.parametrize("agent", JSON_AGENTS)
def test_json_other_servers_and_keys_are_kept_with_their_order_and_layout(agent: Agent) -> None:
    key = SERVERS_KEY[agent]
    others: dict[str, Any] = {"github": {"command": "npx", "args": ["-y", "gh"], "env": {"T": "é"}}}
    before: dict[str, Any] = {
        "theme": "dark", key: others, "inputs": [{"id": "k", "type": "promptString"}],
    }  # fmt: skip
    existing = json.dumps(before, indent=2, ensure_ascii=False) + "\n"
    entry = server_entry(agent, LAUNCH)
    merged = merge(agent, existing, entry, force=False)
    after = json.loads(merged.text)
    assert list(after) == ["theme", key, "inputs"]
    assert list(after[key]) == ["github", "rutter"]
    expected = {**before, key: {**others, "rutter": entry}}
    assert after == expected
    # Written with the file's own layout: byte for byte what that layout gives.
    assert merged.text == json.dumps(expected, indent=2, ensure_ascii=False) + "\n"


def test_json_indentation_and_line_ends_are_the_files_own() -> None:
    existing = '{\r\n\t"mcpServers": {\r\n\t\t"other": {"command": "x"}\r\n\t}\r\n}\r\n'
    merged = merge("cursor", existing, server_entry("cursor", LAUNCH), force=False)
    assert '\r\n\t\t"rutter": {\r\n\t\t\t"command"' in merged.text
    assert "\n" not in merged.text.replace("\r\n", "")
    assert json.loads(merged.text)["mcpServers"]["other"] == {"command": "x"}


def test_toml_everything_else_is_kept_byte_for_byte() -> None:
    existing = (
        '# my codex settings\nmodel = "o3"  # fast\n\n'
        '[mcp_servers.docs]\ncommand = "npx"\nargs = ["-y", "docs"]\n\n'
        "[mcp_servers.docs.env]\nKEY = 'v'\n\n[profiles.slow]\nmodel = \"o1\"\n"
    )
    merged = merge("codex", existing, server_entry("codex", LAUNCH), force=False)
    assert merged.text.startswith(existing)
    document = tomllib.loads(merged.text)
    assert document["mcp_servers"]["docs"] == {
        "command": "npx", "args": ["-y", "docs"], "env": {"KEY": "v"},
    }  # fmt: skip
    assert document["mcp_servers"]["rutter"] == EXPECTED_ENTRIES["codex"]
    assert document["profiles"] == {"slow": {"model": "o1"}}


def test_toml_without_a_final_newline_or_with_crlf() -> None:
    merged = merge("codex", 'model = "o3"', server_entry("codex", LAUNCH), force=False)
    assert merged.text.startswith('model = "o3"\n\n[mcp_servers.rutter]\n')
    crlf = merge("codex", 'model = "o3"\r\n', server_entry("codex", LAUNCH), force=False)
    assert crlf.text.startswith('model = "o3"\r\n\r\n[mcp_servers.rutter]\r\n')
    assert "\n" not in crlf.text.replace("\r\n", "")


@pytest.mark.parametrize("agent", sorted(FORMATS))
def test_the_same_entry_again_changes_nothing(agent: Agent) -> None:
    entry = server_entry(agent, LAUNCH)
    first = merge(agent, None, entry, force=False)
    again = merge(agent, first.text, entry, force=False)
    assert (again.changed, again.replaced, again.text) == (False, False, first.text)


@pytest.mark.parametrize("agent", sorted(FORMATS))
def test_a_different_rutter_entry_is_refused_then_replaced_with_force(agent: Agent) -> None:
    old = merge(agent, None, server_entry(agent, Launch("/old/rutter", ("mcp",), {}, None)),
                force=False).text  # fmt: skip
    error = error_of(agent, old)
    assert (error.code, error.category.value) == ("config_conflict", "conflict")
    merged = merge(agent, old, server_entry(agent, LAUNCH), force=True)
    assert (merged.changed, merged.replaced) == (True, True)
    assert parse(agent, merged.text)[SERVERS_KEY[agent]] == {"rutter": EXPECTED_ENTRIES[agent]}


def test_toml_replacing_rutter_keeps_the_tables_around_it() -> None:
    head = '[mcp_servers.before]\ncommand = "a"\n\n'
    own = '[mcp_servers.rutter]\ncommand = "/old"\n\n[mcp_servers.rutter.env]\nX = "1"\n\n'
    tail = '# the next server\n[mcp_servers.after]\ncommand = "b"\n'
    merged = merge("codex", head + own + tail, server_entry("codex", LAUNCH), force=True)
    assert merged.text.startswith(head + tail)  # the comment above `after` stays with it
    assert tomllib.loads(merged.text)["mcp_servers"] == {
        "before": {"command": "a"}, "after": {"command": "b"},
        "rutter": EXPECTED_ENTRIES["codex"],
    }  # fmt: skip


@pytest.mark.parametrize(
    ("agent", "existing"),
    [
        ("cursor", '{"mcpServers": {"x": "' + SENTINEL + '"'),  # cut short
        ("gemini", '// comment\n{"mcpServers": {}}'),  # comments are not JSON
        ("vscode", '["' + SENTINEL + '"]'),  # not an object
        ("claude-code", '{"mcpServers": ["' + SENTINEL + '"]}'),  # servers not an object
        ("cursor", '{"mcpServers": {}, "mcpServers": {"a": "' + SENTINEL + '"}}'),  # twice
        ("codex", 'model = "' + SENTINEL + "\n"),  # unterminated string
        ("codex", 'mcp_servers = "' + SENTINEL + '"\n'),  # not a table
        # Inline tables are closed: rutter's table cannot be added beside them.
        ("codex", 'mcp_servers = { other = { command = "' + SENTINEL + '" } }\n'),
        # Dotted keys: rutter's table is not a [header] this command rewrites.
        ("codex", 'mcp_servers.rutter.command = "' + SENTINEL + '"\n'),
    ],
)
def test_a_document_that_is_not_the_agents_format_is_refused(agent: Agent, existing: str) -> None:
    error = error_of(agent, existing, force=True)
    assert (error.code, error.category.value) == ("config_invalid", "rejected")


def test_toml_strings_are_escaped() -> None:
    odd = 'C:\\Program Files\\"rutter"\t\x01\x7f é 𝄞'
    entry = server_entry("codex", Launch(odd, ("--database-url", odd, "mcp"), {"K": odd}, None))
    merged = merge("codex", None, entry, force=False)
    assert tomllib.loads(merged.text)["mcp_servers"]["rutter"] == {
        "command": odd, "args": ["--database-url", odd, "mcp"], "env": {"K": odd},
    }  # fmt: skip


def test_vscode_has_no_user_scope() -> None:
    assert location("vscode", "project").parts == (".vscode", "mcp.json")
    with pytest.raises(RutterError) as caught:
        location("vscode", "user")
    assert (caught.value.code, caught.value.category.value) == ("unsupported_scope", "usage")


# -- the session-start hook (Claude Code, Gemini CLI) -------------------------------------------

HOOK_COMMAND = (
    "/opt/rutter/bin/rutter --database-url sqlite:////home/me/rutter.db hook session-start "
    "--agent claude-code"
)


def test_only_claude_code_and_gemini_have_a_hook_and_where() -> None:
    assert sorted(HOOK_FORMATS) == ["claude-code", "gemini"]
    for agent in ("codex", "vscode", "cursor"):
        assert hook_location(agent, "project") is None
    claude = hook_location("claude-code", "user")
    assert claude is not None
    assert (claude.base, claude.parts) == (
        "home",
        (".claude", "settings.json"),
    )
    assert hook_location("gemini", "project") == location("gemini", "project")
    assert hook_entry("claude-code", HOOK_COMMAND) == {"type": "command", "command": HOOK_COMMAND}
    assert hook_entry("gemini", HOOK_COMMAND) == {
        "name": "rutter-session-start", "type": "command", "command": HOOK_COMMAND,
    }  # fmt: skip


def test_the_hook_joins_the_other_hooks_of_every_event_and_the_rest() -> None:
    theirs = {"type": "command", "command": f"echo {SENTINEL}"}
    existing: dict[str, Any] = {
        "model": "opus",
        "hooks": {
            "SessionStart": [{"matcher": "compact", "hooks": [theirs]}],
            "Stop": [{"hooks": [{"type": "command", "command": "notify.sh"}]}],
        },
        "env": {"A": "1"},
    }
    entry = hook_entry("claude-code", HOOK_COMMAND)
    merged = merge_hook(json.dumps(existing, indent="\t"), entry, force=False)
    assert (merged.changed, merged.replaced) == (True, False)
    assert '\n\t"hooks": {' in merged.text  # the file's own indentation
    document = json.loads(merged.text)
    assert list(document) == ["model", "hooks", "env"]
    assert list(document["hooks"]) == ["SessionStart", "Stop"]
    assert document["hooks"]["SessionStart"] == [
        {"matcher": "compact", "hooks": [theirs]},
        {"hooks": [entry]},
    ]
    assert document["hooks"]["Stop"] == existing["hooks"]["Stop"]
    again = merge_hook(merged.text, entry, force=False)
    assert (again.changed, again.text) == (False, merged.text)


def test_a_different_rutter_hook_is_refused_then_replaced_in_place() -> None:
    old = {"type": "command", "command": "rutter hook session-start --agent claude-code"}
    other = {"type": "command", "command": "other-tool session-start"}
    existing = json.dumps({"hooks": {"SessionStart": [{"matcher": "", "hooks": [other, old]}]}})
    entry = hook_entry("claude-code", HOOK_COMMAND)
    with pytest.raises(RutterError) as refused:
        merge_hook(existing, entry, force=False)
    assert refused.value.code == "config_conflict"
    merged = merge_hook(existing, entry, force=True)
    assert (merged.changed, merged.replaced) == (True, True)
    assert json.loads(merged.text)["hooks"]["SessionStart"] == [
        {"matcher": "", "hooks": [other, entry]}
    ]


@pytest.mark.parametrize(
    "existing",
    [
        '{"hooks": []}',
        '{"hooks": {"SessionStart": {"hooks": []}}}',
        '{"hooks": {"SessionStart": ["echo"]}}',
        '{"hooks": {"SessionStart": [{"matcher": "startup"}]}}',
        f'{{"hooks": {{}}, "x": "{SENTINEL}"',
    ],
)
def test_settings_whose_hooks_are_not_the_agents_shape_are_refused(existing: str) -> None:
    with pytest.raises(RutterError) as refused:
        merge_hook(existing, hook_entry("claude-code", HOOK_COMMAND), force=False)
    assert refused.value.code == "config_invalid"
    assert SENTINEL not in refused.value.message
