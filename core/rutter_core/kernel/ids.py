"""Prefixed ULIDs (docs/reference/identifiers-and-fingerprints.md)."""

from __future__ import annotations

import re
from typing import Literal

from ulid import ULID

IdPrefix = Literal[
    "msn",
    "run",
    "ses",
    "thr",
    "mem",
    "cand",
    "node",
    "msg",
    "note",
    "pin",
    "prop",
    "cmp",
    "asm",
    "tok",
    "dlv",
]

WORKSPACE_ID_PATTERN = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")


def new_id(prefix: IdPrefix) -> str:
    return f"{prefix}_{ULID()}"


def is_valid_workspace_id(value: str) -> bool:
    return WORKSPACE_ID_PATTERN.fullmatch(value) is not None


def may_name_a_record(value: str) -> bool:
    """Whether `value` could be a stored record's ID at all. No ID holds a NUL: every text a
    store writes is refused one first, and some engines cannot even compare text holding one
    (PostgreSQL refuses the statement). A lookup by such a value finds nothing, on every
    engine alike, without asking the store."""
    return "\x00" not in value


def recorded_at(prefixed_id: str) -> str | None:
    """When a prefixed ULID was made (its first 48 bits: milliseconds since the epoch), RFC
    3339 UTC to the second; None when `prefixed_id` is not one."""
    from rutter_core.kernel.clock import rfc3339

    _, sep, rest = prefixed_id.partition("_")
    if not sep:
        return None
    try:
        return rfc3339(ULID.from_str(rest).datetime)
    except ValueError:
        return None
