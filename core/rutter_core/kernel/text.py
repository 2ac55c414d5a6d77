"""Which characters operator text may hold: the one rule for goals, memory and other fields.

Control characters (Unicode category Cc: U+0000-U+001F and U+007F-U+009F) other than those a
field allows, and bidirectional formatting controls, which reorder what a person reads (Trojan
Source), are refused."""

from __future__ import annotations

import functools
import re
from typing import Final

BIDI_CONTROLS: Final = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
_CONTROL_CODES: Final = (*range(0x20), *range(0x7F, 0xA0))


@functools.cache
def _forbidden(allowed: str) -> re.Pattern[str]:
    """One character class of everything refused but `allowed`: a scan in C, not a loop per
    character in Python."""
    chars = [chr(code) for code in _CONTROL_CODES if chr(code) not in allowed]
    chars += sorted(char for char in BIDI_CONTROLS if char not in allowed)
    return re.compile("[" + "".join(re.escape(char) for char in chars) + "]")


def first_forbidden_char(text: str, *, allowed: str) -> tuple[int, str] | None:
    """The offset and character of the first control or bidirectional control in `text` that
    `allowed` does not list, or None."""
    found = _forbidden(allowed).search(text)
    return None if found is None else (found.start(), found.group())
