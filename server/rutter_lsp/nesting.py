"""How deep a client's message may nest, checked on its raw bytes before it is decoded.

Python's JSON parser recurses once per object or array: a 2 KB body nested 1,000 deep kills
the process with `RecursionError`, and a few hundred levels are enough to overflow whatever
walks the decoded params afterwards (pygls' converter, pydantic). So the message loop
(`rutter_lsp.transport`) measures the depth first, with the one rule every surface applies
(`rutter_core.kernel.nesting`), and refuses a message over `MAX_JSON_DEPTH` without decoding
it. To answer such a request with its own id, `outline` decodes the top level only.

Depth counts objects and arrays, the message itself included: `{}` is 1 deep, a request whose
params are `{"a": [1]}` is 3 deep.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from rutter_core.kernel.nesting import MAX_JSON_DEPTH, json_depth_exceeds

__all__ = ["MAX_JSON_DEPTH", "TOO_DEEP", "json_depth_exceeds", "outline"]

TOO_DEEP: Final = "\x00too deep"
"""What `outline` puts in place of a top-level member that nests too deep."""

_TOKEN: Final = re.compile(rb'"(?:[^"\\]++|\\.)*+"|[\[\]{}]', re.DOTALL)


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
