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
import inspect
import json
import logging
import sys
from collections.abc import Generator, Sequence
from typing import Any, Final

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.exceptions import JsonRpcInternalError
from pygls.lsp.server import LanguageServer
from pygls.protocol import JsonRPCRequestMessage, LanguageServerProtocol, lsp_method

from rutter_core.discovery.fsread import FileReader
from rutter_core.store import Store
from rutter_lsp import __version__
from rutter_lsp.features.instructions.instructions import (
    EFFECTIVE_INSTRUCTIONS,
    EncodedResult,
    EncodedSnapshots,
    WorkspaceCache,
)
from rutter_lsp.features.runs.runs import CONFIRM_REFRESH, RUN_INSTRUCTIONS, RUNS, RunsMonitor
from rutter_lsp.index.analysis import Index, OpenDoc
from rutter_lsp.index.paths import Folder, Located, classify, locate, path_of_uri
from rutter_lsp.index.refresh import Refresher
from rutter_lsp.logs import ClientLogHandler
from rutter_lsp.settings import Settings
from rutter_lsp.worker import DiskWorker

logger = logging.getLogger("rutter_lsp")

SERVER_NAME = "rutter"
UNFREEZE_EVERY: Final = 200
"""Index rebuilds between full collections of the whole heap (see `settle_heap`)."""
PLAIN_PARAMS_METHODS: Final = frozenset(
    {EFFECTIVE_INSTRUCTIONS, RUNS, RUN_INSTRUCTIONS, CONFIRM_REFRESH}
)
"""Custom requests whose handlers take their params as plain JSON."""
MAX_LOCATED: Final = 20_000
"""Bound of the URI → OpenDoc cache (every URI ever asked about, until folders change)."""


class RutterProtocol(LanguageServerProtocol):
    """pygls' protocol, with the diagnostic provider advertised only to pull clients, and
    results that are already JSON sent without pygls' cattrs walk.

    pygls serialises every response with `json.dumps(default=converter.unstructure)`, and
    cattrs' unstructuring walks every value of a plain dict too: for a 40 KiB snapshot that
    walk costs more than the discovery behind it. A custom request's result that is a plain
    dict (or an `EncodedResult`) holds nothing cattrs would change, so it is encoded directly.
    """

    def __init__(self, server: Any, converter: Any) -> None:
        super().__init__(server, converter)
        self._writes: set[asyncio.Future[Any]] = set()

    def structure_message(self, data: dict[str, Any]) -> Any:
        """Requests of our own methods keep their params as plain JSON.

        pygls turns untyped params into namedtuples by encoding them again and decoding with a
        new namedtuple class per object (~0.1 ms each, several per request); our handlers
        take plain dicts (see `instructions.uri_argument`).
        """
        method = data.get("method")
        if method in PLAIN_PARAMS_METHODS and "id" in data and "jsonrpc" in data:
            return JsonRPCRequestMessage(
                id=data["id"], method=method, jsonrpc=data["jsonrpc"], params=data.get("params")
            )
        return super().structure_message(data)

    def _send_response(
        self, msg_id: Any, result: Any | None = None, error: Any | None = None
    ) -> None:
        if error is None:
            body: str | None = None
            if isinstance(result, EncodedResult):
                body = result.text
            elif type(result) is dict:
                try:
                    body = json.dumps(result)
                except (TypeError, ValueError):
                    body = None  # something only cattrs knows how to encode
            if body is not None:
                self._result_types.pop(msg_id, None)
                self._send_body(
                    f'{{"id": {json.dumps(msg_id)}, "jsonrpc": "2.0", "result": {body}}}'
                )
                return
        super()._send_response(msg_id, result, error)

    def _send_body(self, body: str) -> None:
        """`_send_data` for a message already encoded (same framing, same error handling)."""
        if self.writer is None:
            logger.error("Unable to send data, no available transport!")
            return
        try:
            data = body.encode(self.CHARSET)
            if self._include_headers:
                header = (
                    f"Content-Length: {len(data)}\r\n"
                    f"Content-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
                )
                data = header.encode(self.CHARSET) + data
            written = self.writer.write(data)
            if inspect.isawaitable(written):  # an asynchronous transport (websockets)
                task = asyncio.ensure_future(written)
                self._writes.add(task)
                task.add_done_callback(self._writes.discard)
        except BrokenPipeError:
            logger.exception("Error sending data. BrokenPipeError", exc_info=True)
            raise
        except Exception as error:
            logger.exception("Error sending data", exc_info=True)
            self._server._report_server_error(error, JsonRpcInternalError)

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
