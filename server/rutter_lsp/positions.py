"""Text offsets to LSP positions in the negotiated position encoding.

LSP counts columns in UTF-16 code units unless the client offered another encoding in
`general.positionEncodings` and the server chose it (pygls picks the client's first supported
choice among utf-8, utf-16 and utf-32; `workspace.position_encoding` says which). Lines end at
`\\n`, `\\r\\n` or `\\r`, as the protocol defines.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import Final

from lsprotocol import types

_LINE_BREAK: Final = re.compile(r"\r\n|\r|\n")
_LINE_BREAK_BYTES: Final = re.compile(rb"\r\n|\r|\n")


def units(text: str, encoding: str) -> int:
    """Length of `text` in the code units of `encoding`."""
    if encoding == types.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8", "surrogatepass"))
    if encoding == types.PositionEncodingKind.Utf32:
        return len(text)
    if text.isascii():
        return len(text)
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)


class TextPositions:
    """Positions of character offsets in one text (a document's content)."""

    def __init__(self, text: str, encoding: str) -> None:
        self.text = text
        self.encoding = encoding
        self._starts = [0, *(match.end() for match in _LINE_BREAK.finditer(text))]

    @property
    def line_count(self) -> int:
        return len(self._starts)

    def line_text(self, line: int) -> str:
        """Line `line` (0-based) without its line break; empty past the end."""
        if line >= len(self._starts):
            return ""
        start = self._starts[line]
        end = self._starts[line + 1] if line + 1 < len(self._starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n")

    def position(self, offset: int) -> types.Position:
        """The position of character offset `offset` (0 ≤ offset ≤ len(text))."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect_right(self._starts, offset) - 1
        column = units(self.text[self._starts[line] : offset], self.encoding)
        return types.Position(line=line, character=column)

    def range(self, start: int, end: int) -> types.Range:
        return types.Range(start=self.position(start), end=self.position(end))

    def line_range(self, line: int) -> types.Range:
        """The whole of line `line`, without its line break."""
        length = units(self.line_text(line), self.encoding)
        return types.Range(
            start=types.Position(line=line, character=0),
            end=types.Position(line=line, character=length),
        )


def byte_offset_range(raw: bytes, offset: int, encoding: str) -> types.Range:
    """The range of the single byte at `offset` in a file's raw bytes (e.g. the first invalid
    UTF-8 byte), with the line's preceding bytes decoded as an editor would show them."""
    offset = max(0, min(offset, len(raw)))
    line = 0
    line_start = 0
    for match in _LINE_BREAK_BYTES.finditer(raw, 0, offset):
        line += 1
        line_start = match.end()
    prefix = raw[line_start:offset]
    if line == 0 and prefix.startswith(b"\xef\xbb\xbf"):
        prefix = prefix[3:]  # editors hide the BOM
    if encoding == types.PositionEncodingKind.Utf8:
        column = len(prefix)  # the client counts the bytes it holds
    else:
        column = units(prefix.decode("utf-8", "replace"), encoding)
    return types.Range(
        start=types.Position(line=line, character=column),
        end=types.Position(line=line, character=column + 1),
    )
