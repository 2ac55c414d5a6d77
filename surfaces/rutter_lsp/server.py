"""The rutter language server: state, capabilities, and the entry point.

Thin handlers over rutter_core, one module per feature (`lifecycle`, `folders`, `config`,
`documents`, `watching`, `instructions`, `hover`, `codelens`, `diagnostics`, `runs`,
`memory`). Server state is mutated only on the event loop; disk and store work runs on
`DiskWorker` with immutable inputs (`analysis` holds those pure computations). `Refresher`
coalesces bursts of events into one index rebuild and one round of diagnostics.

Run it with `rutter serve` / `rutter-lsp` (stdio), or `--tcp HOST:PORT` for debugging.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import sys
from collections.abc import Sequence
from typing import Any, Final

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.lsp.server import LanguageServer

from rutter_core.discovery.fsread import FileReader
from rutter_core.store import Store
from rutter_lsp import __version__
from rutter_lsp.features.instructions.instructions import EncodedSnapshots, WorkspaceCache
from rutter_lsp.features.runs.runs import RunsMonitor
from rutter_lsp.index.analysis import Index, OpenDoc
from rutter_lsp.index.paths import Folder, Located, classify, locate, path_of_uri
from rutter_lsp.index.refresh import Refresher
from rutter_lsp.logs import ClientLogHandler
from rutter_lsp.protocol import RutterProtocol, pulls_diagnostics
from rutter_lsp.settings import Settings
from rutter_lsp.worker import DiskWorker

logger = logging.getLogger("rutter_lsp")

SERVER_NAME = "rutter"
UNFREEZE_EVERY: Final = 200
"""Index rebuilds between full collections of the whole heap (see `settle_heap`)."""
MAX_LOCATED: Final = 20_000
"""Bound of the URI → OpenDoc cache (every URI ever asked about, until folders change)."""


class RutterServer(LanguageServer):
    """The server and all of its state (mutated on the event loop only)."""

    def __init__(self, *, database_url: str | None = None) -> None:
        super().__init__(
            SERVER_NAME,
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=RutterProtocol,
        )
        self.cli_database_url = database_url
        """`--database-url` of `rutter serve`; client settings take precedence."""
        self.init_settings = Settings()
        """From `initializationOptions`; `workspace/configuration` answers override them."""
        self.settings = Settings()
        self.store: Store | None = None
        self.store_url: str | None = None
        self.reader = FileReader()
        """One for the server's lifetime: its identity caches make repeated discovery cheap."""
        self.worker = DiskWorker()
        self.folders: dict[str, Folder] = {}
        """Served workspace folders by folder URI."""
        self.initial_folders: list[types.WorkspaceFolder] = []
        self.index = Index()
        self.workspaces = WorkspaceCache()
        """Registrations of served workspaces (cleared when folders or the store change)."""
        self.encoded_snapshots = EncodedSnapshots()
        """Encoded answers of `rutter/effectiveInstructions` (used on the worker only)."""
        self._located: dict[str, OpenDoc | None] = {}
        self._located_in: tuple[Folder, ...] = ()
        """The folders `_located` was computed for (it is dropped when they change)."""
        self._settles = 0
        self.ready = asyncio.Event()
        """Set once `initialized` has opened the store and registered the folders."""
        self.refresher = Refresher(self)
        self.runs = RunsMonitor(self)
        """Drift of the active runs of the served workspaces."""
        self.published: dict[str, list[types.Diagnostic]] = {}
        """Last diagnostics pushed per URI (push clients only)."""
        self.log_handler: ClientLogHandler | None = None

    # -- client capabilities ---------------------------------------------------------------

    @property
    def pull_diagnostics(self) -> bool:
        return pulls_diagnostics(self.client_capabilities)

    def supports(self, field: str) -> bool:
        return bool(get_capability(self.client_capabilities, field, False))

    @property
    def position_encoding(self) -> str:
        encoding = self.workspace.position_encoding
        return str(encoding) if encoding is not None else types.PositionEncodingKind.Utf16

    @property
    def markdown(self) -> bool:
        formats = get_capability(self.client_capabilities, "text_document.hover.content_format")
        return formats is None or types.MarkupKind.Markdown in formats

    # -- documents -------------------------------------------------------------------------

    def locate_uri(self, uri: str) -> Located | None:
        path = path_of_uri(uri)
        if path is None:
            return None
        return locate(path, list(self.folders.values()))

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
            else OpenDoc(uri, located.folder, located.rel, classify(located.rel))
        )
        self._located[uri] = doc
        return doc

    def open_docs(self) -> list[OpenDoc]:
        docs = []
        for uri in list(self.workspace.text_documents):
            doc = self.open_doc(uri)
            if doc is not None:
                docs.append(doc)
        return docs

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

    def buffer(self, uri: str) -> str | None:
        document = self.workspace.text_documents.get(uri)
        if document is None:
            return None
        return str(document.source)

    # -- messages --------------------------------------------------------------------------

    def notify_user(
        self, message: str, kind: types.MessageType = types.MessageType.Warning
    ) -> None:
        self.window_show_message(types.ShowMessageParams(type=kind, message=f"rutter: {message}"))

    def send_request_quietly(self, method: str, params: Any = None) -> None:
        """Fire a server→client request whose answer does not matter (refresh requests)."""
        future = self.protocol.send_request(method, params)

        def done(result: Any) -> None:
            if result.cancelled() or result.exception() is not None:
                logger.debug("%s was not answered: %s", method, result.exception())

        future.add_done_callback(done)


def create_server(*, database_url: str | None = None) -> RutterServer:
    """A server with every feature registered (one module per feature)."""
    from rutter_lsp.features.codelens import codelens
    from rutter_lsp.features.diagnostics import diagnostics
    from rutter_lsp.features.documents import documents, watching
    from rutter_lsp.features.folders import folders
    from rutter_lsp.features.hover import hover
    from rutter_lsp.features.instructions import instructions
    from rutter_lsp.features.lifecycle import config, lifecycle
    from rutter_lsp.features.memory import memory
    from rutter_lsp.features.runs import runs

    server = RutterServer(database_url=database_url)
    for feature in (
        lifecycle, config, folders, documents, watching, instructions, hover, codelens,
        diagnostics, runs, memory,
    ):  # fmt: skip
        feature.register(server)
    return server


def main(argv: Sequence[str] | None = None) -> int:
    """`rutter-lsp [serve] [--tcp HOST:PORT] [--database-url URL] [--log-level LEVEL]`.

    A leading `serve` is accepted so that `python -m rutter_lsp serve` (what editors were told
    to configure) keeps working."""
    from rutter_lsp.serve import parse_args, serve

    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["serve"]:
        arguments = arguments[1:]
    args = parse_args(arguments)
    return serve(tcp=args.tcp, database_url=args.database_url, log_level=args.log_level)


if __name__ == "__main__":
    sys.exit(main())
