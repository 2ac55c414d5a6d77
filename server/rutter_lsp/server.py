"""The rutter language server: the pygls server object, the features it registers, and the
entry point.

The server object is the connection: the client's capabilities and what is sent to the client.
What the server knows between messages is its `Session` (`server.session`); each feature is a
package under `rutter_lsp.features` whose `register(server)` installs its handlers, all listed
in `FEATURES`. Server state is mutated only on the event loop; disk and store work runs on the
session's `DiskWorker` with immutable inputs (`rutter_lsp.index.analysis` holds those pure
computations). `Refresher` coalesces bursts of events into one index rebuild and one round of
diagnostics.

Features are plain modules with a `register` function rather than objects with lifecycle hooks
(esbonio's `LanguageFeature`): every LSP method here has one handler, and start-up must run in
a fixed order (settings, store, folders, watchers), which `features.lifecycle` spells out
instead of leaving it to the order of a list.

Run it with `rutter serve` / `rutter-lsp` / `python -m rutter_lsp` (stdio), or `--tcp HOST:PORT`
for debugging.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import sys
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, BinaryIO, Final, Protocol

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.exceptions import FeatureRequestError
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer

from rutter_lsp import __version__
from rutter_lsp.features import (
    assembly,
    branches,
    codelens,
    compaction,
    diagnostics,
    documents,
    folders,
    history,
    hover,
    instructions,
    lifecycle,
    memory,
    pins,
    runs,
    session,
    sessions,
    transcripts,
)
from rutter_lsp.features.pins.watch import ProposalWatch
from rutter_lsp.features.runs.runs import RunsMonitor
from rutter_lsp.features.sessions.sessions import SessionsMonitor
from rutter_lsp.index.refresh import Refresher
from rutter_lsp.logs import ClientLogHandler
from rutter_lsp.protocol import RutterProtocol, pulls_diagnostics
from rutter_lsp.session import Session
from rutter_lsp.transport import MessageLoop

if TYPE_CHECKING:
    from rutter_lsp.index.analysis import OpenDoc

logger = logging.getLogger("rutter_lsp")

SERVER_NAME = "rutter"


class Feature(Protocol):
    """A package of `rutter_lsp.features`: `register` installs its handlers on the server."""

    def register(self, server: RutterServer) -> None: ...


FEATURES: Final[tuple[Feature, ...]] = (
    lifecycle, folders, documents, instructions, hover, codelens, diagnostics, runs, memory,
    session, branches, sessions, pins, transcripts, history, assembly, compaction,
)  # fmt: skip
"""Every feature, in registration order (the order of the commands the server advertises)."""


class RutterServer(LanguageServer):
    """The pygls server: the connection, with the session it serves."""

    protocol: RutterProtocol

    def __init__(self, *, database_url: str | None = None) -> None:
        super().__init__(
            SERVER_NAME,
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=RutterProtocol,
        )
        self.session = Session(cli_database_url=database_url)
        self.refresher = Refresher(self)
        self.runs = RunsMonitor(self)
        """Drift of the active runs of the served workspaces."""
        self.sessions = SessionsMonitor(self)
        """Announces continuity changes of the served workspaces (`rutter/sessionsChanged`)."""
        self.pin_proposals = ProposalWatch(self)
        """Notices pin proposals arriving for the served workspaces."""
        self.log_handler: ClientLogHandler | None = None
        """Forwards the log to the client once `initialize` binds it (set by `serve`)."""
        self._io_stop = threading.Event()

    # -- transport -------------------------------------------------------------------------

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """Serve over stdio with rutter's message loop, which answers malformed messages
        and recovers the framing (see `rutter_lsp.transport`); otherwise as pygls does."""
        self._serve(stdin or sys.stdin.buffer, stdout or sys.stdout.buffer)

    def start_tcp(self, host: str, port: int) -> None:
        """Serve the first client that connects over TCP (for debugging), with the same
        message loop as stdio: pygls' own TCP loop has none of its bounds."""
        with socket.create_server((host, port)) as listener:
            logger.info("listening on %s:%s for one client", host, port)
            connection, _ = listener.accept()
        with connection, connection.makefile("rb") as reader, connection.makefile("wb") as writer:
            self._serve(reader, writer)

    def _serve(self, reader: BinaryIO, writer: BinaryIO) -> None:
        self.protocol.set_writer(StdoutWriter(writer))
        messages = MessageLoop(self.protocol, reader, self.thread_pool)
        try:
            asyncio.run(messages.run(self._io_stop))
        except ConnectionError:  # a broken pipe, a reset connection
            logger.error("the client closed the connection; shutting down")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()

    def shutdown(self) -> None:
        self._io_stop.set()
        super().shutdown()  # type: ignore[no-untyped-call]

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

    def open_docs(self) -> list[OpenDoc]:
        """The open documents inside served folders."""
        docs = []
        for uri in list(self.workspace.text_documents):
            doc = self.session.open_doc(uri)
            if doc is not None:
                docs.append(doc)
        return docs

    def buffer(self, uri: str) -> str | None:
        """The open document's text; None when it is not open or its text is not kept."""
        document = self.workspace.text_documents.get(uri)
        if document is None or uri in self.protocol.untracked:
            return None
        return str(document.source)

    # -- messages --------------------------------------------------------------------------

    def notify_user(
        self, message: str, kind: types.MessageType = types.MessageType.Warning
    ) -> None:
        self.window_show_message(types.ShowMessageParams(type=kind, message=f"rutter: {message}"))

    def report_server_error(self, error: Exception, source: Any) -> None:
        """What pygls tells the person when a notification's handler or a send fails: by
        default its exception's text (`Error in server: ...`), which can hold a value the
        handler was working on. A failed request is answered instead, as pygls does."""
        if source is FeatureRequestError:
            return
        logger.error("the server failed handling a message (%s)", type(error).__name__)
        logger.debug("the failure", exc_info=error)
        self.notify_user(
            "an internal error; see the language server's log", types.MessageType.Error
        )

    def send_request_quietly(self, method: str, params: Any = None) -> None:
        """Fire a server→client request whose answer does not matter (refresh requests)."""
        future = self.protocol.send_request(method, params)

        def done(result: Any) -> None:
            if result.cancelled() or result.exception() is not None:
                logger.debug("%s was not answered: %s", method, result.exception())

        future.add_done_callback(done)


def create_server(*, database_url: str | None = None) -> RutterServer:
    """A server with every feature registered."""
    server = RutterServer(database_url=database_url)
    for feature in FEATURES:
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
