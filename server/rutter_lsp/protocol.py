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
- strings, integers and booleans are decoded strictly (see `strict_primitives`);
- an answer never carries a traceback (see `without_traceback`);
- a result already encoded as JSON text (`EncodedResult`) is not decoded and encoded again: the
  converter puts a placeholder in its place and the writer swaps the text in before framing.
  `json.dumps` cannot embed raw JSON and pygls has no hook between encoding and writing, so the
  writer pygls is given (a documented seam: `set_writer`, and the transports' `write`/`close`)
  is that hook.
"""

from __future__ import annotations

import itertools
import json
import logging
import re
import secrets
from collections.abc import Generator
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import unquote, urlsplit

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.exceptions import JsonRpcInvalidParams
from pygls.protocol import JsonRPCRequestMessage, LanguageServerProtocol, lsp_method

from rutter_core.app.profiles import is_agent_file
from rutter_core.discovery.layout import IGNORE_NAME, PRAYU_DIR, classify
from rutter_lsp.errors import WrongType

if TYPE_CHECKING:
    from cattrs import Converter
    from pygls.io_ import AsyncWriter, Writer


logger = logging.getLogger(__name__)


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
        if _TRACEBACK_KEY in body:
            body = without_traceback(body)
        if self._framed:
            header = f"Content-Length: {len(body)}\r\nContent-Type: {self._content_type}\r\n\r\n"
            body = header.encode("ascii") + body
        # An asynchronous transport (websockets) returns an awaitable; pygls schedules it.
        return self._transport.write(body)

    def close(self) -> Any:
        return self._transport.close()


_TRACEBACK_KEY: Final = b'"traceback"'
INTERNAL_ERROR_MESSAGE: Final = "internal error: see the language server's log"


def without_traceback(body: bytes) -> bytes:
    """An error answer without what pygls puts in it when a handler fails unexpectedly
    (`JsonRpcInternalError.of`): the exception's text, which can hold a value the handler was
    working on, and its traceback. The client gets the code and a pointer to the log, where
    pygls logged the failure."""
    try:
        message = json.loads(body)
    except ValueError:
        return body
    error = message.get("error") if isinstance(message, dict) else None
    if not isinstance(error, dict) or not isinstance(error.get("data"), dict):
        return body
    if "traceback" not in error["data"]:
        return body
    message["error"] = {"code": error.get("code"), "message": INTERNAL_ERROR_MESSAGE}
    return json.dumps(message).encode("utf-8")


def _as_is(value: dict[Any, Any]) -> dict[Any, Any]:
    return value


def _plain_request(data: dict[str, Any], _: type[Any]) -> JsonRPCRequestMessage:
    return JsonRPCRequestMessage(
        id=data["id"], method=data["method"], jsonrpc=data["jsonrpc"], params=data.get("params")
    )


def _strict_str(value: Any, _: type[Any]) -> str:
    if isinstance(value, str):
        return value
    raise WrongType("a string", "string_type")


def _strict_int(value: Any, _: type[Any]) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise WrongType("an integer", "int_type")


def _strict_float(value: Any, _: type[Any]) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    raise WrongType("a number", "float_type")


def _strict_bool(value: Any, _: type[Any]) -> bool:
    if isinstance(value, bool):
        return value
    raise WrongType("true or false", "bool_type")


def strict_primitives(converter: Converter) -> None:
    """Decode strings, numbers and booleans only from values of that JSON type. cattrs
    converts whatever it is given (`str(5)`, `int("1")`, `bool("false")`): a hover with
    `"uri": 5` was served for the URI `"5"` instead of being refused as invalid params."""
    converter.register_structure_hook(str, _strict_str)
    converter.register_structure_hook(int, _strict_int)
    converter.register_structure_hook(float, _strict_float)
    converter.register_structure_hook(bool, _strict_bool)


MAX_TRACKED_CHARS: Final = 1 << 20
"""An instruction file's buffer above this many characters is not kept (discovery refuses any
source over 64 KiB, so its diagnostics come from the disk alone)."""


def may_need_text(uri: str) -> bool:
    """Whether rutter ever reads the buffer of the document at `uri`: only instruction files,
    files an agent profile reads (issue 20) and the ignore file do; any other document only
    needs to be known as open."""
    parts = urlsplit(uri)
    if parts.scheme != "file":
        return False
    path = unquote(parts.path).lstrip("/")
    segments = path.rsplit("/", 2)
    if len(segments) >= 2 and segments[-2] == PRAYU_DIR and segments[-1] == IGNORE_NAME:
        return True
    return classify(path) is not None or is_agent_file(path)


class RutterProtocol(LanguageServerProtocol):
    """pygls' protocol with the converter hooks and writer above, the diagnostic provider
    advertised only to clients that pull, and the text kept only of documents rutter reads.

    pygls keeps every open document's text and applies each incremental edit by walking the
    whole document (positions are converted character by character): a 5 MB minified bundle
    open in the editor cost over a second per keystroke. rutter reads only instruction files'
    buffers, so any other document is kept without its text (`untracked`: open, versioned, but
    empty) and its edits are not applied."""

    def __init__(self, server: Any, converter: Converter) -> None:
        super().__init__(server, converter)
        self.encoded = EncodedResults()
        converter.register_unstructure_hook(dict, _as_is)
        converter.register_unstructure_hook(EncodedResult, self.encoded.placeholder)
        # Only requests of methods lsprotocol has no type for are decoded as this type.
        converter.register_structure_hook(JsonRPCRequestMessage, _plain_request)
        strict_primitives(converter)
        self.untracked: set[str] = set()
        """Open documents kept without their text (keys as pygls' workspace has them)."""

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

    @lsp_method(types.WORKSPACE_EXECUTE_COMMAND)
    def lsp_workspace__execute_command(
        self, params: types.ExecuteCommandParams
    ) -> Generator[Any, Any, Any]:
        # pygls' answer to an unknown command quotes the name the client sent.
        if params.command not in self.fm.commands:
            raise JsonRpcInvalidParams("invalid params: 'command' names no command of this server")
        return (yield from super().lsp_workspace__execute_command(params))

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(
        self, params: types.DidOpenTextDocumentParams
    ) -> Generator[Any, Any, None]:
        item = params.text_document
        key = unquote(item.uri)
        if may_need_text(item.uri) and len(item.text) <= MAX_TRACKED_CHARS:
            self.untracked.discard(key)
        else:
            self.untracked.add(key)
            params = types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=item.uri, language_id=item.language_id, version=item.version, text=""
                )
            )
        yield from super().lsp_text_document__did_open(params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(
        self, params: types.DidChangeTextDocumentParams
    ) -> Generator[Any, Any, None]:
        key = unquote(params.text_document.uri)
        document = self.workspace.text_documents.get(key)
        if document is None:
            # A change to a document the client never opened: nothing to apply it to (pygls
            # fails on it and told the person with the URI in the message).
            logger.warning("ignored a change to a document that is not open")
            return
        if key not in self.untracked:
            # As pygls applies them, then the bound.
            for change in params.content_changes:
                self.workspace.update_text_document(params.text_document, change)
            if len(document.source) > MAX_TRACKED_CHARS:
                self._untrack(key, document.version)
        else:
            document.version = params.text_document.version
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(
        self, params: types.DidCloseTextDocumentParams
    ) -> Generator[Any, Any, None]:
        self.untracked.discard(unquote(params.text_document.uri))
        yield from super().lsp_text_document__did_close(params)

    def _untrack(self, key: str, version: int | None) -> None:
        """Drop a document's text from now on (it grew past `MAX_TRACKED_CHARS`)."""
        self.untracked.add(key)
        self.workspace.put_text_document(
            types.TextDocumentItem(uri=key, language_id="", version=version or 0, text="")
        )
