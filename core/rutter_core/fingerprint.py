"""The one fingerprint function: SHA-256 of RFC 8785 (JCS) canonical JSON."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import rfc8785


def canonical_json(value: Any) -> bytes:
    """RFC 8785 canonical bytes of a JSON-compatible value."""
    return bytes(rfc8785.dumps(value))


def fingerprint(value: Mapping[str, Any], *, exclude: frozenset[str] = frozenset()) -> str:
    """Lowercase hex SHA-256 of the JCS form of `value` without its top-level `exclude` keys."""
    kept = {key: item for key, item in value.items() if key not in exclude}
    return hashlib.sha256(canonical_json(kept)).hexdigest()


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
