"""Glob patterns of instruction front matter (`paths:`, `applyTo:`, `globs:`), as agents match
them against a project-relative path with `/` separators.

`*` and `?` stay inside one path segment, `**` spans segments (`**/` also matches none),
`[...]` is a character class and `{a,b}` alternatives. A leading `./` or `/` is dropped: every
pattern is relative to the directory it is anchored at. With `star_matches_all`, `*` and `**`
alone match every file (Copilot's documented `applyTo` meaning).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

MAX_PATTERN_CHARS: Final = 1024
MAX_PATTERNS: Final = 64


@dataclass(frozen=True, slots=True)
class Glob:
    pattern: str
    regex: re.Pattern[str] | None
    """None: the pattern cannot be read (unbalanced braces or brackets); it matches nothing."""

    def matches(self, rel: str) -> bool:
        return self.regex is not None and self.regex.fullmatch(rel) is not None


def _translate(pattern: str) -> str | None:
    out: list[str] = []
    i = 0
    depth = 0
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                j = i + 2
                at_start = i == 0 or pattern[i - 1] == "/"
                if at_start and pattern.startswith("/", j):
                    out.append("(?:[^/]*/)*")
                    i = j + 1
                    continue
                out.append(".*")
                i = j
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 2)
            if end < 0:
                return None
            body = pattern[i + 1 : end]
            negate = body.startswith(("!", "^"))
            if negate:
                body = body[1:]
            out.append("[" + ("^" if negate else "") + body.replace("\\", "\\\\") + "]")
            i = end
        elif c == "{":
            depth += 1
            out.append("(?:")
        elif c == "}" and depth:
            depth -= 1
            out.append(")")
        elif c == "," and depth:
            out.append("|")
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    if depth:
        return None
    return "".join(out)


@lru_cache(maxsize=1024)
def compile_glob(pattern: str, *, star_matches_all: bool = False) -> Glob:
    text = pattern.strip()
    while text.startswith("./"):
        text = text[2:]
    text = text.lstrip("/")
    if not text or len(text) > MAX_PATTERN_CHARS:
        return Glob(pattern, None)
    if star_matches_all and text in ("*", "**"):
        return Glob(pattern, re.compile(r".*", re.DOTALL))
    body = _translate(text)
    if body is None:
        return Glob(pattern, None)
    if text.endswith("/"):
        body += ".*"
    try:
        return Glob(pattern, re.compile(body, re.DOTALL))
    except re.error:
        return Glob(pattern, None)


def split_globs(value: object) -> tuple[str, ...]:
    """The patterns of a front matter value: a list, or one string of comma-separated ones
    (commas inside `{...}` belong to the pattern)."""
    items: list[str] = []
    values = value if isinstance(value, list) else [value]
    for item in values:
        if not isinstance(item, str):
            continue
        depth = 0
        start = 0
        for index, char in enumerate(item):
            if char == "{":
                depth += 1
            elif char == "}" and depth:
                depth -= 1
            elif char == "," and not depth:
                items.append(item[start:index])
                start = index + 1
        items.append(item[start:])
    cleaned = [item.strip().strip("\"'").strip() for item in items]
    return tuple(item for item in cleaned if item)[:MAX_PATTERNS]
