"""Which characters operator text may hold: the one rule for goals, memory and other fields.

Control characters (Unicode category Cc) other than those a field allows, and bidirectional
formatting controls, which reorder what a person reads (Trojan Source), are refused."""

from __future__ import annotations

import unicodedata
from typing import Final

BIDI_CONTROLS: Final = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)


def first_forbidden_char(text: str, *, allowed: str) -> tuple[int, str] | None:
    """The offset and character of the first control or bidirectional control in `text` that
    `allowed` does not list, or None."""
    for offset, char in enumerate(text):
        if char in allowed:
            continue
        if char in BIDI_CONTROLS or unicodedata.category(char) == "Cc":
            return offset, char
    return None
