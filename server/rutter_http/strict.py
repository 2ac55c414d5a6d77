"""Strict JSON request bodies: bounded (1 MiB, refused before the whole body is read),
well-formed UTF-8 JSON, one object nested at most 64 deep (checked before it is parsed), no
duplicate keys, no NaN or Infinity, numbers in range (64-bit integers, finite floats), no lone
surrogates.

What is refused is refused with a fixed phrase: the parser's own message quotes the input."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any, Final

from rutter_core.kernel.nesting import json_depth_exceeds, nesting_too_deep
from rutter_core.kernel.numbers import (
    OutOfRange,
    number_out_of_range,
    parse_float,
    parse_integer,
)
from rutter_http.errors import HttpError, body_too_large, invalid_json

MAX_BODY: Final = 1024 * 1024
"""Bytes a request body may have (docs/reference/surfaces.md)."""


class _Duplicate(Exception):
    pass


class _Constant(Exception):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise _Duplicate
        found[key] = value
    return found


def _no_constant(_: str) -> Any:
    raise _Constant


def check_length(content_length: str | None, limit: int = MAX_BODY) -> None:
    """Refuse a declared length over the limit before reading anything."""
    if content_length is None:
        return
    try:
        declared = int(content_length)
    except ValueError:
        raise HttpError("invalid_length", "the Content-Length header is not a number") from None
    if declared > limit:
        raise body_too_large(limit)


async def read_body(chunks: AsyncIterator[bytes], limit: int = MAX_BODY) -> bytes:
    """The body, counted as it streams: one byte over the limit stops the read."""
    body = bytearray()
    async for chunk in chunks:
        body += chunk
        if len(body) > limit:
            raise body_too_large(limit)
    return bytes(body)


def parse_object(body: bytes) -> dict[str, Any]:
    """The body as one JSON object, strictly."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise invalid_json("it is not UTF-8") from None
    if json_depth_exceeds(body):
        raise nesting_too_deep()
    try:
        value = json.loads(
            text,
            object_pairs_hook=_no_duplicates,
            parse_constant=_no_constant,
            parse_int=parse_integer,
            parse_float=parse_float,
        )
    except _Duplicate:
        raise invalid_json("an object has a duplicate key") from None
    except _Constant:
        raise invalid_json("NaN and Infinity are not JSON") from None
    except OutOfRange:
        raise number_out_of_range() from None
    except (json.JSONDecodeError, RecursionError):
        raise invalid_json("it does not parse") from None
    if not isinstance(value, dict):
        raise invalid_json("it must be one JSON object")
    if not _well_formed(value):
        raise invalid_json("a string holds a lone surrogate")
    return value


def well_formed_text(text: str) -> bool:
    """Encodable as UTF-8 (JSON's \\ud800 escapes can make strings that are not)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _well_formed(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if not well_formed_text(item):
                return False
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return True
