"""The one fingerprint function: SHA-256 of RFC 8785 (JCS) canonical JSON."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

import rfc8785

# Integers JCS prints exactly as Python does (IEEE-754 doubles hold them exactly).
_MAX_SAFE_INTEGER = 2**53 - 1
_UTF16_ORDER_BREAK = "\ue000"  # keys below this sort the same by code point and by UTF-16 unit
_FAST_ENCODER = json.JSONEncoder(
    ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False
)


def _fast_path_applies(value: Any) -> bool:
    """True when Python's JSON encoder yields exactly the JCS bytes for `value`.

    That holds for dicts with string keys (sorted identically), strings, bools, None and safe
    integers: Python escapes strings exactly as ECMAScript's JSON.stringify does. Floats need
    ECMAScript number formatting and go to the reference implementation.
    """
    pending = [value]
    while pending:
        item = pending.pop()
        kind = type(item)
        if kind is str or kind is bool or item is None:
            continue
        if kind is dict:
            for key in item:
                if type(key) is not str or not (key.isascii() or max(key) < _UTF16_ORDER_BREAK):
                    return False
            pending.extend(item.values())
        elif kind is list or kind is tuple:
            pending.extend(item)
        elif kind is int:
            if not -_MAX_SAFE_INTEGER <= item <= _MAX_SAFE_INTEGER:
                return False
        else:
            return False
    return True


def canonical_json(value: Any, *, plain: bool = False) -> bytes:
    """RFC 8785 canonical bytes of a JSON-compatible value.

    `plain=True` is for values built from validated models that hold only strings, bools,
    None and small integers under ASCII keys: it skips the check of that domain.
    """
    if plain or _fast_path_applies(value):
        try:
            return _FAST_ENCODER.encode(value).encode("utf-8")
        except UnicodeEncodeError:
            pass  # a lone surrogate: let the reference implementation reject it
    return bytes(rfc8785.dumps(value))


def canonical_text(value: Any) -> str:
    """`canonical_json` as text: the stored form of a snapshot (a run's pinned instructions, a
    checkpoint's continuity), a function of the value alone."""
    return canonical_json(value).decode("utf-8")


def fingerprint(
    value: Mapping[str, Any], *, exclude: frozenset[str] = frozenset(), plain: bool = False
) -> str:
    """Lowercase hex SHA-256 of the JCS form of `value` without its top-level `exclude` keys.

    `plain` as in `canonical_json`.
    """
    kept = {key: item for key, item in value.items() if key not in exclude}
    return hashlib.sha256(canonical_json(kept, plain=plain)).hexdigest()


def text_sha256(text: str) -> str:
    """Lowercase hex SHA-256 of a text's UTF-8 bytes: the digest of a delivered text (what an
    instruction source's, memory's or assembly entry's `sha256` names), not a fingerprint of a
    JSON object."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
