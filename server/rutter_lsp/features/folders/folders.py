"""Workspace folders (docs/reference/workspaces.md): each editor folder is served under a
registration.

A folder whose root is already registered reuses that registration; otherwise it is registered
with an ID derived from the folder name, made unique with a numeric suffix. Removing a folder
stops serving it; the registration stays (other tools, and runs, may refer to it).

When the store changes (a commit the session's store watch sees), `follow_registrations` looks
each served folder's root up again: a
workspace moved there (`rutter workspace move ID NEWROOT`) is served under its own ID from then
on. It never registers anything itself, so it cannot take a root back while someone frees it
for a move.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from rutter_core.app.workspaces import EnsureWorkspaceParams, FindWorkspaceParams
from rutter_core.kernel.errors import RutterError
from rutter_lsp.feature import LanguageFeature
from rutter_lsp.index.paths import Folder, path_of_uri, uri_of_path

if TYPE_CHECKING:
    from rutter_lsp.server import RutterServer

logger = logging.getLogger("rutter_lsp")


def folders_of(params: types.InitializeParams) -> list[types.WorkspaceFolder]:
    """The folders of `initialize`: `workspaceFolders`, else the deprecated root URI/path."""
    if params.workspace_folders:
        return list(params.workspace_folders)
    uri = params.root_uri
    if uri is None and params.root_path:
        uri = uri_of_path(str(Path(params.root_path).absolute()))
    if uri is None:
        return []
    path = path_of_uri(uri)
    name = Path(path).name if path else "workspace"
    return [types.WorkspaceFolder(uri=uri, name=name)]


async def add(server: RutterServer, added: list[types.WorkspaceFolder]) -> None:
    server.session.workspaces.clear()
    app = server.session.app
    if app is None:
        if added:
            logger.warning("no store: %d folder(s) not served", len(added))
        return
    registry = app.workspaces
    for folder in added:
        path = path_of_uri(folder.uri)
        if path is None:
            logger.warning("not serving %s: not a file: URI", folder.uri)
            continue
        # Some clients (Neovim) name a folder by its full path: the ID comes from the last part.
        name = folder.name if folder.name and "/" not in folder.name else Path(path).name
        try:
            params = EnsureWorkspaceParams(root=path, preferred_id=name)
            workspace = await server.session.worker.run(registry.ensure, params)
        except RutterError as error:
            server.notify_user(f"not serving {path}: {error.message}")
            continue
        server.session.folders[folder.uri] = Folder(
            folder.uri, path, name, workspace.workspace_id, workspace.root
        )
        logger.info("serving %s as workspace %s", workspace.root, workspace.workspace_id)


def remove(server: RutterServer, removed: list[types.WorkspaceFolder]) -> None:
    server.session.workspaces.clear()
    for folder in removed:
        served = server.session.folders.pop(folder.uri, None)
        if served is None:
            continue
        logger.info("no longer serving workspace %s", served.workspace_id)
    # Documents left outside every served folder lose their diagnostics.
    for uri in list(server.session.published):
        if server.session.locate_uri(uri) is None:
            server.refresher.clear(uri)


async def follow_registrations(server: RutterServer) -> bool:
    """Serve each folder under the registration its root has now (another process moved a
    workspace there, or removed the one it had); True when one changed."""
    app = server.session.app
    if app is None:
        return False
    registry = app.workspaces
    changed = False
    for uri, served in list(server.session.folders.items()):
        try:
            params = FindWorkspaceParams(root=served.path)
            found = await server.session.worker.run(registry.find_by_root, params)
        except RutterError:  # the folder is gone or unreadable: keep serving what we had
            continue
        if found is None or (found.workspace_id, found.root) == (served.workspace_id, served.root):
            continue
        if server.session.folders.get(uri) is not served:  # the folders changed meanwhile
            continue
        server.session.folders[uri] = Folder(
            served.uri, served.path, served.name, found.workspace_id, found.root
        )
        logger.info("serving %s as workspace %s now", found.root, found.workspace_id)
        changed = True
    if changed:
        server.session.workspaces.clear()
        server.refresher.request(index=True, all_diagnostics=True)
    return changed


async def reregister(server: RutterServer) -> None:
    """After the store changed: register the served folders in the new store."""
    current = [
        types.WorkspaceFolder(uri=f.uri, name=f.name) for f in server.session.folders.values()
    ]
    server.session.folders.clear()
    server.session.workspaces.clear()
    await add(server, current)


def register(server: RutterServer) -> None:
    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def did_change_workspace_folders(params: types.DidChangeWorkspaceFoldersParams) -> None:
        await server.session.ready.wait()
        remove(server, list(params.event.removed))
        await add(server, list(params.event.added))
        server.refresher.request(index=True, all_diagnostics=True)


class Folders(LanguageFeature):
    """Serves the folders of `initialize` once the store is open, registers them again in a
    new store, and follows registrations moved by other processes."""

    def setup(self) -> None:
        register(self.server)
        # Subscribed before the features that read the served workspaces on a commit (runs,
        # sessions, pins), so they see the registrations followed first.
        self.server.session.store_watch.subscribe(self._store_changed)

    def initialize(self, params: types.InitializeParams) -> None:
        self.server.session.initial_folders = folders_of(params)

    async def initialized(self) -> None:
        await add(self.server, self.server.session.initial_folders)

    async def store_replaced(self) -> None:
        await reregister(self.server)

    async def _store_changed(self, changed: bool) -> None:
        if changed:
            # A workspace moved to a served folder is served under its own ID
            # (docs/reference/workspaces.md).
            await follow_registrations(self.server)
