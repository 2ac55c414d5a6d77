"""Each coding agent's own MCP configuration, and rutter's entry merged into it; for the agents
with a session-start hook (Claude Code, Gemini CLI), rutter's hook merged into their settings:
pure (text in, text out; no file, no environment), so every format and every refusal is tested
without I/O. `rutter_cli.connect` reads and writes the files.

The entry is named `rutter`. Everything else in the document is kept: other servers and keys
with their values and order; in TOML (Codex) every byte outside rutter's own table. A JSON
document is written back with its own indentation and line ends. An existing `rutter` entry
that differs is replaced only when asked (`force`), since a person may have edited it.
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from rutter_core.kernel.errors import ConflictError, Hint, RejectedError, UsageError

SERVER_NAME: Final = "rutter"

Agent = Literal["claude-code", "codex", "gemini", "vscode", "cursor"]
Scope = Literal["project", "user"]
Base = Literal["project", "home", "codex_home"]


@dataclass(frozen=True, slots=True)
class Launch:
    """How the agent starts `rutter mcp`: an absolute command, its arguments (the store named
    in them), the environment it adds, and the directory to start in (None: the agent's own)."""

    command: str
    args: tuple[str, ...]
    env: Mapping[str, str]
    cwd: str | None


@dataclass(frozen=True, slots=True)
class Location:
    """Where an agent keeps its MCP servers for a scope: `parts` below `base` (the project's
    root, the home directory, or Codex's home: `$CODEX_HOME`, else `~/.codex`)."""

    base: Base
    parts: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class AgentFormat:
    kind: Literal["json", "toml"]
    servers_key: str
    """The top-level key (table in TOML) holding the servers by name."""
    locations: Mapping[Scope, Location]
    stdio_type: bool
    """Whether the entry says `"type": "stdio"` (how the agent's own commands write it)."""
    takes_cwd: bool
    """Whether the agent's entry has a documented working-directory field (`cwd`)."""


FORMATS: Final[dict[Agent, AgentFormat]] = {
    "claude-code": AgentFormat(
        "json",
        "mcpServers",
        {
            "project": Location("project", (".mcp.json",)),
            "user": Location("home", (".claude.json",)),
        },
        stdio_type=True,
        takes_cwd=False,
    ),
    "codex": AgentFormat(
        "toml",
        "mcp_servers",
        {
            "project": Location("project", (".codex", "config.toml")),
            "user": Location("codex_home", ("config.toml",)),
        },
        stdio_type=False,
        takes_cwd=True,
    ),
    "gemini": AgentFormat(
        "json",
        "mcpServers",
        {
            "project": Location("project", (".gemini", "settings.json")),
            "user": Location("home", (".gemini", "settings.json")),
        },
        stdio_type=False,
        takes_cwd=True,
    ),
    # The user profile's mcp.json moves with the edition (Code, Insiders, VSCodium) and the
    # active profile: no path rutter could name for sure. Project scope only.
    "vscode": AgentFormat(
        "json",
        "servers",
        {"project": Location("project", (".vscode", "mcp.json"))},
        stdio_type=True,
        takes_cwd=True,
    ),
    "cursor": AgentFormat(
        "json",
        "mcpServers",
        {
            "project": Location("project", (".cursor", "mcp.json")),
            "user": Location("home", (".cursor", "mcp.json")),
        },
        stdio_type=False,
        takes_cwd=False,
    ),
}
"""Every agent `rutter connect` configures, in its own format (docs/agents.md)."""


def location(agent: Agent, scope: Scope) -> Location:
    found = FORMATS[agent].locations.get(scope)
    if found is None:
        raise UsageError(
            "unsupported_scope",
            f"{agent} has no {scope} configuration rutter can write",
            details={"agent": agent, "scope": scope, "scopes": sorted(FORMATS[agent].locations)},
            hint=Hint("use_project_scope"),
        )
    return found


def server_entry(agent: Agent, launch: Launch) -> dict[str, Any]:
    """rutter's entry in `agent`'s format, as it is written (and compared with what is there)."""
    form = FORMATS[agent]
    entry: dict[str, Any] = {"type": "stdio"} if form.stdio_type else {}
    entry["command"] = launch.command
    entry["args"] = list(launch.args)
    if launch.env:
        entry["env"] = dict(launch.env)
    if launch.cwd is not None and form.takes_cwd:
        entry["cwd"] = launch.cwd
    return entry


@dataclass(frozen=True, slots=True)
class Merged:
    """The document with rutter's entry in it, and what changed."""

    text: str
    changed: bool
    replaced: bool
    """An existing `rutter` entry that differed was replaced (only with `force`)."""


def merge(agent: Agent, existing: str | None, entry: Mapping[str, Any], *, force: bool) -> Merged:
    """`existing` (the file's text, None when there is none) with `entry` as server `rutter`.
    Refuses a document that is not the agent's format (`config_invalid`), and a different
    `rutter` entry unless `force` (`config_conflict`)."""
    form = FORMATS[agent]
    if form.kind == "toml":
        return _merge_toml(existing, form.servers_key, dict(entry), force=force)
    return _merge_json(existing, form.servers_key, dict(entry), force=force)


def _invalid(kind: str, rule: str) -> RejectedError:
    return RejectedError(
        "config_invalid",
        f"the agent's configuration is not {kind} rutter can edit: {rule}; fix or move it, then "
        "run the command again",
        hint=Hint("fix_agent_config"),
    )


def _conflict(key: str) -> ConflictError:
    return ConflictError(
        "config_conflict",
        f"the configuration already has a different {key}.{SERVER_NAME} entry",
        details={"server": SERVER_NAME},
        hint=Hint("force_connect"),
    )


# -- JSON (Claude Code, Gemini CLI, VS Code, Cursor) -----------------------------------------


def _unique_keys(pairs: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    document: dict[str, Any] = {}
    for key, value in pairs:
        if key in document:
            # Rewriting would silently keep one of the two: refuse instead.
            raise _invalid("JSON", "a key appears twice in one object")
        document[key] = value
    return document


def _load_json(existing: str | None) -> tuple[dict[str, Any], str, str]:
    """The document (empty for no file), its indentation and its line end."""
    if existing is None or not existing.strip():
        return {}, "  ", "\n"
    try:
        parsed = json.loads(existing, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        # Position only: the message of a decode error may quote the text.
        where = f"line {exc.lineno}, column {exc.colno}"
        raise _invalid("JSON", f"not valid JSON at {where}") from exc
    if not isinstance(parsed, dict):
        raise _invalid("JSON", "the document is not an object")
    return parsed, _json_indent(existing), "\r\n" if "\r\n" in existing else "\n"


def _dump_json(document: dict[str, Any], indent: str, newline: str) -> str:
    text = json.dumps(document, indent=indent, ensure_ascii=False) + "\n"
    return text.replace("\n", newline)


def _merge_json(existing: str | None, key: str, entry: dict[str, Any], *, force: bool) -> Merged:
    document, indent, newline = _load_json(existing)
    servers = document.get(key)
    if servers is None:
        servers = {}
    if not isinstance(servers, dict):
        raise _invalid("JSON", f"{key} is not an object")
    current = servers.get(SERVER_NAME)
    if current == entry:
        return Merged(existing or "", changed=False, replaced=False)
    if current is not None and not force:
        raise _conflict(key)
    document[key] = {**servers, SERVER_NAME: entry}  # an existing entry keeps its place
    return Merged(_dump_json(document, indent, newline), changed=True, replaced=current is not None)


def _json_indent(text: str) -> str:
    """The indentation of the first indented line (the document's own), else two spaces."""
    match = re.search(r"\n([ \t]+)\S", text)
    return match.group(1) if match else "  "


# -- the session-start hook (Claude Code, Gemini CLI) -------------------------------------------

HOOK_EVENT: Final = "SessionStart"
HOOK_NAME: Final = "rutter-session-start"
"""Gemini CLI's name of the hook (its `/hooks enable|disable NAME`)."""
HOOK_ARGS: Final = ("hook", "session-start")
"""The subcommand that makes a hook rutter's own, wherever its executable is."""


@dataclass(frozen=True, slots=True)
class HookFormat:
    locations: Mapping[Scope, Location]
    """The settings file holding the agent's hooks, per scope."""
    named: bool
    """Whether the hook carries a `name` (Gemini CLI)."""


HOOK_FORMATS: Final[dict[Agent, HookFormat]] = {
    # Hooks are settings, not MCP configuration: `.claude/settings.json`, not `.mcp.json`.
    "claude-code": HookFormat(
        {
            "project": Location("project", (".claude", "settings.json")),
            "user": Location("home", (".claude", "settings.json")),
        },
        named=False,
    ),
    # The same settings file as the MCP servers.
    "gemini": HookFormat(FORMATS["gemini"].locations, named=True),
}
"""The agents with a session-start hook whose output joins the session's context."""


def hook_location(agent: Agent, scope: Scope) -> Location | None:
    """Where `agent` keeps its hooks for `scope`; None when it has no session-start hook."""
    form = HOOK_FORMATS.get(agent)
    return None if form is None else form.locations[scope]


def hook_entry(agent: Agent, command: str) -> dict[str, Any]:
    """rutter's session-start hook in `agent`'s format: a shell command."""
    entry: dict[str, Any] = {"name": HOOK_NAME} if HOOK_FORMATS[agent].named else {}
    entry["type"] = "command"
    entry["command"] = command
    return entry


def _is_rutter_hook(hook: object) -> bool:
    if not isinstance(hook, dict) or not isinstance(hook.get("command"), str):
        return False
    try:
        words = shlex.split(hook["command"])
    except ValueError:
        return False
    return any(tuple(words[i : i + 2]) == HOOK_ARGS for i in range(len(words) - 1))


def merge_hook(existing: str | None, entry: Mapping[str, Any], *, force: bool) -> Merged:
    """`existing` (a JSON settings document, None when there is none) with `entry` as rutter's
    session-start hook: in place of rutter's hook when there is one (a hook running
    `rutter hook session-start`), else in a group of its own appended to
    `hooks.SessionStart`, which runs for every start (no matcher). Every other hook, group and
    setting is kept. A different rutter hook is replaced only with `force`."""
    document, indent, newline = _load_json(existing)
    hooks = document.get("hooks", {})
    if not isinstance(hooks, dict):
        raise _invalid("JSON", "hooks is not an object")
    groups = hooks.get(HOOK_EVENT, [])
    if not isinstance(groups, list) or not all(isinstance(group, dict) for group in groups):
        raise _invalid("JSON", f"hooks.{HOOK_EVENT} is not a list of objects")
    found: tuple[int, int] | None = None
    for g, group in enumerate(groups):
        listed = group.get("hooks")
        if not isinstance(listed, list):
            raise _invalid("JSON", f"a group of hooks.{HOOK_EVENT} has no list of hooks")
        for h, hook in enumerate(listed):
            if found is None and _is_rutter_hook(hook):
                found = (g, h)
    entry = dict(entry)
    if found is not None:
        g, h = found
        current = groups[g]["hooks"][h]
        if current == entry:
            return Merged(existing or "", changed=False, replaced=False)
        if not force:
            raise ConflictError(
                "config_conflict",
                f"the settings already have a different rutter hook in hooks.{HOOK_EVENT}",
                details={"hook": HOOK_EVENT},
                hint=Hint("force_connect"),
            )
        groups = [dict(group) for group in groups]
        groups[g]["hooks"] = [*groups[g]["hooks"][:h], entry, *groups[g]["hooks"][h + 1 :]]
    else:
        groups = [*groups, {"hooks": [entry]}]
    document["hooks"] = {**hooks, HOOK_EVENT: groups}  # an existing key keeps its place
    return Merged(_dump_json(document, indent, newline), changed=True, replaced=found is not None)


# -- TOML (Codex) ------------------------------------------------------------------------------

# A table header naming rutter's table or one below it: `[mcp_servers.rutter]`,
# `[ mcp_servers . "rutter" ]`, `[mcp_servers.rutter.env]`.
_OWN_HEADER: Final = r"^[ \t]*\[[ \t]*{key}[ \t]*\.[ \t]*(?:rutter|\"rutter\"|'rutter')[ \t]*[.\]]"
_ANY_HEADER: Final = re.compile(r"^[ \t]*\[")


def _merge_toml(existing: str | None, key: str, entry: dict[str, Any], *, force: bool) -> Merged:
    text = existing or ""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _invalid("TOML", "not valid TOML") from exc
    servers = document.get(key, {})
    if not isinstance(servers, dict):
        raise _invalid("TOML", f"{key} is not a table")
    current = servers.get(SERVER_NAME)
    if current == entry:
        return Merged(text, changed=False, replaced=False)
    if current is not None and not force:
        raise _conflict(key)
    newline = "\r\n" if "\r\n" in text else "\n"
    kept = _without_own_tables(text, key) if current is not None else text
    if kept and not kept.endswith("\n"):
        kept += newline
    separator = newline if kept.strip() else ""
    merged = kept + separator + _toml_table(key, entry).replace("\n", newline)
    # Written only when it reads back as exactly the old document with the new entry: an entry
    # written as dotted keys or an inline table, or any layout this editor does not follow,
    # is refused rather than guessed at.
    expected = {**document, key: {**servers, SERVER_NAME: entry}}
    try:
        reread = tomllib.loads(merged)
    except tomllib.TOMLDecodeError:
        reread = None
    if reread != expected:
        raise _invalid(
            "TOML",
            f"{key} or its {SERVER_NAME} entry is written in a form (inline or dotted) "
            "this command does not rewrite",
        )
    return Merged(merged, changed=True, replaced=current is not None)


def _without_own_tables(text: str, key: str) -> str:
    """`text` without rutter's table and its sub-tables (each header to the next header). The
    comments and blank lines just before the next header are kept: they usually belong to it."""
    own = re.compile(_OWN_HEADER.format(key=re.escape(key)))
    kept: list[str] = []
    trailing: list[str] = []  # comments and blank lines at the end of a skipped table
    skipping = False
    for line in text.splitlines(keepends=True):
        if _ANY_HEADER.match(line):
            skipping = bool(own.match(line))
            if not skipping:  # its comments, from the first (blank lines were rutter's)
                comments = [i for i, kept_line in enumerate(trailing) if kept_line.strip()]
                kept.extend(trailing[comments[0] :] if comments else [])
            trailing = []
            if skipping:
                continue
        if not skipping:
            kept.append(line)
        elif not line.strip() or line.lstrip().startswith("#"):
            trailing.append(line)
        else:
            trailing = []
    return "".join(kept)


def _toml_table(key: str, entry: Mapping[str, Any]) -> str:
    lines = [f"[{key}.{SERVER_NAME}]"]
    for name, value in entry.items():
        lines.append(f"{name} = {_toml_value(value)}")
    return "\n".join(lines) + "\n"


def _toml_value(value: Any) -> str:
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    if isinstance(value, dict):
        pairs = (f"{_toml_string(k)} = {_toml_value(v)}" for k, v in value.items())
        return "{ " + ", ".join(pairs) + " }"
    raise TypeError(type(value).__name__)  # rutter writes strings, lists and tables only


def _toml_string(value: str) -> str:
    """A TOML basic string: quote, backslash and control characters escaped (TOML allows
    no raw control character but tab, and no escaped surrogate)."""
    out = ['"']
    for char in value:
        if char in ('"', "\\"):
            out.append("\\" + char)
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)
