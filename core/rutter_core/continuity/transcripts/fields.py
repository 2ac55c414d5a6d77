"""Small pure helpers the agents' parsers share: timestamps, IDs, and rendering a tool's input
or output as text."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any, Final

_UTC: Final = re.compile(
    r"([1-9]\d{3}-(?:0[1-9]|1[0-2])-(?:0[1-9]|1\d|2[0-8])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d)"
    r"(?:\.(\d{1,9}))?Z",
    re.ASCII,
)


def timestamp(value: object) -> str | None:
    """An ISO 8601 time with a zone (`2025-06-26T10:00:00.123Z`) as RFC 3339 UTC to the second;
    None for anything else (a time without a zone says nothing certain)."""
    exact = instant(value)
    return f"{exact[:19]}Z" if exact else None


def instant(value: object) -> str:
    """An ISO 8601 time with a zone as RFC 3339 UTC to the microsecond
    (`2025-06-26T10:00:00.123000Z`), which orders as text; '' when it is not one."""
    if not isinstance(value, str) or not 10 <= len(value) <= 64:
        return ""
    plain = _UTC.fullmatch(value)  # the agents write UTC with `Z` (days 29-31: parsed below)
    if plain is not None:
        return f"{plain[1]}.{(plain[2] or '')[:6]:0<6}Z"
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00", 1))
    except ValueError:
        return ""
    if moment.tzinfo is None:
        return ""
    try:
        return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    except (OverflowError, ValueError):
        return ""


def identifier(value: object) -> str | None:
    """A non-empty string ID as given; None when missing or not text."""
    if isinstance(value, str) and value:
        return value
    return None


def as_json_text(value: object) -> str:
    """A tool's structured input as JSON text (UTF-8 kept, key order kept)."""
    try:
        return json.dumps(value, ensure_ascii=False, indent=None)
    except (TypeError, ValueError):
        return ""


def joined(parts: list[str]) -> str:
    return "\n".join(part for part in parts if part)


def is_object(value: Any) -> bool:
    return isinstance(value, dict)


__all__ = ["as_json_text", "identifier", "instant", "is_object", "joined", "timestamp"]
