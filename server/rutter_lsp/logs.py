"""Logging: stderr always, and `window/logMessage` once the client is connected.

stdout is the protocol channel and never receives log output. Only the `rutter_lsp` logger
is forwarded to the client (pygls logs every message it sends; forwarding those would loop).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import threading
from typing import TYPE_CHECKING, Final

from lsprotocol import types

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

LOGGER_NAME: Final = "rutter_lsp"
_FORMAT: Final = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_MESSAGE_TYPES: Final = (
    (logging.ERROR, types.MessageType.Error),
    (logging.WARNING, types.MessageType.Warning),
    (logging.INFO, types.MessageType.Info),
)


class QuietClientErrors(logging.Filter):
    """pygls' records about a failed request, without what the client sent and without a
    traceback where the failure is an answer to the client (a JSON-RPC error it was sent).

    pygls logs `logger.exception(...)` with the request's params for every request that
    failed: an ordinary `invalid_params` would put a traceback and the client's text (a memory
    body, a note) on stderr, which editors show and keep."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.name.startswith("pygls"):
            return True
        if record.msg == _CANCEL_UNKNOWN:
            # The client cancelled a request already answered (editors cancel a hover or a
            # code lens the person moved away from, often after the answer was sent): nothing
            # went wrong, so it is said only when debugging.
            record.levelno, record.levelname = logging.DEBUG, logging.getLevelName(logging.DEBUG)
            return logging.getLogger(LOGGER_NAME).isEnabledFor(logging.DEBUG)
        error = record.exc_info[1] if record.exc_info else None
        if error is not None and isinstance(error, _answered_errors()):
            code = getattr(error, "code", "?")
            record.msg, record.args = "a request was answered with JSON-RPC error %s", (code,)
            record.exc_info, record.exc_text = None, None
        elif record.msg == "Unable to deserialize message\n%s":
            # The argument is a traceback whose frames show the values that did not fit;
            # the client is answered (rutter_lsp.transport), the log says only that.
            record.msg, record.args = "a message did not fit its method's types", ()
        elif isinstance(record.args, tuple) and record.msg in _MESSAGES_WITH_PARAMS:
            # The last argument is the client's params: never logged.
            record.args = (*record.args[:-1], "<params not logged>")
        elif record.args and record.levelno >= logging.WARNING:
            # pygls' other warnings quote what the client sent (a progress token, a cell's
            # URI, a message): the wording is kept, the values are not.
            if isinstance(record.args, tuple):
                record.args = ("<not logged>",) * len(record.args)
            else:  # one mapping, for %(name)s
                record.args = dict.fromkeys(record.args, "<not logged>")
        return True


_CANCEL_UNKNOWN: Final = 'Cancel notification for unknown message id "%s"'
_MESSAGES_WITH_PARAMS: Final = frozenset(
    {"Failed to handle request %s %s %s", "Failed to handle notification %r: %s"}
)


def _answered_errors() -> tuple[type[BaseException], ...]:
    from pygls.exceptions import JsonRpcException

    return (JsonRpcException,)


def configure_stderr(level: int) -> None:
    root = logging.getLogger()
    if not any(getattr(handler, "rutter_stderr", False) for handler in root.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter(_FORMAT))
        handler.addFilter(QuietClientErrors())
        handler.rutter_stderr = True  # type: ignore[attr-defined]
        root.addHandler(handler)
    root.setLevel(logging.WARNING)
    logging.getLogger(LOGGER_NAME).setLevel(level)
    # pygls logs each message at INFO: only its warnings unless we debug.
    logging.getLogger("pygls").setLevel(
        logging.DEBUG if level <= logging.DEBUG else logging.WARNING
    )


class ClientLogHandler(logging.Handler):
    """Forwards `rutter_lsp` records to the client as `window/logMessage`."""

    def __init__(self, server: LanguageServer) -> None:
        super().__init__()
        self._server = server
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self.setFormatter(logging.Formatter("%(message)s"))

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        """Start forwarding (called on the event loop once `initialize` arrives)."""
        self._loop = loop
        self._loop_thread = threading.get_ident()
        # The client now gets the log; editors such as Neovim record every stderr line as an
        # error, so stderr keeps only warnings and errors unless debugging was asked for.
        if logging.getLogger(LOGGER_NAME).getEffectiveLevel() > logging.DEBUG:
            for handler in logging.getLogger().handlers:
                if getattr(handler, "rutter_stderr", False):
                    handler.setLevel(logging.WARNING)

    def emit(self, record: logging.LogRecord) -> None:
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        try:
            message = self.format(record)
        except Exception:  # pragma: no cover - logging must never raise
            return
        kind = next((kind for level, kind in _MESSAGE_TYPES if record.levelno >= level), None)
        params = types.LogMessageParams(type=kind or types.MessageType.Log, message=message)
        if threading.get_ident() == self._loop_thread:
            self._send(params)
        else:
            loop.call_soon_threadsafe(self._send, params)

    def _send(self, params: types.LogMessageParams) -> None:
        with contextlib.suppress(Exception):  # the client is gone: nothing to tell
            self._server.window_log_message(params)
