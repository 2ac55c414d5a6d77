"""pygls' protocol, adjusted through its public seams only: the cattrs converter it encodes and
decodes with, the writer it is given (`set_writer`), and `lsp_method` overrides.

Why adjust it at all: speed. pygls encodes every message with
`json.dumps(message, default=converter.unstructure)`, and cattrs' unstructuring walks every value
of a plain dict: for a 40 KiB snapshot that walk costs more than the discovery behind it. And it
decodes the params of requests it has no type for into a namedtuple per JSON object (by encoding
them again and decoding with a new namedtuple class each time, ~0.1 ms apiece). So:

- plain dicts are unstructured as they are (`json.dumps` encodes them; anything in them that is
  not plain JSON still reaches pygls' `default`, which unstructures it as before);
- the params of requests lsprotocol has no type for (our `rutter/*` requests) stay plain JSON;
  `rutter_lsp.dispatch` decodes them into the operation's pydantic model;
- a result already encoded as JSON text (`EncodedResult`) is not decoded and encoded again: the
  converter puts a placeholder in its place and the writer swaps the text in before framing.
  `json.dumps` cannot embed raw JSON and pygls has no hook between encoding and writing, so the
  writer pygls is given (a documented seam: `set_writer`, and the transports' `write`/`close`)
  is that hook.
"""

from __future__ import annotations

import itertools
import re
import secrets
from collections.abc import Generator
from typing import TYPE_CHECKING, Any, Final

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.protocol import JsonRPCRequestMessage, LanguageServerProtocol, lsp_method

if TYPE_CHECKING:
    from cattrs import Converter
    from pygls.io_ import AsyncWriter, Writer


class EncodedResult:
    """A request's result already encoded as JSON text: sent as it is."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def pulls_diagnostics(capabilities: types.ClientCapabilities) -> bool:
    """Pull only where the client can pull and be told to pull again after disk changes;
    otherwise push. Never both."""
    return get_capability(capabilities, "text_document.diagnostic") is not None and bool(
        get_capability(capabilities, "workspace.diagnostics.refresh_support", False)
    )


class EncodedResults:
    """`EncodedResult`s between the converter (which leaves a placeholder) and the writer (which
    puts the text back). Event loop only, like every send: a message is encoded and written in
    one call, so whatever is pending when a message is written belongs to that message."""

    def __init__(self) -> None:
        # Random per process: no client can send a string that the writer would replace.
        self._prefix: Final = f"rutter-encoded-{secrets.token_hex(8)}-"
        self._pattern: Final = re.compile(rb'"' + re.escape(self._prefix.encode()) + rb'\d+"')
        self._numbers = itertools.count()
        self._pending: dict[bytes, bytes] = {}

    def placeholder(self, result: EncodedResult) -> str:
        key = f"{self._prefix}{next(self._numbers)}"
        self._pending[f'"{key}"'.encode()] = result.text.encode()
        return key

    def splice(self, body: bytes) -> bytes:
        if not self._pending:
            return body
        pending, self._pending = self._pending, {}
        return self._pattern.sub(lambda match: pending.get(match[0], match[0]), body)


class _SplicingWriter:
    """The transport's writer, behind one that splices encoded results in and frames the
    message (the frame's length must count the spliced body)."""

    def __init__(
        self,
        transport: Writer | AsyncWriter,
        encoded: EncodedResults,
        *,
        framed: bool,
        content_type: str,
        charset: str,
    ) -> None:
        self._transport = transport
        self._encoded = encoded
        self._framed = framed
        self._content_type = f"{content_type}; charset={charset}"

    def write(self, data: bytes) -> Any:
        body = self._encoded.splice(data)
        if self._framed:
            header = f"Content-Length: {len(body)}\r\nContent-Type: {self._content_type}\r\n\r\n"
            body = header.encode("ascii") + body
        # An asynchronous transport (websockets) returns an awaitable; pygls schedules it.
        return self._transport.write(body)

    def close(self) -> Any:
        return self._transport.close()


def _as_is(value: dict[Any, Any]) -> dict[Any, Any]:
    return value


def _plain_request(data: dict[str, Any], _: type[Any]) -> JsonRPCRequestMessage:
    return JsonRPCRequestMessage(
        id=data["id"], method=data["method"], jsonrpc=data["jsonrpc"], params=data.get("params")
    )


class RutterProtocol(LanguageServerProtocol):
    """pygls' protocol with the converter hooks and writer above, and the diagnostic provider
    advertised only to clients that pull."""

    def __init__(self, server: Any, converter: Converter) -> None:
        super().__init__(server, converter)
        self.encoded = EncodedResults()
        converter.register_unstructure_hook(dict, _as_is)
        converter.register_unstructure_hook(EncodedResult, self.encoded.placeholder)
        # Only requests of methods lsprotocol has no type for are decoded as this type.
        converter.register_structure_hook(JsonRPCRequestMessage, _plain_request)

    def set_writer(self, writer: Writer | AsyncWriter, include_headers: bool = True) -> None:
        spliced = _SplicingWriter(
            writer,
            self.encoded,
            framed=include_headers,
            content_type=self.CONTENT_TYPE,
            charset=self.CHARSET,
        )
        super().set_writer(spliced, include_headers=False)

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(
        self, params: types.InitializeParams
    ) -> Generator[Any, Any, types.InitializeResult]:
        result: types.InitializeResult = yield from super().lsp_initialize(params)
        if not pulls_diagnostics(self.client_capabilities):
            # Push clients get `publishDiagnostics`; advertising pull as well would make a
            # client that supports both report everything twice.
            result.capabilities.diagnostic_provider = None
        return result
