"""`@path` imports in an instruction file's text, with code spans and fenced code skipped.

An import is `@` at the start of a line or after whitespace, followed by a path (no spaces;
`\\ ` escapes one). `@` inside backticks or a fenced code block is text. E-mail addresses
(`a@b.c`) are not imports: `@` must follow whitespace or start the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

MAX_IMPORTS_PER_FILE: Final = 256
_IMPORT = re.compile(r"(?:(?<=\s)|^)@((?:[^\s\\`]|\\ )+)", re.MULTILINE)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_TRAILING = ".,;:!?)]}>\"'"


@dataclass(frozen=True, slots=True)
class ImportRef:
    path: str
    """As written (escapes removed, trailing punctuation dropped)."""
    line: int
    """0-based line."""
    column: int
    """0-based character offset of the `@` in its line."""


def _outside_code_spans(line: str) -> list[tuple[int, int]]:
    """The character ranges of `line` outside inline code spans."""
    ranges: list[tuple[int, int]] = []
    position = 0
    while True:
        start = line.find("`", position)
        if start < 0:
            ranges.append((position, len(line)))
            return ranges
        run = len(line) - len(line[start:].lstrip("`"))
        ticks = line[start : start + run]
        end = line.find(ticks, start + run)
        if end < 0:
            ranges.append((position, len(line)))
            return ranges
        ranges.append((position, start))
        position = end + run


def find_imports(text: str, *, skip_code: bool = True) -> list[ImportRef]:
    found: list[ImportRef] = []
    fence: str | None = None
    for number, line in enumerate(text.split("\n")):
        marker = _FENCE.match(line)
        if skip_code and fence is not None:
            if marker and marker.group(1)[0] == fence[0] and len(marker.group(1)) >= len(fence):
                fence = None
            continue
        if skip_code and marker:
            fence = marker.group(1)
            continue
        spans = _outside_code_spans(line) if skip_code else [(0, len(line))]
        for start, end in spans:
            for match in _IMPORT.finditer(line, start, end):
                raw = match.group(1).replace("\\ ", " ").rstrip(_TRAILING)
                if raw:
                    found.append(ImportRef(raw, number, match.start()))
                    if len(found) >= MAX_IMPORTS_PER_FILE:
                        return found
    return found
