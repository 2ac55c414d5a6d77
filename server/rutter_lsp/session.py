"""The language server's session: what it knows and holds between messages.

Apart from the pygls server object (the connection, the client's capabilities, sending), as in
ruff's server: settings, the store, the served folders, the index of open documents, the
registrations of the served workspaces and the disk worker live here. It knows no feature: a
feature keeps what only it uses (the runs feature its monitor, the instructions feature its
encoded snapshots) and reads the rest here. Mutated on the event loop only; the disk worker gets
immutable inputs (see `rutter_lsp.worker`).
"""

from __future__ import annotations

import asyncio
import gc
from dataclasses import dataclass, field
from typing import Any, Final

from lsprotocol import types

from rutter_core.app.facade import Rutter
from rutter_core.app.profiles import is_agent_file
from rutter_core.discovery.fsread import FileReader
from rutter_core.store import Store
from rutter_lsp.index.analysis import Index, OpenDoc
from rutter_lsp.index.paths import Folder, Located, classify, locate, path_of_uri
from rutter_lsp.registrations import WorkspaceCache
from rutter_lsp.settings import Settings
from rutter_lsp.store_watch import StoreWatch
from rutter_lsp.worker import DiskWorker

UNFREEZE_EVERY: Final = 200
"""Index rebuilds between full collections of the whole heap (see `Session.settle_heap`)."""
MAX_LOCATED: Final = 20_000
"""Bound of the URI → OpenDoc cache (every URI ever asked about, until folders change)."""


@dataclass(eq=False)
class Session:
    cli_database_url: str | None = None
    """`--database-url` of `rutter serve`; client settings take precedence."""
    init_settings: Settings = field(default_factory=Settings)
    """From `initializationOptions`; `workspace/configuration` answers override them."""
    settings: Settings = field(default_factory=Settings)
    store: Store | None = None
    store_url: str | None = None
    reader: FileReader = field(default_factory=FileReader)
    """One for the server's lifetime: its identity caches make repeated discovery cheap."""
    worker: DiskWorker = field(init=False)
    """Leaves the reader's settle waits to the event loop (see `rutter_lsp.worker`)."""
    folders: dict[str, Folder] = field(default_factory=dict)
    """Served workspace folders by folder URI."""
    initial_folders: list[types.WorkspaceFolder] = field(default_factory=list)
    """The folders of `initialize`, registered once `initialized` has opened the store."""
    index: Index = field(default_factory=Index)
    workspaces: WorkspaceCache = field(default_factory=WorkspaceCache)
    """Registrations of served workspaces (cleared when folders or the store change)."""
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once `initialized` has opened the store and registered the folders."""
    published: dict[str, list[types.Diagnostic]] = field(default_factory=dict)
    """Last diagnostics pushed per URI (push clients only)."""
    agent_names: tuple[str, ...] = ()
    """Instruction file names the agents' settings add (watched and diagnosed with the
    agents' own files; read when the watchers are registered)."""
    watch_registration: str | None = None
    """The ID of the file watchers' current registration (a new one when the agents' names
    change)."""
    shutdown_requested: bool = False
    """`shutdown` was answered: `exit` then ends the process with status 0 (LSP), else 1."""
    store_watch: StoreWatch = field(init=False)
    """The one watcher of the store's commits; features subscribe to it in `setup`."""
    _located: dict[str, OpenDoc | None] = field(default_factory=dict, init=False, repr=False)
    _located_in: tuple[Folder, ...] = field(default=(), init=False, repr=False)
    """The folders `_located` was computed for (it is dropped when they change)."""
    _settles: int = field(default=0, init=False, repr=False)
    _app: Rutter | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.worker = DiskWorker(self.reader)
        self.store_watch = StoreWatch(self.worker, lambda: self.store, lambda: bool(self.folders))

    @property
    def app(self) -> Rutter | None:
        """The app facade over the open store and the session's file reader (None while no
        store is open): every request calls it, never the areas' services."""
        if self.store is None:
            return None
        if self._app is None or self._app.store is not self.store:
            self._app = Rutter(self.store, self.reader)
        return self._app

    def locate_uri(self, uri: str) -> Located | None:
        path = path_of_uri(uri)
        if path is None:
            return None
        return locate(path, list(self.folders.values()))

    def set_agent_names(self, names: tuple[str, ...]) -> None:
        """New names from the agents' settings: which documents are diagnosed may change."""
        self.agent_names = names
        self._located = {}

    def open_doc(self, uri: str) -> OpenDoc | None:
        """Where `uri` is (folder, relative path, instruction kind); cached per URI, as it
        depends only on the served folders."""
        folders = tuple(self.folders.values())
        if folders != self._located_in or len(self._located) > MAX_LOCATED:
            self._located, self._located_in = {}, folders
        try:
            return self._located[uri]
        except KeyError:
            pass
        located = self.locate_uri(uri)
        doc = (
            None
            if located is None
            else OpenDoc(
                uri,
                located.folder,
                located.rel,
                classify(located.rel),
                is_agent_file(located.rel) or located.rel.rsplit("/", 1)[-1] in self.agent_names,
            )
        )
        self._located[uri] = doc
        return doc

    def replace_index(self, index: Index) -> None:
        """Install a new index; the old one is freed on the disk worker, not on the loop."""
        box: list[Any] = [self.index]
        self.index = index
        self.worker.discard(box)
        self.settle_heap()

    def settle_heap(self) -> None:
        """Collect, then move everything alive out of the cyclic collector's reach
        (`gc.freeze`).

        Called once the server is ready and after each index rebuild. The server's heap is
        mostly long-lived and acyclic (modules, pydantic/lsprotocol/SQLAlchemy machinery, the
        index); left in the collected generations, every full collection walks all of it
        (200-400 ms with 1,000 open documents before the index got lighter), stalling requests
        at random. Frozen objects are still freed by reference counting when dropped (the
        index is acyclic), and the collection just before freezing means no cyclic garbage is
        frozen with them; it only walks what was allocated since the previous freeze, so it
        stays short. Cycles that form later among frozen objects would never be collected, so
        every `UNFREEZE_EVERY` settles the whole heap is collected once (a longer pause, rarely).
        """
        self._settles += 1
        if self._settles % UNFREEZE_EVERY == 0:
            gc.unfreeze()
        gc.collect()
        gc.freeze()
