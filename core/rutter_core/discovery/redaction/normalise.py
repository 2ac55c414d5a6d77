# ruff: noqa: RUF001, RUF002, RUF003 - this module is about look-alike characters
"""A matching copy of the text: look-alike characters made ASCII, invisible ones removed.

A secret can be disguised (or mangled by an editor or a chat client) without changing what it
grants: a zero-width space inside a token, a Cyrillic `о` for an `o`, a fullwidth colon or a
no-break space after `password`. The scan runs on the text as written and, when it holds such
characters, once more on this copy; a finding in the copy is mapped back to the span of the
original text it came from, so exactly what was written is replaced, invisible characters
included.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import Final

_INVISIBLE: Final = "\u00ad\u180e\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff"
_SPACES: Final = (
    "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u202f\u205f\u3000"
)
_DASHES: Final = "\u2010\u2011\u2012\u2013\u2212\ufe63"
# Unicode's confusables for ASCII letters that matter in tokens and names (Cyrillic, Greek).
_HOMOGLYPHS: Final = {
    "а": "a", "в": "B", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "і": "i",
    "ј": "j", "ѕ": "s", "ԁ": "d", "ԛ": "q", "ԝ": "w", "һ": "h", "ӏ": "l",
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C",
    "Т": "T", "Х": "X", "І": "I", "Ј": "J", "Ѕ": "S", "У": "Y", "Ԛ": "Q", "Ԝ": "W",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N",
    "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X", "ο": "o", "ν": "v", "ι": "i", "κ": "k",
}  # fmt: skip


def _table() -> dict[str, str]:
    table = dict.fromkeys(_INVISIBLE, "")
    table.update(dict.fromkeys(_SPACES, " "))
    table.update(dict.fromkeys(_DASHES, "-"))
    table.update(_HOMOGLYPHS)
    # Fullwidth ASCII (`ｇｈｐ＿`, `＝`); a fullwidth colon reads as `: ` (CJK text puts no space
    # after it, where ASCII YAML would).
    table.update({chr(code): chr(code - 0xFEE0) for code in range(0xFF01, 0xFF5F)})
    table["\uff1a"] = ": "
    return table


_TABLE: Final = _table()
_TOKENISH: Final = frozenset(
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_-.=@/+"
)
# Fullwidth forms that can be part of a token, a URL or a separator (not CJK punctuation such
# as the fullwidth comma or parentheses, which sit next to code spans in Chinese prose).
_FULLWIDTH_TOKEN: Final = "".join(
    chr(code) for code in range(0xFF01, 0xFF5F) if chr(code - 0xFEE0) in _TOKENISH
)
_LOOKALIKES: Final = re.escape("".join(_HOMOGLYPHS) + _SPACES + _DASHES + _FULLWIDTH_TOKEN)
# What changes, in context: invisible characters always; a look-alike, odd space or dash only
# next to ASCII or another look-alike (a Cyrillic word or CJK punctuation between CJK words is
# ordinary text, and keeps such documents to one scan); a fullwidth colon only after a name.
# One character class first (sre then skips to candidates in C), the context after it.
_CHANGING: Final = re.compile(
    f"[{re.escape(_INVISIBLE)}{_LOOKALIKES}\uff1a]"
    f"(?:(?<=[{re.escape(_INVISIBLE)}])"
    f"|(?<=[!-~{_LOOKALIKES}][{_LOOKALIKES}])|(?<=[{_LOOKALIKES}])(?=[!-~{_LOOKALIKES}])"
    "|(?<=[A-Za-z0-9_\"'`\\]]\uff1a))"
)


@dataclass(frozen=True, slots=True)
class Normalised:
    text: str
    # Segments of the copy: where each starts in the copy and in the original, and whether it
    # is one replaced character (every position maps to it) or copied text (offsets shift).
    starts: tuple[int, ...]
    origins: tuple[int, ...]
    replaced: tuple[bool, ...]

    def original(self, start: int, end: int) -> tuple[int, int]:
        """The original span of the copy's `text[start:end]` (end > start)."""
        return self._at(start), self._at(end - 1) + 1

    def _at(self, position: int) -> int:
        segment = bisect_right(self.starts, position) - 1
        if self.replaced[segment]:
            return self.origins[segment]
        return self.origins[segment] + position - self.starts[segment]


def normalise(text: str) -> Normalised | None:
    """The matching copy, or None when the text has nothing to normalise."""
    if text.isascii():
        return None
    pieces: list[str] = []
    starts, origins, replaced = [0], [0], [False]
    cursor = length = 0
    for found in _CHANGING.finditer(text):
        at = found.start()
        pieces.append(text[cursor:at])
        length += at - cursor
        replacement = _TABLE[text[at]]
        starts.append(length)
        origins.append(at)
        replaced.append(True)
        pieces.append(replacement)
        length += len(replacement)
        cursor = at + 1
        starts.append(length)
        origins.append(cursor)
        replaced.append(False)
    if cursor == 0:
        return None
    pieces.append(text[cursor:])
    return Normalised("".join(pieces), tuple(starts), tuple(origins), tuple(replaced))
