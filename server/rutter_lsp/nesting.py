"""How deep a client's message may nest, checked on its raw bytes before it is decoded.

Python's JSON parser recurses once per object or array: a 2 KB body nested 1,000 deep kills
the process with `RecursionError`, and a few hundred levels are enough to overflow whatever
walks the decoded params afterwards (pygls' converter, pydantic). So the message loop
(`rutter_lsp.transport`) measures the depth first, without recursion and mostly in C, and
refuses a message over `MAX_JSON_DEPTH` without decoding it. To answer such a request with
its own id, `outline` decodes the top level only.

Depth counts objects and arrays, the message itself included: `{}` is 1 deep, a request whose
params are `{"a": [1]}` is 3 deep.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any, Final

MAX_JSON_DEPTH: Final = 64
"""Objects and arrays nested in one message. Nothing the language server takes nests more
than a dozen levels (the client's capabilities, the deepest, about eight)."""

TOO_DEEP: Final = "\x00too deep"
"""What `outline` puts in place of a top-level member that nests too deep."""

_QUOTES_AND_BRACKETS: Final = bytes(set(range(256)) - set(b'"[]{}'))
"""Everything else, deleted before the brackets are counted."""
_STRING: Final = re.compile(rb'"[^"]*(?:"|\Z)')
"""What is left of a string that holds brackets (of an unterminated one: up to the end)."""
_STEP: Final = [0] * 256
_STEP[ord("[")] = _STEP[ord("{")] = 1
_STEP[ord("]")] = _STEP[ord("}")] = -1
_TOKEN: Final = re.compile(rb'"(?:[^"\\]++|\\.)*+"|[\[\]{}]', re.DOTALL)


def json_depth_exceeds(body: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether `body` nests objects and arrays deeper than `limit`, brackets inside strings not
    counted. Linear and without recursion on any input; malformed input is measured as it
    would be parsed (every opening bracket one level deeper), and refused by the parser after."""
    if body.count(b"[") + body.count(b"{") <= limit:
        return False
    # Escapes first: pairs of backslashes, then escaped quotes (a run of backslashes pairs up
    # from its left, as JSON reads it), so that every quote left opens or closes a string.
    data = body.replace(b"\\\\", b"").replace(b'\\"', b"")
    # Then only quotes and brackets matter. Two adjacent quotes are an empty string, or the end
    # and the start of two strings with no bracket between them: dropping them keeps every
    # bracket inside or outside the string it was in, and leaves quotes only around strings
    # that hold brackets (few), which the pattern cuts out.
    kept = data.translate(None, _QUOTES_AND_BRACKETS).replace(b'""', b"")
    if b'"' in kept:
        kept = _STRING.sub(b"", kept)
    return max(accumulate(map(_STEP.__getitem__, kept)), default=0) > limit


def outline(body: bytes, limit: int = MAX_JSON_DEPTH) -> Any:
    """The top level of the JSON `body`, decoded without descending into it: each object or
    array below the top level becomes an empty one, or `TOO_DEEP` where it nests past `limit`.
    None when that outline is not JSON. For a message refused for its depth: its id and method
    can then be read, and which member was too deep."""
    parts: list[bytes] = []
    copied = 0
    depth = deepest = 0
    start = 0
    for match in _TOKEN.finditer(body):
        token = match.group()
        if token in (b"[", b"{"):
            depth += 1
            if depth == 2:
                start, deepest = match.start(), 2
            deepest = max(deepest, depth)
        elif token in (b"]", b"}"):
            if depth == 2:
                parts.append(body[copied:start])
                if deepest > limit:
                    parts.append(json.dumps(TOO_DEEP).encode())
                else:
                    parts.append(b"[]" if body[start : start + 1] == b"[" else b"{}")
                copied = match.end()
            depth -= 1
    if depth != 0:
        return None  # unbalanced: not JSON, and nothing can be read from it
    parts.append(body[copied:])
    try:
        return json.loads(b"".join(parts))
    except ValueError:
        return None
