"""File watching: `workspace/didChangeWatchedFiles`, registered dynamically where possible.

On a change the changed paths (and, for creations and deletions, their parent directories)
are invalidated in the shared `FileReader`, the open documents' discovery is re-run, their
diagnostics are republished, and `rutter/instructionsChanged` tells the client which
instruction files of which workspace changed.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import PurePath
from typing import TYPE_CHECKING, Final

from lsprotocol import types

from rutter_lsp.index.paths import is_watched_path, locate, path_of_uri

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
REGISTRATION_ID: Final = "rutter-instruction-files"


async def register_watchers(server: RutterServer) -> None:
    if not server.supports("workspace.did_change_watched_files.dynamic_registration"):
        logger.info("client cannot register file watchers; relying on didSave and its own events")
        return
    options = types.DidChangeWatchedFilesRegistrationOptions(
        watchers=[types.FileSystemWatcher(glob_pattern=pattern) for pattern in WATCH_PATTERNS]
    )
    registration = types.Registration(
        id=REGISTRATION_ID,
        method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        register_options=options,
    )
    try:
        await server.client_register_capability_async(
            types.RegistrationParams(registrations=[registration])
        )
    except Exception as exc:
        logger.warning("client refused the file watcher registration: %s", exc)


def changed(server: RutterServer, events: Iterable[tuple[str, types.FileChangeType]]) -> None:
    """Record file changes (from watchers or saves) for the next refresh."""
    folders = list(server.session.folders.values())
    changes: dict[str, set[str]] = {}
    invalidate: set[str] = set()
    for uri, kind in events:
        path = path_of_uri(uri)
        if path is None:
            continue
        located = locate(path, folders)
        if located is None or not is_watched_path(located.rel):
            continue
        changes.setdefault(located.folder.workspace_id, set()).add(located.rel)
        invalidate.add(path)
        real = located.folder.path_of(located.rel)
        invalidate.add(real)
        if kind != types.FileChangeType.Changed:  # the directory's entries changed too
            invalidate.add(str(PurePath(path).parent))
            invalidate.add(str(PurePath(real).parent))
    if not changes:
        return
    opened = [
        doc.uri
        for doc in server.open_docs()
        if doc.instruction is not None and doc.rel in changes.get(doc.folder.workspace_id, ())
    ]
    server.refresher.request(changes=changes, invalidate=invalidate, diagnostics=opened)


def register(server: RutterServer) -> None:
    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def did_change_watched_files(params: types.DidChangeWatchedFilesParams) -> None:
        await server.session.ready.wait()
        changed(server, [(event.uri, event.type) for event in params.changes])
