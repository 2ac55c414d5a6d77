"""The stdio message loop: LSP framing that answers every malformed message and recovers.

pygls' own loop (`pygls.io_.run_async`) leaves a client waiting when a message is malformed:
a body that is not JSON, a request whose `method` is not a string, or params its converter
cannot structure is logged with a traceback and never answered, and a wrong `Content-Length`
swallows the message after it. A client then hangs on a request that will never be answered.

This loop frames messages itself and hands each well-formed one to pygls' protocol exactly as
pygls' loop does (`structure_message`, then `handle_message`), so every feature still runs
through pygls. What it adds, per JSON-RPC 2.0:

- a body that is not JSON (or not UTF-8) is answered with -32700 (parse error, `id` null);
- a message that is not an object, lacks `"jsonrpc": "2.0"`, has a `method` that is not a
  string or an `id` that is neither a string nor an integer is answered with -32600 (invalid
  request), with its `id` where one can be read;
- a request whose params do not fit its method is answered with -32602 (invalid params);
- framing recovers: a header line is matched wherever `Content-Length:` appears in it (so a
  body that was shorter than announced does not hide the next header), and a body that
  announced more than it had is cut where the next message's header begins, and that message
  is read as usual.

Nothing a client sent is logged: the error answers and log lines name codes, never content.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
from collections.abc import Callable
from concurrent.futures import Executor
from typing import TYPE_CHECKING, Any, BinaryIO, Final

from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

if TYPE_CHECKING:
    from pygls.protocol import JsonRPCProtocol

logger = logging.getLogger(__name__)

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
INVALID_PARAMS: Final = -32602

MAX_BODY_BYTES: Final = 1 << 30
"""A `Content-Length` above this is refused as malformed framing (nothing is allocated)."""

_CONTENT_LENGTH: Final = re.compile(rb"content-length:[ \t]*([^\r\n]*)", re.IGNORECASE)
_DIGITS: Final = re.compile(rb"[0-9]{1,10}")
_NEXT_HEADER: Final = re.compile(rb"content-length:[ \t]*[0-9]+\r?\n", re.IGNORECASE)


class ByteSource:
    """A blocking binary stream read on a worker thread, with bytes that can be put back."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._pushed = b""

    def push_back(self, data: bytes) -> None:
        self._pushed = data + self._pushed

    def readline(self) -> bytes:
        if self._pushed:
            end = self._pushed.find(b"\n")
            if end >= 0:
                line, self._pushed = self._pushed[: end + 1], self._pushed[end + 1 :]
                return line
            line, self._pushed = self._pushed, b""
            return line + self._stream.readline()
        return self._stream.readline()

    def read(self, size: int) -> bytes:
        chunks = []
        if self._pushed:
            chunk, self._pushed = self._pushed[:size], self._pushed[size:]
            chunks.append(chunk)
            size -= len(chunk)
        while size > 0:
            chunk = self._stream.read(size)
            if not chunk:
                break
            chunks.append(chunk)
            size -= len(chunk)
        return b"".join(chunks)


class Refused:
    """A malformed header block, already reported: read on."""


REFUSED: Final = Refused()


class Framing:
    """Reads one message body at a time; reports framing faults through `fault`."""

    def __init__(self, source: ByteSource, fault: Callable[[int, str], None]) -> None:
        self._source = source
        self._fault = fault

    def next_body(self) -> bytes | Refused | None:
        """The next body announced by a valid header block; `REFUSED` after a malformed
        header block (reported through `fault`); None at end of input."""
        length = self._read_headers()
        if length is None:
            return None
        if length < 0:
            return REFUSED
        body = self._source.read(length)
        if len(body) < length:
            return None  # the stream ended mid-body: nothing left to answer
        return body

    def _read_headers(self) -> int | None:
        """The announced length (-1 for a malformed header block), None at end of input."""
        length: int | None = None
        malformed = False
        seen_header = False
        while True:
            line = self._source.readline()
            if not line:
                return None
            if line in (b"\r\n", b"\n"):
                if not seen_header:
                    continue  # stray blank lines between messages
                if malformed or length is None:
                    self._fault(PARSE_ERROR, "a header block without a valid Content-Length")
                    return -1
                return length
            seen_header = True
            match = _CONTENT_LENGTH.search(line)
            if match is None:
                continue  # Content-Type or another header, or garbage before a header
            value = match.group(1).strip()
            if _DIGITS.fullmatch(value) and int(value) <= MAX_BODY_BYTES:
                length, malformed = int(value), False
            else:
                malformed = True

    def split_overrun(self, body: bytes) -> bytes:
        """A body that does not parse but holds another message's header announced more
        bytes than it had: keep the part before that header and put the rest back, to be
        read as the next message."""
        match = _NEXT_HEADER.search(body)
        if match is None:
            return body
        self._source.push_back(body[match.start() :])
        return body[: match.start()]


def _readable_id(data: Any) -> int | str | None:
    if isinstance(data, dict):
        value = data.get("id")
        if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
            return value
    return None


def envelope_fault(data: Any) -> str | None:
    """Why `data` is not a JSON-RPC 2.0 message, or None when it is one."""
    if not isinstance(data, dict):
        return "the message is not a JSON object"
    if data.get("jsonrpc") != "2.0":
        return 'the message lacks "jsonrpc": "2.0"'
    if "id" in data:
        value = data["id"]
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, str))):
            return "the id is neither a string nor an integer"
    if "method" in data:
        if not isinstance(data["method"], str):
            return "the method is not a string"
        if "params" in data and not isinstance(data["params"], (dict, list)):
            return "the params are neither an object nor an array"
    elif "result" not in data and "error" not in data:
        return "the message is neither a request, a notification nor a response"
    return None


class MessageLoop:
    """Reads framed messages from `stream` and hands them to `protocol` on the event loop."""

    def __init__(
        self, protocol: JsonRPCProtocol, stream: BinaryIO, executor: Executor | None = None
    ) -> None:
        self._protocol = protocol
        self._executor = executor
        self._source = ByteSource(stream)
        self._faults: list[tuple[int, str]] = []
        self._framing = Framing(self._source, lambda code, why: self._faults.append((code, why)))

    async def run(self, stop: threading.Event) -> None:
        loop = asyncio.get_running_loop()
        while not stop.is_set():
            body = await loop.run_in_executor(self._executor, self._framing.next_body)
            for code, why in self._faults:
                self._answer_error(None, code, why)
            self._faults.clear()
            if body is None:
                break
            if isinstance(body, bytes):
                self.handle_body(body)

    def handle_body(self, body: bytes) -> None:
        try:
            data = json.loads(body)
        except ValueError:
            # Maybe the body ran into the next message: answer the broken part, keep the rest.
            kept = self._framing.split_overrun(body)
            try:
                data = json.loads(kept)
            except ValueError:
                self._answer_error(None, PARSE_ERROR, "the message body is not JSON")
                return
        why = envelope_fault(data)
        if why is not None:
            self._answer_error(_readable_id(data), INVALID_REQUEST, why)
            return
        is_request = "method" in data and data.get("id") is not None
        try:
            message = self._protocol.structure_message(data)
        except JsonRpcInvalidParams:
            self._refused(data, is_request, INVALID_PARAMS, "the params do not fit the method")
            return
        except JsonRpcException as error:
            self._refused(data, is_request, error.code, "the message could not be decoded")
            return
        try:
            self._protocol.handle_message(message)
        except Exception:
            logger.exception("a message could not be handled")

    def _refused(self, data: dict[str, Any], is_request: bool, code: int, why: str) -> None:
        method = data.get("method")
        if is_request:
            self._answer_error(_readable_id(data), code, f"{why} ({method})")
        else:
            logger.warning("ignored a notification %s: %s", method, why)

    def _answer_error(self, msg_id: int | str | None, code: int, why: str) -> None:
        logger.warning("answered error %s: %s", code, why)
        writer = self._protocol.writer
        if writer is None:
            return
        answer = {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": why}}
        # The protocol's writer frames the body (see `rutter_lsp.protocol.set_writer`).
        writer.write(json.dumps(answer).encode("utf-8"))
