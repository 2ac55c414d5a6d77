"""The stdio message loop: LSP framing that answers every malformed message and recovers.

pygls' own loop (`pygls.io_.run_async`) leaves a client waiting when a message is malformed:
a body that is not JSON, a request whose `method` is not a string, or params its converter
cannot structure is logged with a traceback and never answered, and a wrong `Content-Length`
swallows the message after it. A client then hangs on a request that will never be answered.

This loop frames messages itself and hands each well-formed one to pygls' protocol exactly as
pygls' loop does (`structure_message`, then `handle_message`), so every feature still runs
through pygls. What it adds, per JSON-RPC 2.0:

- a body that is not JSON (or not UTF-8) is answered with -32700 (parse error, `id` null);
- a message nested deeper than `rutter_lsp.nesting.MAX_JSON_DEPTH` is refused before it is
  decoded: -32602 (invalid params) when its params are what nests too deep, else -32600, with
  its `id` where one can be read; a notification is dropped with one log line;
- a message that is not an object, lacks `"jsonrpc": "2.0"`, has a `method` that is not a
  string or an `id` that is neither a string nor an integer is answered with -32600 (invalid
  request), with its `id` where one can be read;
- a request of a method the server does not have is answered with -32601, without its name;
- a request whose params do not fit its method is answered with -32602 (invalid params),
  naming the field and the rule (`rutter_lsp.errors.structure_error`: the error document of every
  surface's `invalid_params` as the error's `data`);
- a `$/cancelRequest` whose id is neither a string nor an integer is dropped (one log line);
- framing recovers and never waits for bytes that are not coming (`Framing`): a header line
  is matched wherever `Content-Length:` appears in it (so a body that was shorter than
  announced does not hide the next header); a body that announced more than it had is cut at
  the next message's header, or once it is a whole JSON value and nothing more comes; a
  header block with two `Content-Length` headers is refused. Such a frame is answered with
  -32600 and its `id` and never acted on, and the next message is read as usual.

Nothing a client sent is logged or echoed: the error answers and log lines name codes, fields
and rules, never values.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import select
import threading
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO, Final

from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from rutter_lsp.errors import structure_error
from rutter_lsp.nesting import MAX_JSON_DEPTH, TOO_DEEP, json_depth_exceeds, outline

if TYPE_CHECKING:
    from pygls.protocol import JsonRPCProtocol

logger = logging.getLogger(__name__)

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602

MAX_BODY_BYTES: Final = 1 << 30
"""A `Content-Length` above this is refused as malformed framing (nothing is allocated)."""

_CONTENT_LENGTH: Final = re.compile(rb"content-length:[ \t]*([^\r\n]*)", re.IGNORECASE)
_DIGITS: Final = re.compile(rb"[0-9]{1,10}")
_NEXT_HEADER: Final = re.compile(rb"content-length:[ \t]{0,16}[0-9]{1,10}\r?\n", re.IGNORECASE)
_HEADER_SPAN: Final = 64
"""Longer than any match of `_NEXT_HEADER`: how far back a new chunk's search starts."""
_CHUNK_BYTES: Final = 1 << 20
_MALFORMED: Final = -1
_TWO_LENGTHS: Final = -2

OVERRUN_GRACE_SECONDS: Final = 2.0
"""How long a body that is already a complete JSON value waits for the rest of the bytes its
`Content-Length` announced. A client writes a message at once; only bytes it counted and
never sent are waited for, so no well-formed message ever waits this long."""


class ByteSource:
    """A blocking binary stream read on a worker thread, buffered here, with bytes that can be
    put back and reads that can wait for a limited time.

    A stream with a file descriptor (stdin) is read through it directly, so that `select` can
    tell whether bytes are coming; on Windows, where `select` takes sockets only, and for
    streams without one, a read waits as long as it takes."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._buffer = bytearray()
        self._fd = _selectable_descriptor(stream)
        self._scratch = bytearray(_CHUNK_BYTES if self._fd is not None else 0)

    def push_back(self, data: bytes) -> None:
        self._buffer[:0] = data

    def readline(self) -> bytes:
        searched = 0
        while True:
            end = self._buffer.find(b"\n", searched)
            if end >= 0:
                return self._take(end + 1)
            searched = len(self._buffer)
            chunk = self._read_chunk(_CHUNK_BYTES)
            if not chunk:
                return self._take(len(self._buffer))
            self._buffer += chunk

    def read_some(self, limit: int, timeout: float | None = None) -> bytes | None:
        """Up to `limit` bytes, as soon as any are there; b"" at end of input; None when none
        arrived within `timeout` seconds (only where the wait can be limited)."""
        if self._buffer:
            return self._take(min(limit, len(self._buffer)))
        if timeout is not None and self._fd is not None:
            ready, _, _ = select.select([self._fd], [], [], timeout)
            if not ready:
                return None
        return self._read_chunk(min(limit, _CHUNK_BYTES))

    def _take(self, size: int) -> bytes:
        taken = bytes(self._buffer[:size])
        del self._buffer[:size]
        return taken

    def _read_chunk(self, size: int) -> bytes:
        if self._fd is not None:
            # Into one reused buffer: `os.read` would allocate `size` bytes on every call.
            view = memoryview(self._scratch)[:size]
            return bytes(view[: os.readv(self._fd, [view])])
        read1 = getattr(self._stream, "read1", None)
        return bytes(read1(size) if read1 is not None else self._stream.read(size))


def _selectable_descriptor(stream: BinaryIO) -> int | None:
    if os.name == "nt":
        return None
    try:
        return stream.fileno()
    except (OSError, ValueError):  # io.UnsupportedOperation is an OSError
        return None


class Refused:
    """A malformed header block, already reported: read on."""


REFUSED: Final = Refused()


@dataclass(frozen=True, slots=True)
class Frame:
    """A message body, and why its frame is malformed when it is (then it is answered with
    an error and never acted on)."""

    body: bytes
    fault: str | None = None


TWO_LENGTHS: Final = "the frame has more than one Content-Length header"
LENGTH_OVERRUN: Final = "the frame's Content-Length announces more bytes than its message has"


class Framing:
    """Reads one message at a time; reports header faults through `fault`.

    The rule for a frame whose body never arrives in full: the reader never waits for bytes
    that are not coming. While a body is read, a `Content-Length: <digits>` line ending in a
    newline cuts it there (no JSON text holds such a line: a newline cannot be inside a string,
    and the header is not JSON outside one), and reading resumes at that header; and when the
    bytes read so far are a complete JSON value and nothing more arrives for
    `OVERRUN_GRACE_SECONDS`, the body ends there. Either way the frame is malformed
    (`LENGTH_OVERRUN`). A header block with two `Content-Length` headers is malformed too
    (`TWO_LENGTHS`): its body is read by the same two rules."""

    def __init__(self, source: ByteSource, fault: Callable[[int, str], None]) -> None:
        self._source = source
        self._fault = fault

    def next_frame(self) -> Frame | Refused | None:
        """The next message; `REFUSED` after a malformed header block (reported through
        `fault`); None at end of input."""
        length = self._read_headers()
        if length is None:
            return None
        if length == _MALFORMED:
            return REFUSED
        if length == _TWO_LENGTHS:
            body, _ = self._read_body(MAX_BODY_BYTES)
            return Frame(body, TWO_LENGTHS)
        body, complete = self._read_body(length)
        if len(body) == length:
            return Frame(body)
        if complete:
            return Frame(body, LENGTH_OVERRUN)
        return None  # the stream ended mid-body: nothing left to answer

    def _read_body(self, length: int) -> tuple[bytes, bool]:
        """Up to `length` bytes, cut by the rules above; whether the body was read in full
        or cut (False when the input ended first)."""
        body = bytearray()
        while len(body) < length:
            chunk = self._source.read_some(length - len(body), OVERRUN_GRACE_SECONDS)
            if chunk is None:  # nothing for a while: is what came a whole message?
                if _is_json(bytes(body)):
                    return bytes(body), True
                continue
            if not chunk:
                return bytes(body), False
            searched_from = max(0, len(body) - _HEADER_SPAN)
            body += chunk
            # A header ends in a newline; a compact JSON body holds none.
            header = _NEXT_HEADER.search(body, searched_from) if b"\n" in chunk else None
            if header is not None:
                self._source.push_back(bytes(body[header.start() :]))
                return bytes(body[: header.start()]), True
        return bytes(body), True

    def _read_headers(self) -> int | None:
        """The announced length (`_MALFORMED` for a malformed header block, `_TWO_LENGTHS`
        for one with two lengths), None at end of input."""
        length: int | None = None
        lengths = 0
        malformed = False
        seen_header = False
        while True:
            line = self._source.readline()
            if not line:
                return None
            if line in (b"\r\n", b"\n"):
                if not seen_header:
                    continue  # stray blank lines between messages
                if lengths > 1:
                    return _TWO_LENGTHS  # answered once its body is read, with its id
                if malformed or length is None:
                    self._fault(PARSE_ERROR, "a header block without a valid Content-Length")
                    return _MALFORMED
                return length
            seen_header = True
            match = _CONTENT_LENGTH.search(line)
            if match is None:
                continue  # Content-Type or another header, or garbage before a header
            lengths += 1
            value = match.group(1).strip()
            if _DIGITS.fullmatch(value) and int(value) <= MAX_BODY_BYTES:
                length, malformed = int(value), False
            else:
                malformed = True


def _is_json(data: bytes) -> bool:
    if not data.strip():
        return False
    if json_depth_exceeds(data):
        return outline(data) is not None
    try:
        json.loads(data)
    except ValueError:
        return False
    return True


def _readable_id(data: Any) -> int | str | None:
    if isinstance(data, dict):
        value = data.get("id")
        if value == TOO_DEEP:
            return None
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
            frame = await loop.run_in_executor(self._executor, self._framing.next_frame)
            for code, why in self._faults:
                self._answer_error(None, code, why)
            self._faults.clear()
            if frame is None:
                break
            if isinstance(frame, Frame):
                self.handle_frame(frame)

    def handle_frame(self, frame: Frame) -> None:
        body = frame.body
        if json_depth_exceeds(body):
            self._refuse_too_deep(outline(body))
            return
        try:
            data = json.loads(body)
        except ValueError:  # not JSON, not UTF-8, or a number of over 4,300 digits
            if frame.fault is not None:
                self._answer_error(None, INVALID_REQUEST, frame.fault)
            else:
                self._answer_error(None, PARSE_ERROR, "the message body is not JSON")
            return
        why = frame.fault or envelope_fault(data)
        if why is not None:
            if frame.fault is not None and "id" not in data:
                logger.warning("dropped a message: %s", why)  # a notification or garbage
            else:
                self._answer_error(_readable_id(data), INVALID_REQUEST, why)
            return
        self.handle_message(data)

    def handle_message(self, data: dict[str, Any]) -> None:
        """A well-formed JSON-RPC 2.0 message, handed to pygls where pygls can handle it."""
        method = data.get("method")
        is_request = method is not None and data.get("id") is not None
        if method == CANCEL_REQUEST:
            if not _cancels_an_id(data.get("params")):
                logger.warning("ignored a $/cancelRequest whose id is not a string or integer")
                return
        elif method is not None and not self._has_method(method):
            # pygls would answer (and log) the method's name: the client's text.
            if is_request:
                self._answer_error(_readable_id(data), METHOD_NOT_FOUND, "method not found")
            else:
                logger.debug("ignored a notification of a method the server does not have")
            return
        try:
            message = self._protocol.structure_message(data)
        except JsonRpcInvalidParams as error:
            cause = error.__cause__ or error
            refusal = structure_error(cause)
            self._refused(data, is_request, INVALID_PARAMS, refusal.message, refusal.to_json())
            return
        except JsonRpcException as error:
            self._refused(data, is_request, error.code, "the message could not be decoded")
            return
        try:
            self._protocol.handle_message(message)
        except Exception as error:
            # One line: a traceback would show the values it was handling.
            logger.error("a message could not be handled (%s)", type(error).__name__)
            logger.debug("the failure handling a message", exc_info=True)

    def _has_method(self, method: str) -> bool:
        features = self._protocol.fm
        return method in features.builtin_features or method in features.features

    def _refuse_too_deep(self, data: Any) -> None:
        """A message nested past `MAX_JSON_DEPTH`, refused without decoding it; `data` is its
        outline (`rutter_lsp.nesting.outline`), from which its id is read."""
        rule = f"nest objects and arrays more than {MAX_JSON_DEPTH} levels deep (max depth)"
        msg_id = _readable_id(data)
        if isinstance(data, dict) and "id" not in data:  # a notification: no one to answer
            logger.warning("dropped a notification: messages must not %s", rule)
        elif msg_id is not None and data.get("params") == TOO_DEEP:
            self._answer_error(msg_id, INVALID_PARAMS, f"invalid params: params must not {rule}")
        else:
            self._answer_error(msg_id, INVALID_REQUEST, f"messages must not {rule}")

    def _refused(
        self,
        data: dict[str, Any],
        is_request: bool,
        code: int,
        why: str,
        document: dict[str, Any] | None = None,
    ) -> None:
        if is_request:
            self._answer_error(_readable_id(data), code, why, document)
        else:
            logger.warning("ignored a notification %s: %s", data.get("method"), why)

    def _answer_error(
        self,
        msg_id: int | str | None,
        code: int,
        why: str,
        document: dict[str, Any] | None = None,
    ) -> None:
        logger.warning("answered error %s: %s", code, why)
        writer = self._protocol.writer
        if writer is None:
            return
        error: dict[str, Any] = {"code": code, "message": why}
        if document is not None:
            error["data"] = document  # the error document, as every custom request's failure
        answer = {"jsonrpc": "2.0", "id": msg_id, "error": error}
        # The protocol's writer frames the body (see `rutter_lsp.protocol.set_writer`).
        writer.write(json.dumps(answer).encode("utf-8"))


CANCEL_REQUEST: Final = "$/cancelRequest"


def _cancels_an_id(params: Any) -> bool:
    request_id = params.get("id") if isinstance(params, dict) else None
    return isinstance(request_id, str) or (
        isinstance(request_id, int) and not isinstance(request_id, bool)
    )
