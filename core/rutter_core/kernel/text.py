"""Which characters text may hold.

Two rules, each scanned by one compiled pattern per set of allowed characters, and a way to
show what the second refuses:

- `first_forbidden_char`: control characters (Unicode category Cc: U+0000-U+001F and
  U+007F-U+009F) other than those a field allows, and bidirectional controls, which reorder
  what a person reads (Trojan Source). For names (a rules file's name).
- `require_readable`: the one rule for text a person reads before it takes effect (a pin and a
  pin proposal, a checkpoint's title and summary, a run's goal, a memory's title, content and
  references).
  What is shown must be what applies, so besides the above it refuses every character that is
  invisible or changes how the rest is shown (`INVISIBLE_RANGES`): Unicode's format characters
  (category Cf: zero-width space and joiners, word joiner, invisible operators, the byte order
  mark, soft hyphen, tag characters that spell hidden ASCII, ...), the other code points Unicode
  says to render invisibly (Default_Ignorable_Code_Point: Hangul fillers, the combining
  grapheme joiner, variation selectors, ...), and the line and paragraph separators
  (U+2028/U+2029), which break a line where a terminal shows none. Refused with one typed error,
  `control_character`, that names the field, the code point and its offset, never the text.
  One exception: the text and emoji presentation selectors (U+FE0E, U+FE0F) right after a
  visible character, as in `⚠️`; elsewhere (first, after white space or another selector) they
  carry nothing visible and are refused. Zero-width joiners are refused too: an emoji sequence
  written with them (`👩‍💻`) must be written as its parts.
- `visible`: the same characters written as `<U+XXXX>`, for output to people of text stored
  before the rule (or never under it), so nothing is printed raw.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Final

from rutter_core.kernel.errors import Hint, RejectedError

BIDI_CONTROLS: Final = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
_CONTROL_CODES: Final = (*range(0x20), *range(0x7F, 0xA0))

PRESENTATION_SELECTORS: Final = "\ufe0e\ufe0f"
"""Text and emoji presentation (VS15, VS16): kept right after a visible character."""

# (first, last) code points, inclusive. Format characters (Cf) as of Unicode 15, then the other
# Default_Ignorable_Code_Point ranges (DerivedCoreProperties.txt), then the separators.
INVISIBLE_RANGES: Final[tuple[tuple[int, int], ...]] = (
    # Cf
    (0x00AD, 0x00AD), (0x0600, 0x0605), (0x061C, 0x061C), (0x06DD, 0x06DD),
    (0x070F, 0x070F), (0x0890, 0x0891), (0x08E2, 0x08E2), (0x180E, 0x180E),
    (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x2064), (0x2066, 0x206F),
    (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0x110BD, 0x110BD), (0x110CD, 0x110CD),
    (0x13430, 0x1343F), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
    # Default_Ignorable_Code_Point, not Cf
    (0x034F, 0x034F), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180D),
    (0x180F, 0x180F), (0x2065, 0x2065), (0x3164, 0x3164), (0xFE00, 0xFE0F),
    (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0xE0000, 0xE0000), (0xE0002, 0xE001F),
    (0xE0080, 0xE0FFF),
    # Zl, Zp
    (0x2028, 0x2029),
)  # fmt: skip


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


def _range_class(first: int, last: int) -> str:
    return (
        re.escape(chr(first))
        if first == last
        else f"{re.escape(chr(first))}-{re.escape(chr(last))}"
    )


@functools.cache
def _unreadable(allowed: str) -> re.Pattern[str]:
    controls = "".join(re.escape(chr(code)) for code in _CONTROL_CODES if chr(code) not in allowed)
    invisible = "".join(_range_class(first, last) for first, last in INVISIBLE_RANGES)
    selectors = re.escape(PRESENTATION_SELECTORS[0]) + re.escape(PRESENTATION_SELECTORS[1])
    # Any refused character but a selector; or a selector at the start, or after white space,
    # another selector or a refused character.
    return re.compile(
        f"(?![{selectors}])[{controls}{invisible}]|(?<![^\\s{controls}{invisible}])[{selectors}]"
    )


def first_unreadable_char(text: str, *, allowed: str) -> tuple[int, str] | None:
    """The offset and character of the first character of `text` that `require_readable`
    refuses (`allowed`: the control characters the field allows, e.g. newline and tab)."""
    found = _unreadable(allowed).search(text)
    return None if found is None else (found.start(), found.group())


def describe(char: str) -> str:
    """`U+202E (RIGHT-TO-LEFT OVERRIDE)`: a refused character, named for a message."""
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X}" + (f" ({name})" if name else "")


def _kind(char: str) -> str:
    if char in BIDI_CONTROLS:
        return "the bidirectional control"
    if unicodedata.category(char) == "Cc":
        return "the control character"
    return "the invisible character"


def require_readable(field: str, text: str, *, allowed: str, hint: Hint | None = None) -> None:
    """Refuse `text` (of `field`) if it holds a character a person cannot see or that changes
    what they see (see the module docstring): `control_character`, naming the field, the code
    point and its offset, never the text (`hint`: what to do instead, when there is more than
    removing it)."""
    found = first_unreadable_char(text, allowed=allowed)
    if found is None:
        return
    offset, char = found
    fine = " (newlines and tabs are fine)" if "\n" in allowed else ""
    raise RejectedError(
        "control_character",
        f"the {field} contains {_kind(char)} {describe(char)} at offset {offset}; text a person "
        "reads before it takes effect holds no control, bidirectional or invisible characters"
        f"{fine}, so what is shown is what applies: remove it",
        details={"field": field, "codepoint": f"U+{ord(char):04X}", "offset": offset},
        hint=hint,
    )


def visible(text: str, *, keep: str = "\n\t") -> str:
    """`text` with every character `require_readable` refuses (but `keep`) written as
    `<U+XXXX>`: for showing stored text to people, never raw."""
    return _unreadable(keep).sub(lambda found: f"<U+{ord(found.group()):04X}>", text)
