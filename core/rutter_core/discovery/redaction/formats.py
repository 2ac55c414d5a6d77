"""Rules for secrets with a recognizable format: token prefixes, private-key blocks, URL
passwords (the building blocks every rule is made of, too)."""

from __future__ import annotations

import base64
import binascii
import json
import re
import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from rutter_core.discovery.redaction.literals import (
    MASK,
    PLACEHOLDER_WORDS,
    is_template,
    normalized,
)
from rutter_core.discovery.redaction.upstream import Source

# -- building blocks -------------------------------------------------------------------------

_Span = tuple[int, int]
ALNUM: Final = string.ascii_letters + string.digits
WORD: Final = ALNUM + "_"
B64URL: Final = ALNUM + "_-"
TOKEN_CHARS: Final = frozenset(B64URL + ".")  # what boundaries and names are made of


@dataclass(frozen=True, slots=True)
class Rule:
    kind: str
    match: Callable[[str, int], _Span | None]
    context: bool = False  # context rules (assignments, URL passwords) yield to formats
    rank: int = 1  # tie-break between equally long overlapping spans


def regex_rule(
    kind: str,
    pattern: Source | str,
    *,
    lead: str = "",
    trail: str = "",
    check: Callable[[str], bool] | None = None,
    rank: int = 1,
    glue: bool = False,
) -> Rule:
    """A rule from one regex tried at the anchor; `lead`/`trail` are characters that must not
    touch the match (a token inside a longer word is not that token). With `glue` (prefixes
    too distinctive for prose: `ghp_`, `sk-ant-`, `shpat_`) nothing may not touch it: a token
    glued to a word or to another token (`Bearerghp_…`, `ghp_…ghp_…`) is still that token."""
    if glue:
        lead = trail = ""
    # ASCII semantics everywhere: under IGNORECASE `[a-z]` would also match `İ`, so a token
    # could end on a non-ASCII letter and its boundary would change once a neighbour is redacted.
    # Compiled at the first anchor that reaches the rule: most rules never run in a process.
    source = Source(pattern, 0) if isinstance(pattern, str) else pattern
    compiled: list[re.Pattern[str]] = []

    def match(text: str, pos: int) -> _Span | None:
        # Lead first: inside a long run (`eyJeyJeyJ...`) only the run's first anchor pays
        # for a regex, which keeps the scan linear.
        if pos and text[pos - 1] in lead:
            return None
        if not compiled:
            compiled.append(re.compile(source.pattern, (source.flags & ~re.UNICODE) | re.ASCII))
        found = compiled[0].match(text, pos)
        if found is None:
            return None
        end = found.end()
        if end < len(text) and text[end] in trail:
            return None
        if check is not None and not check(found.group()):
            return None
        return pos, end

    return Rule(kind, match, rank=rank)


def mixed_classes(token: str) -> bool:
    """Random keys of this length carry digits and both cases; slugs and words do not."""
    return (
        any(c.isdigit() for c in token)
        and any(c.isupper() for c in token)
        and any(c.islower() for c in token)
    )


def jwt_valid(token: str) -> bool:
    """detect-secrets' JwtTokenDetector.is_formally_valid: every segment is base64url and the
    first two decode to JSON (restated here: importing the plugin loads its whole scanner)."""
    for index, segment in enumerate(token.split(".")):
        padding = len(segment) % 4
        if padding == 1:
            return False
        try:
            decoded = base64.urlsafe_b64decode(segment + "=" * ((4 - padding) % 4))
            if index < 2:
                json.loads(decoded.decode("utf-8"))
        except (binascii.Error, ValueError, UnicodeDecodeError):
            return False
    return True


# -- private keys ----------------------------------------------------------------------------

_PEM_HEAD: Final = re.compile(
    r"(?:-----|---- )BEGIN (?P<label>(?:[A-Z0-9]+ )*)PRIVATE KEY(?: BLOCK)?(?:-----| ----)"
)
# A key block is read token by token from its header: base64 runs, line breaks (a newline, a
# `\n` escape inside a string literal, an HTML `<br>`), an END line, or anything else, which
# is what wraps each line of a key quoted, commented, listed or tabled in Markdown or code
# (`'…',`, `"…" +`, `| … |`, `- "…"`, `# `, `// `, `> `, a `\` continuation). Whatever wraps a
# line, the block is found; prose between BEGIN and END is not (its words are short runs).
# Each alternative consumes at least one character and the noise class never overlaps a run,
# so the tokens of a text are one fixed split of it: no backtracking across lines.
_KEY_TOKEN: Final = re.compile(
    r"(?P<run>[A-Za-z0-9+/=]+)"
    r"|(?P<br>(?:\r\n?|\n|\\[rn]|<[bB][rR][ \t]*/?>)+)"
    r"|(?P<edge>(?:-----|---- )(?:END|BEGIN) )"
    r"|(?:[^A-Za-z0-9+/=\\<\r\n-]|\\(?![rn])|<(?![bB][rR][ \t]*/?>)"
    r"|-(?!----(?:END|BEGIN) |--- (?:END|BEGIN) ))+"
)
# Armor headers at the start of a body line: OpenSSL's `Proc-Type: 4,ENCRYPTED` and
# `DEK-Info: AES-128-CBC,<hex>` (exact shapes, so a block joined on one line reads on), and
# RFC 4880 / RFC 4716 headers (`Version: GnuPG v2`, `Comment: "…"`): a quoted value or up to
# 32 short words, so key material after a header on the same line is still read as a key.
_ARMOR_HEADER: Final = re.compile(
    r"Proc-Type:[ \t]*[0-9]+,ENCRYPTED|DEK-Info:[ \t]*[A-Z0-9-]+,[0-9A-F]{16,32}"
    r"|[A-Za-z][A-Za-z0-9-]{0,63}:[ \t]"
    r"(?:\"[^\"\r\n]{0,512}\"|(?:[^\s\\<\"'|`-][^\s\\<\"'|`]{0,14}(?![^\s\\<\"'|`])[ \t]*){0,32})"
)
_PEM_END: Final = re.compile(
    r"(?:-----|---- )END (?P<label>(?:[A-Z0-9]+ )*)PRIVATE KEY(?: BLOCK)?(?:-----| ----)"
)
_MATERIAL_RUN: Final = 16  # a body line holds 64 (PEM) or 70 (OpenSSH) base64 characters
_PREFIX_WORD: Final = 4  # `1.`, `REM `, `dnl `, Python's `b"`: one short word starting a line
_PREFIX_WORD_ENDS: Final = frozenset(" \t.):'\"`")
_SHORT_RUNS: Final = 3  # a short last line, a PGP checksum `=AbCd`, a stray word


def _is_material(run: str) -> bool:
    """A long base64 run that is not a word (a real body line mixes cases and digits)."""
    return len(run) >= _MATERIAL_RUN and not (run.isalpha() and (run.islower() or run.isupper()))


def match_private_key(text: str, pos: int) -> _Span | None:
    """The whole block from BEGIN through the END that repeats its label; without that END,
    the header and the key material after it (a truncated key)."""
    head = _PEM_HEAD.match(text, pos)
    if head is None:
        return None
    material: list[str] = []
    material_end = None
    shorts = 0
    # What the current line held so far: nothing but noise, a prefix word, armor headers
    # (several on one line when the block is joined), or base64 runs.
    line = "start"
    cursor = head.end()
    while (token := _KEY_TOKEN.match(text, cursor)) is not None:
        kind = token.lastgroup
        if kind == "br":
            line = "start"
        elif kind == "edge":
            end = _PEM_END.match(text, cursor)
            if end is not None and end.group("label") == head.group("label"):
                return (pos, end.end()) if _holds_key(material) else None
            break  # another block's BEGIN, or an END that is not this block's
        elif kind == "run":
            if line != "runs" and (header := _ARMOR_HEADER.match(text, cursor)) is not None:
                cursor = header.end()
                line = "header"
                continue
            run = token.group()
            if not any(c.isalnum() for c in run):
                pass  # `//`, `+`, `=`: a comment leader or a concatenation, not base64
            elif _is_material(run):
                material.append(run)
                material_end = token.end()
                line = "runs"
            elif (
                line == "start"
                and len(run) <= _PREFIX_WORD
                and text[token.end() : token.end() + 1] in _PREFIX_WORD_ENDS
            ):
                line = "prefixed"  # `1. `, `REM `, `b"`: a word that starts the line
            else:
                shorts += 1
                line = "runs"
                if shorts > _SHORT_RUNS:
                    break  # words: prose, not a key
        cursor = token.end()
    if material_end is None or not _holds_key(material):
        return None
    return pos, material_end


def _holds_key(material: list[str]) -> bool:
    """Key material, not a placeholder: 32+ base64 characters, not one character repeated
    (`-----BEGIN … KEY-----\\nXXXX\\nXXXX\\n-----END …`)."""
    joined = "".join(material)
    return len(joined) >= 32 and len(set(joined)) > 2


# PuTTY: header, then whole `Name: value` and base64 lines up to the closing `Private-MAC:`
# line (or, when that is missing, as far as such lines go).
_PUTTY: Final = re.compile(
    r"PuTTY-User-Key-File-\d+:[^\r\n]*"
    r"(?:\r?\n(?!Private-MAC:|PuTTY-User-Key-File-)"
    r"(?:[A-Za-z][A-Za-z0-9-]*: [^\r\n]*|[A-Za-z0-9+/=]+(?=\r?\n|\Z)))*"
    r"(?:\r?\nPrivate-MAC: ?[0-9a-fA-F]+)?",
    re.ASCII,
)


def match_putty(text: str, pos: int) -> _Span | None:
    found = _PUTTY.match(text, pos)
    return found.span() if found is not None else None


# -- URL credentials ---------------------------------------------------------------------------

# detect-secrets' BasicAuthDetector shape, widened: the user may be empty (`redis://:pw@host`)
# and the password may hold RFC 3986 sub-delimiters and `:`.
URL_CREDENTIALS: Final = r"[^\s:/?#\[\]@\"'`<>]*:[^\s/?#\[\]@\"'`<>]+@(?=[^\s/?#@\"'`<>])"
_BASIC_AUTH: Final = re.compile(
    r"://[^\s:/?#\[\]@\"'`<>]*:(?P<password>[^\s/?#\[\]@\"'`<>]+)@(?=[^\s/?#@\"'`<>])"
)


def match_basic_auth(text: str, pos: int) -> _Span | None:
    found = _BASIC_AUTH.match(text, pos)
    if found is None:
        return None
    password = found.group("password")
    # `https://a:b@host`, `https://abc:xyz@example.com`: three characters are an example.
    if len(password) < 4 or not any(c.isalnum() for c in password) or is_template(password):
        return None
    if normalized(password) in PLACEHOLDER_WORDS or MASK.fullmatch(password):
        return None
    return found.span("password")
