"""Running the server: what `rutter serve` and `rutter-lsp` call.

`serve()` speaks LSP over stdio by default (or TCP for debugging) and returns the process exit
code: 0 after a proper `shutdown`/`exit`, 1 otherwise. Nothing but the protocol goes to stdout.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from typing import BinaryIO

from rutter_lsp.logs import LOGGER_NAME, ClientLogHandler, configure_stderr
from rutter_lsp.settings import LOG_LEVELS

logger = logging.getLogger(LOGGER_NAME)


def parse_tcp(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"expected HOST:PORT, e.g. 127.0.0.1:2087, got {value!r}")
    return host or "127.0.0.1", int(port)


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="rutter-lsp", description="The rutter language server (LSP over stdio)."
    )
    parser.add_argument("--stdio", action="store_true", help="Use stdio (the default).")
    parser.add_argument(
        "--tcp", metavar="HOST:PORT", help="Listen on TCP instead of stdio (for debugging)."
    )
    parser.add_argument(
        "--database-url",
        help="SQLAlchemy URL of the store (default: the client's rutter.databaseUrl, else "
        "$RUTTER_DATABASE_URL, else SQLite in $RUTTER_HOME).",
    )
    parser.add_argument("--log-level", choices=sorted(LOG_LEVELS), default="info")
    args = parser.parse_args(list(argv))
    if args.tcp is not None:
        try:
            parse_tcp(args.tcp)
        except ValueError as exc:
            parser.error(str(exc))
    return args


def serve(
    *,
    tcp: str | None = None,
    database_url: str | None = None,
    log_level: str = "info",
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
) -> int:
    """Run the language server until the client exits; returns the exit code."""
    from rutter_lsp.setup import create_server

    configure_stderr(LOG_LEVELS.get(log_level, logging.INFO))
    server = create_server(database_url=database_url)
    handler = ClientLogHandler(server)
    logging.getLogger(LOGGER_NAME).addHandler(handler)
    server.log_handler = handler
    try:
        if tcp is not None:
            host, port = parse_tcp(tcp)
            server.start_tcp(host, port)
        else:
            channel = stdout or sys.stdout.buffer
            # Whatever prints by mistake lands on stderr, not in the protocol stream.
            sys.stdout = sys.stderr
            server.start_io(stdin or sys.stdin.buffer, channel)
    finally:
        logging.getLogger(LOGGER_NAME).removeHandler(handler)
        server.session.worker.shutdown()
    # pygls exits with this status itself (`sys.exit` in its `exit` handler), but its IO loop
    # swallows the SystemExit: the status is recomputed here from what the session recorded.
    return 0 if server.session.shutdown_requested else 1


def main(argv: Sequence[str] | None = None) -> int:
    """`rutter-lsp [serve] [--tcp HOST:PORT] [--database-url URL] [--log-level LEVEL]`.

    A leading `serve` is accepted so that `python -m rutter_lsp serve` (what editors were told
    to configure) keeps working."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["serve"]:
        arguments = arguments[1:]
    args = parse_args(arguments)
    return serve(tcp=args.tcp, database_url=args.database_url, log_level=args.log_level)
