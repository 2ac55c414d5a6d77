"""Token estimates: one documented estimator behind a small interface.

No tokenizer package ships with rutter: the ones that count exactly for a model family either
download their vocabulary at run time (not possible offline, and a budget must not depend on the
network) or hold a few families' vocabularies only, while an agent may use any model.
`BytesAndScript` is deterministic and leans high, so a budget it fills is rarely overrun by a
real count:

- ASCII: the larger of one token per 4 characters (bytes) and the number of pieces a BPE
  tokenizer splits ASCII into at least (each run of letters, each group of up to 3 digits, each
  punctuation character, each line break);
- CJK (Han ideographs, kana, Hangul syllables and jamo, CJK symbols and punctuation, fullwidth
  forms): one token per character;
- any other non-ASCII character: one token when its UTF-8 form has two bytes (Latin with
  accents, Greek, Cyrillic, Hebrew, Arabic), two when it has three or four (other scripts,
  symbols, emoji).

docs/agents.md states the rule for people, with its measured error against four real
tokenizers (`benchmarks/estimator_error.py`); `name` is recorded with every assembly so an audit
says which estimator produced its numbers.
"""

from __future__ import annotations

import re
from typing import Final, Protocol

_NON_ASCII: Final = re.compile(r"[^\x00-\x7f]+")
_ASCII_PIECE: Final = re.compile(r"[A-Za-z]+|[0-9]{1,3}|[!-/:-@\[-`{-~]|\n")
_CJK: Final = re.compile(
    "[\u1100-\u11ff\u2e80-\u2fdf\u3000-\u303f\u3040-\u30ff\u3100-\u31ff\u3200-\u9fff"
    "\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef"
    "\U00020000-\U0003134f]"
)


class TokenEstimator(Protocol):
    """Estimates how many tokens a text costs a model. `name` identifies the rule (and its
    version) in every stored assembly."""

    @property
    def name(self) -> str: ...

    def estimate(self, text: str) -> int: ...


class BytesAndScript:
    """The estimator every assembly uses (see the module docstring for the rule)."""

    @property
    def name(self) -> str:
        return "bytes_and_script.v1"

    def estimate(self, text: str) -> int:
        pieces = len(_ASCII_PIECE.findall(text))
        if text.isascii():
            return max((len(text) + 3) // 4, pieces)
        ascii_chars = len(text)
        tokens = 0
        for run in _NON_ASCII.findall(text):
            ascii_chars -= len(run)
            tokens += len(_CJK.findall(run))
            for char in _CJK.sub("", run):
                tokens += 1 if ord(char) < 0x800 else 2
        return tokens + max((ascii_chars + 3) // 4, pieces)


ESTIMATOR: Final[TokenEstimator] = BytesAndScript()
"""The one estimator of this version of rutter."""

__all__ = ["ESTIMATOR", "BytesAndScript", "TokenEstimator"]
