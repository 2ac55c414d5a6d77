"""File watching: `workspace/didChangeWatchedFiles`, registered dynamically where possible.

On a change the changed paths (and, for creations and deletions, their parent directories)
are invalidated in the shared `FileReader`, the open documents' discovery is re-run, their
diagnostics are republished, and `rutter/instructionsChanged` tells the client which
instruction files of which workspace changed.

Files only agents read (`GEMINI.md` and the names the agents' settings add, `CLAUDE.local.md`,
`.claude/rules/**`, `.cursor/rules/**`, `.github/instructions/**`,
`.github/copilot-instructions.md`) and the agents' settings (`.codex/config.toml`,
`.gemini/settings.json`, and the user's `~/.codex/config.toml` / `~/.gemini/settings.json`
as relative patterns where the client supports them) are watched too. Their change re-runs
the agent diagnostics of every diagnosed document and nothing else: the default discovery
did not change, so the index is kept and no `rutter/instructionsChanged` is sent (it is about
that discovery; an editor's profile view asks again when it is shown or its file changes).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from pathlib import PurePath
from typing import TYPE_CHECKING, Final

from lsprotocol import types

from rutter_core.app.profiles import is_agent_input
from rutter_lsp.index.paths import is_watched_path, locate, path_of_uri, uri_of_path

if TYPE_CHECKING:
    from rutter_lsp.server import RutterServer

logger = logging.getLogger("rutter_lsp")

WATCH_PATTERNS: Final = (
    "**/AGENTS.md",
    "**/AGENTS.override.md",
    "**/CLAUDE.md",
    "**/.claude/CLAUDE.md",
    "**/.prayu/**",
)
AGENT_WATCH_PATTERNS: Final = (
    "**/GEMINI.md",
    "**/CLAUDE.local.md",
    "**/.claude/rules/**",
    "**/.cursor/rules/**",
    "**/.github/instructions/**",
    "**/.github/copilot-instructions.md",
    "**/.codex/config.toml",
    "**/.gemini/settings.json",
)
"""Files only agents read, and their project settings (agent profiles, issue 20)."""
REGISTRATION_ID: Final = "rutter-instruction-files"
SETTINGS_FILES: Final = (".codex/config.toml", ".gemini/settings.json")


def agent_names(server: RutterServer) -> tuple[str, ...]:
    """The names the agents' settings add, for the served folders (read once, here)."""
    rutter = server.session.app
    if rutter is None:
        return ()
    names: list[str] = []
    for folder in server.session.folders.values():
        for name in rutter.profiles.configured_names(folder.root):
            if name not in names:
                names.append(name)
    return tuple(names)


def _watchers(server: RutterServer) -> list[types.FileSystemWatcher]:
    patterns = [*WATCH_PATTERNS, *AGENT_WATCH_PATTERNS]
    patterns.extend(f"**/{name}" for name in server.session.agent_names)
    watchers = [types.FileSystemWatcher(glob_pattern=pattern) for pattern in patterns]
    rutter = server.session.app
    relative = server.supports("workspace.did_change_watched_files.relative_pattern_support")
    if rutter is not None and relative:
        for path in rutter.profiles.home_config_files():
            directory, name = os.path.split(path)
            base = types.WorkspaceFolder(uri=uri_of_path(directory), name=name)
            pattern = types.RelativePattern(base_uri=base, pattern=name)
            watchers.append(types.FileSystemWatcher(glob_pattern=pattern))
    return watchers


async def register_watchers(server: RutterServer, registration_id: str = REGISTRATION_ID) -> None:
    server.session.set_agent_names(agent_names(server))
    if not server.supports("workspace.did_change_watched_files.dynamic_registration"):
        logger.info("client cannot register file watchers; relying on didSave and its own events")
        return
    options = types.DidChangeWatchedFilesRegistrationOptions(watchers=_watchers(server))
    server.session.watch_registration = registration_id
    registration = types.Registration(
        id=registration_id,
        method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        register_options=options,
    )
    try:
        await server.client_register_capability_async(
            types.RegistrationParams(registrations=[registration])
        )
    except Exception as exc:
        logger.warning("client refused the file watcher registration: %s", exc)


async def follow_settings(server: RutterServer) -> None:
    """The agents' settings changed: when the names they add changed, watch and diagnose the
    new names (the old registration is withdrawn, a new one made)."""
    names = agent_names(server)
    if names == server.session.agent_names:
        return
    server.session.set_agent_names(names)
    server.refresher.request(all_diagnostics=True)
    old = server.session.watch_registration
    if old is None:
        return
    try:
        await server.client_unregister_capability_async(
            types.UnregistrationParams(
                unregisterations=[
                    types.Unregistration(id=old, method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
                ]
            )
        )
    except Exception as exc:
        logger.warning("client refused to withdraw the file watchers: %s", exc)
    await register_watchers(server, f"{REGISTRATION_ID}-{len(names)}-{abs(hash(names))}")


def is_settings_file(server: RutterServer, path: str, rel: str | None) -> bool:
    rutter = server.session.app
    if rutter is not None and path in rutter.profiles.home_config_files():
        return True
    if rel is None:
        return False
    return any(rel == name or rel.endswith(f"/{name}") for name in SETTINGS_FILES)


def changed(server: RutterServer, events: Iterable[tuple[str, types.FileChangeType]]) -> bool:
    """Record file changes (from watchers or saves) for the next refresh. True when one of
    them is an agent's settings file (`follow_settings` should then run)."""
    folders = list(server.session.folders.values())
    changes: dict[str, set[str]] = {}
    invalidate: set[str] = set()
    agents = settings = False
    rutter = server.session.app
    homes = rutter.profiles.home_config_files() if rutter is not None else ()
    for uri, kind in events:
        path = path_of_uri(uri)
        if path is None:
            continue
        located = locate(path, folders)
        if located is None or not is_watched_path(located.rel):
            if path in homes or (
                located is not None and is_agent_input(located.rel, server.session.agent_names)
            ):
                agents = True
                settings |= is_settings_file(
                    server, path, located.rel if located is not None else None
                )
                invalidate.add(path)
                if located is not None:
                    invalidate.add(located.folder.path_of(located.rel))
                if kind != types.FileChangeType.Changed:
                    invalidate.add(str(PurePath(path).parent))
            continue
        changes.setdefault(located.folder.workspace_id, set()).add(located.rel)
        invalidate.add(path)
        real = located.folder.path_of(located.rel)
        invalidate.add(real)
        if kind != types.FileChangeType.Changed:  # the directory's entries changed too
            invalidate.add(str(PurePath(path).parent))
            invalidate.add(str(PurePath(real).parent))
    if agents and not changes:
        server.refresher.request(invalidate=invalidate, agents=True)
        return settings
    if not changes:
        return settings
    opened = [
        doc.uri
        for doc in server.open_docs()
        if doc.instruction is not None and doc.rel in changes.get(doc.folder.workspace_id, ())
    ]
    server.refresher.request(
        changes=changes, invalidate=invalidate, diagnostics=opened, agents=agents
    )
    return settings


def register(server: RutterServer) -> None:
    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def did_change_watched_files(params: types.DidChangeWatchedFilesParams) -> None:
        await server.session.ready.wait()
        if changed(server, [(event.uri, event.type) for event in params.changes]):
            await follow_settings(server)
