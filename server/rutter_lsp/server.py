"""The rutter language server: state, capabilities, and the entry point.

Thin handlers over rutter_core, one module per feature (`lifecycle`, `folders`, `config`,
`documents`, `watching`, `instructions`, `hover`, `codelens`, `diagnostics`). Server state is
mutated only on the event loop; disk and store work runs on `DiskWorker` with immutable inputs
(`analysis` holds those pure computations). `Refresher` coalesces bursts of events into one
index rebuild and one round of diagnostics.

Run it with `rutter serve` / `rutter-lsp` (stdio), or `--tcp HOST:PORT` for debugging.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Generator, Sequence
from typing import Any

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, lsp_method

from rutter_core.fsread import FileReader
from rutter_core.store import Store
from rutter_lsp import __version__
from rutter_lsp.analysis import Index, OpenDoc
from rutter_lsp.logs import ClientLogHandler
from rutter_lsp.paths import Folder, Located, classify, locate, path_of_uri
from rutter_lsp.refresh import Refresher
from rutter_lsp.settings import Settings
from rutter_lsp.worker import DiskWorker

logger = logging.getLogger("rutter_lsp")

SERVER_NAME = "rutter"


class RutterProtocol(LanguageServerProtocol):
    """pygls' protocol, with the diagnostic provider advertised only to pull clients."""

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(
        self, params: types.InitializeParams
    ) -> Generator[Any, Any, types.InitializeResult]:
        result: types.InitializeResult = yield from super().lsp_initialize(params)
        if not getattr(self._server, "pull_diagnostics", False):
            # Push clients get `publishDiagnostics`; advertising pull as well would make a
            # client that supports both report everything twice.
            result.capabilities.diagnostic_provider = None
        return result


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
        self.ready = asyncio.Event()
        """Set once `initialized` has opened the store and registered the folders."""
        self.refresher = Refresher(self)
        self.published: dict[str, list[types.Diagnostic]] = {}
        """Last diagnostics pushed per URI (push clients only)."""
        self.log_handler: ClientLogHandler | None = None

    # -- client capabilities ---------------------------------------------------------------

    @property
    def pull_diagnostics(self) -> bool:
        """Pull only where the client can pull and be told to pull again after disk changes;
        otherwise push. Never both."""
        caps = self.client_capabilities
        return get_capability(caps, "text_document.diagnostic") is not None and bool(
            get_capability(caps, "workspace.diagnostics.refresh_support", False)
        )

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
        located = self.locate_uri(uri)
        if located is None:
            return None
        return OpenDoc(uri, located.folder, located.rel, classify(located.rel))

    def open_docs(self) -> list[OpenDoc]:
        docs = []
        for uri in list(self.workspace.text_documents):
            doc = self.open_doc(uri)
            if doc is not None:
                docs.append(doc)
        return docs

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
    from rutter_lsp import (
        codelens,
        config,
        diagnostics,
        documents,
        folders,
        hover,
        instructions,
        lifecycle,
        watching,
    )

    server = RutterServer(database_url=database_url)
    for feature in (
        lifecycle, config, folders, documents, watching, instructions, hover, codelens,
        diagnostics,
    ):  # fmt: skip
        feature.register(server)
    return server


def main(argv: Sequence[str] | None = None) -> int:
    """`rutter-lsp [--tcp HOST:PORT] [--database-url URL] [--log-level LEVEL]`."""
    from rutter_lsp.serve import parse_args, serve

    args = parse_args(sys.argv[1:] if argv is None else argv)
    return serve(tcp=args.tcp, database_url=args.database_url, log_level=args.log_level)


if __name__ == "__main__":
    sys.exit(main())
