"""How deep client JSON may nest: the one bound every parser of client input applies (the
language server, MCP, HTTP bodies, transcript lines), checked on the raw text before it is
parsed, so no parser recurses into what an attacker nests (Python's own parser dies of
`RecursionError` near 1,000 levels; others drop the message without an answer).

Depth counts objects and arrays: `1` and `"a"` are 0 deep, `{}` and `[]` 1, `{"a": [1]}` 2.
"""

from __future__ import annotations

import re
from itertools import accumulate
from typing import Any, Final

from rutter_core.kernel.errors import UsageError

MAX_JSON_DEPTH: Final = 64
"""Objects and arrays nested in one client message, the message itself included. Nothing
rutter takes is deeper than a few levels; a JSON-RPC message wraps its arguments in three."""

NESTING_TOO_DEEP: Final = "nesting_too_deep"
"""The error code of a message over the bound, on every surface."""

_KEPT: Final = bytes(set(range(256)) - set(b'"[]{}'))
"""Everything but quotes and brackets, deleted before the scan."""
_STRING: Final = re.compile(rb'"[^"]*(?:"|\Z)')
"""What is left of a string holding brackets (or of an unterminated one, up to the end)."""
_STEP: Final = [0] * 256
_STEP[ord("[")] = _STEP[ord("{")] = 1
_STEP[ord("]")] = _STEP[ord("}")] = -1


def json_depth_exceeds(raw: bytes | str, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether the JSON text `raw` nests objects and arrays deeper than `limit`, brackets
    inside strings not counted. Linear, without recursion and mostly in C on any input
    (malformed too: its parser refuses that afterwards)."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if data.count(b"[") + data.count(b"{") <= limit:
        return False
    # Escapes first (pairs of backslashes, then escaped quotes: a run of backslashes pairs up
    # from its left, as JSON reads it), so every quote left opens or closes a string.
    if b"\\" in data:
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    # Only quotes and brackets matter. Two adjacent quotes are an empty string or the end and
    # start of two strings with no bracket between them: dropping them keeps every bracket
    # inside or outside the strings it was in or out of, and leaves quotes only around
    # strings that hold brackets (rare: those few are cut by the pattern).
    kept = data.translate(None, _KEPT).replace(b'""', b"")
    if b'"' in kept:
        kept = _STRING.sub(b"", kept)
    return max(accumulate(map(_STEP.__getitem__, kept)), default=0) > limit


def value_depth_exceeds(value: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """The same rule for JSON already parsed (dicts and lists), iteratively."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        if depth + 1 > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def nesting_too_deep(limit: int = MAX_JSON_DEPTH) -> UsageError:
    """The typed refusal: it names the rule and its bound, never what was sent."""
    return UsageError(
        NESTING_TOO_DEEP,
        f"the message nests objects and arrays more than {limit} levels deep",
        details={"max_depth": limit},
    )
