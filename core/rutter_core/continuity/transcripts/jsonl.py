"""JSON Lines, read incrementally and strictly: complete lines numbered from 1, each decoded as
UTF-8 and parsed as one JSON object nested at most 64 deep (the bound of all client JSON), or
named as skipped with a reason code.

Pure functions over bytes: the same splitter serves a one-shot import (the whole file fed, then
`finish`) and `--watch` (appended bytes fed as they arrive; a last line without its newline waits
in the buffer until the rest is written). A line longer than `max_line_bytes` is never held:
its bytes are dropped as they arrive and the line is reported `line_too_long` once its newline
comes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

from rutter_core.continuity.transcripts.records import SkipReason
from rutter_core.kernel.nesting import json_depth_exceeds

MAX_LINE_BYTES: Final = 32 * 1024 * 1024
"""A transcript line, in bytes: Claude Code and Codex inline images as base64, so lines of a few
MiB are ordinary; one over 32 MiB is skipped, not held in memory."""


@dataclass(frozen=True, slots=True)
class RawLine:
    number: int
    data: bytes | None
    """The line without its newline; None when it was over the bound (dropped)."""


class LineSplitter:
    """Cuts fed bytes into numbered complete lines (LF-terminated; a CR before it is kept and
    parsed as JSON white space)."""

    def __init__(self, max_line_bytes: int = MAX_LINE_BYTES) -> None:
        self._max = max_line_bytes
        self._buffer = bytearray()
        self._overlong = False
        self._number = 0

    @property
    def lines_done(self) -> int:
        """How many complete lines were cut so far."""
        return self._number

    def feed(self, chunk: bytes) -> list[RawLine]:
        lines: list[RawLine] = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                self._hold(chunk[start:])
                return lines
            self._hold(chunk[start:end])
            self._number += 1
            lines.append(RawLine(self._number, None if self._overlong else bytes(self._buffer)))
            self._buffer.clear()
            self._overlong = False
            start = end + 1

    def pending_line(self) -> int | None:
        """The number of the partial last line, when bytes after the last newline wait."""
        if self._buffer or self._overlong:
            return self._number + 1
        return None

    def _hold(self, part: bytes) -> None:
        if self._overlong:
            return
        if len(self._buffer) + len(part) > self._max:
            self._buffer.clear()
            self._overlong = True
            return
        self._buffer += part


def decode_line(data: bytes | None) -> dict[str, Any] | SkipReason | None:
    """The line's JSON object; None for a blank line (ignored); else why it is skipped."""
    if data is None:
        return "line_too_long"
    if not data.strip():
        return None
    if b"\x00" in data:
        return "nul_byte"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "invalid_utf8"
    if json_depth_exceeds(data):  # before the parser, which recurses into what it nests
        return "nesting_too_deep"
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return "invalid_json"
    if not isinstance(value, dict):
        return "not_an_object"
    return value


__all__ = ["MAX_LINE_BYTES", "LineSplitter", "RawLine", "decode_line"]
