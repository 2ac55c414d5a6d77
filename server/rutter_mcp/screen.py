"""The lines read off stdin, screened before the SDK parses them: a message nested deeper than
the one bound (`rutter_core.kernel.nesting`, checked on the raw line) and a line that is not a
JSON-RPC message are answered with a typed JSON-RPC error and not passed on. The SDK would
drop such a line without an answer (its parser gives up past about 200 levels, and it hands
what it cannot parse to the server as an exception that is only logged at debug level), so
the client would wait for ever.

The answer names the rule (`data` is the error document: `nesting_too_deep`, `invalid_json`,
`invalid_request`, `number_out_of_range` for an integer of more digits than the SDK's parser
takes), never what was sent; the log gets one line, without content. A
notification or a response gets no answer, per JSON-RPC; the ID of a request too deep to parse
is read from the top level of its line by a scan that does not parse.
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import anyio
import mcp_types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from rutter_core.kernel.errors import RutterError, UsageError
from rutter_core.kernel.nesting import MAX_JSON_DEPTH, json_depth_exceeds, nesting_too_deep
from rutter_core.kernel.numbers import (
    OutOfRange,
    number_out_of_range,
    parse_float,
    parse_integer,
)

if TYPE_CHECKING:
    from mcp.shared._stream_protocols import WriteStream

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
INVALID_PARAMS: Final = -32602

_TOKEN: Final = re.compile(r'"[^"\\]*(?:\\(?:.|\Z)[^"\\]*)*(?:"|\Z)|[\[\]{}]', re.DOTALL)
"""A string (an unterminated one runs to the end: the scan stays linear) or a bracket."""
_SCALAR_ID: Final = re.compile(r'\s*:\s*(-?\d{1,19}|"[^"\\]*(?:\\.[^"\\]*)*")\s*[,}]', re.DOTALL)
"""An `id` member's value, when it is an integer or a string (else it is not an ID)."""
_ENVELOPE: Final = frozenset({'"method"', '"id"', '"result"', '"error"'})


@dataclass(frozen=True, slots=True)
class Refusal:
    code: int
    """The JSON-RPC error code."""
    error: RutterError
    """What is refused, as the error document (the JSON-RPC error's `data`)."""
    request_id: int | str | None
    silent: bool = False
    """A notification or a response: never answered (JSON-RPC), only logged."""


def top_level(line: str) -> tuple[frozenset[str], int | str | None]:
    """Of a JSON object's text, however deep its members nest: which of `method`, `id`,
    `result` and `error` its top level has, and the `id` when it is a string or an integer.
    Linear: one scan of strings and brackets, no parser."""
    keys: set[str] = set()
    request_id: int | str | None = None
    depth = 0
    for token in _TOKEN.finditer(line):
        text = token.group()
        if text in "[{":
            depth += 1
        elif text in "]}":
            depth -= 1
        elif depth == 1 and text in _ENVELOPE and line[token.end() :].lstrip()[:1] == ":":
            keys.add(text[1:-1])
            scalar = _SCALAR_ID.match(line, token.end()) if text == '"id"' else None
            if scalar is not None:
                request_id = json.loads(scalar.group(1))
    return frozenset(keys), request_id


def _refusal(code: int, error: RutterError, keys: Iterable[str], request_id: Any) -> Refusal:
    """The refusal of a message with these top-level `keys`: answered to its `id` (null when
    it has none of a valid type), unless it is a notification or a response."""
    present = set(keys)
    notification = "method" in present and "id" not in present
    response = "method" not in present and bool(present & {"result", "error"})
    valid = isinstance(request_id, int | str) and not isinstance(request_id, bool)
    return Refusal(code, error, request_id if valid else None, notification or response)


def _invalid_request() -> UsageError:
    return UsageError(
        "invalid_request",
        "the message is not a JSON-RPC 2.0 request, notification or response this server takes",
    )


def screen(line: str) -> Refusal | None:
    """Why `line` is not passed to the SDK, or None (it is, and parses there)."""
    if json_depth_exceeds(line):
        keys, request_id = top_level(line)
        return _refusal(INVALID_REQUEST, nesting_too_deep(), keys, request_id)
    try:
        mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError:
        pass
    else:
        return None
    try:
        value = json.loads(line, parse_int=parse_integer, parse_float=parse_float)
    except OutOfRange:  # the SDK's parser refuses an integer of thousands of digits
        keys, request_id = top_level(line)
        return _refusal(INVALID_PARAMS, number_out_of_range(), keys, request_id)
    except (ValueError, RecursionError):
        return Refusal(PARSE_ERROR, UsageError("invalid_json", "the line is not JSON"), None)
    if not isinstance(value, dict):  # a batch, or a bare value
        return Refusal(INVALID_REQUEST, _invalid_request(), None)
    return _refusal(INVALID_REQUEST, _invalid_request(), value, value.get("id"))


def _answer(refusal: Refusal) -> SessionMessage:
    return SessionMessage(
        mcp_types.JSONRPCError(
            jsonrpc="2.0",
            id=refusal.request_id,
            error=mcp_types.ErrorData(
                code=refusal.code, message=refusal.error.message, data=refusal.error.to_json()
            ),
        )
    )


def _log(refusal: Refusal) -> None:
    what = {
        "nesting_too_deep": f"a message nested more than {MAX_JSON_DEPTH} levels deep",
        "invalid_json": "a line that is not JSON",
        "number_out_of_range": "a message with a number out of range",
    }.get(refusal.error.code, "a message that is not JSON-RPC")
    answer = "no answer: a notification or a response" if refusal.silent else "answered"
    sys.stderr.write(f"rutter mcp: refused {what} ({answer})\n")
    sys.stderr.flush()


class ScreenedLines:
    """The lines of `lines` the SDK may parse; each other one is answered on the write stream
    (given once the transport has made it: `answer_on`) before the next line is read, so
    answers keep the order of the lines."""

    def __init__(self, lines: AsyncIterable[str]) -> None:
        self._lines = lines
        self._write: WriteStream[SessionMessage] | None = None
        self._ready = anyio.Event()

    def answer_on(self, write_stream: WriteStream[SessionMessage]) -> None:
        self._write = write_stream
        self._ready.set()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._screened()

    async def _screened(self) -> AsyncIterator[str]:
        async for line in self._lines:
            if not line.strip():
                continue  # blank lines between messages are not messages
            refusal = screen(line)
            if refusal is None:
                yield line
                continue
            _log(refusal)
            if refusal.silent:
                continue
            await self._ready.wait()
            assert self._write is not None
            with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                await self._write.send(_answer(refusal))  # unless the client went away


@contextmanager
def claimed_stdin() -> Iterator[anyio.AsyncFile[str]]:
    """stdin as the protocol's: a private duplicate of fd 0 read as UTF-8 text (undecodable
    bytes replaced, as the SDK reads it), while fd 0 points at the null device, so a child
    process or a stray read never takes protocol bytes (as the SDK does with the stdin it
    opens itself). Where fd 0 cannot be duplicated, stdin is read in place."""
    try:
        private = _duplicate_stdin()
        null = os.open(os.devnull, os.O_RDONLY)
    except OSError:
        private = None
    else:
        os.dup2(null, 0)
        os.close(null)
    source = sys.stdin.buffer if private is None else os.fdopen(private, "rb", closefd=False)
    # Never closed: a worker thread may still block reading it when the server stops.
    text = io.TextIOWrapper(source, encoding="utf-8", errors="replace")
    try:
        yield anyio.wrap_file(text)
    finally:
        with suppress(ValueError):
            text.detach()
        if private is not None:
            with suppress(OSError):
                os.dup2(private, 0)


def _duplicate_stdin() -> int:
    """fd 0 duplicated above the standard descriptors (close-on-exec)."""
    if sys.platform == "win32":  # pragma: no cover - not tested here
        return os.dup(0)
    import fcntl

    return fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
