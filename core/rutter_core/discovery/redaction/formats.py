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
# Whatever may stand before or after a key's line: quote marks and comment leaders (`> `, `# `,
# `// `, `- `, `* `, `| `, `;`, `"`), anything but base64 and letters, so a block quoted or
# commented in Markdown or code is still one block, and prose between BEGIN and END is not.
_NOT_B64: Final = r"(?:[^A-Za-z0-9+/=\r\n\\]|//+(?![A-Za-z0-9+/=]))*"
# ... and at most one short word before a space (`1. `, `REM `, `dnl `): numbered lists and
# comment keywords. One only, so a line of prose never reads as prefix words plus base64.
_LINE_PREFIX: Final = _NOT_B64 + r"(?:[A-Za-z0-9]{1,4}[.):]?[ \t]" + _NOT_B64 + ")?"
# One line of a key body: real newline or a `\n` escape (keys pasted into JSON), then base64, an
# armor header (`Proc-Type: ...`) or nothing, up to the end of that line or of a quoted string.
_NEWLINE: Final = r"(?:\r?\n|(?:\\r)?\\n)"
_PEM_BODY_LINE: Final = re.compile(
    _NEWLINE
    + _LINE_PREFIX
    + r"(?:(?P<b64>[A-Za-z0-9+/]{16,}={0,2})|[A-Za-z][A-Za-z0-9-]*:[ \t][^\r\n\\]*)?"
    r"(?=[ \t]*[\"']|" + _LINE_PREFIX + "(?:" + _NEWLINE + "|$))"
)
# What may stand between BEGIN and END: base64 and armor header lines (`Proc-Type: ...`),
# indented, prefixed or `\n`-escaped. Prose between a BEGIN and an END far below is not a key.
# Each line splits one way only (prefix, then base64 and a suffix, or an armor header), so a
# long near-miss cannot make the match backtrack across lines.
_PEM_BODY: Final = re.compile(
    r"[ \t]*(?:[A-Za-z0-9+/=]+[ \t]*)?(?:"
    + _NEWLINE
    + _LINE_PREFIX
    + r"(?:[A-Za-z0-9+/=]+"
    + _LINE_PREFIX
    + r"|[A-Za-z][A-Za-z0-9-]*:[^\r\n\\]*)?)*",
    re.ASCII,
)
# Header, then whole `Name: value` and base64 lines up to the closing `Private-MAC:` line (or,
# when that is missing, as far as such lines go).
_PUTTY: Final = re.compile(
    r"PuTTY-User-Key-File-\d+:[^\r\n]*"
    r"(?:\r?\n(?!Private-MAC:|PuTTY-User-Key-File-)"
    r"(?:[A-Za-z][A-Za-z0-9-]*: [^\r\n]*|[A-Za-z0-9+/=]+(?=\r?\n|\Z)))*"
    r"(?:\r?\nPrivate-MAC: ?[0-9a-fA-F]+)?",
    re.ASCII,
)


_PEM_END_TAIL: Final = re.compile(r"(?: BLOCK)?(?:-----| ----)")


def match_private_key(text: str, pos: int) -> _Span | None:
    head = _PEM_HEAD.match(text, pos)
    if head is None:
        return None
    # The END line repeats the label, so two adjacent blocks are never merged into one. Only
    # the first such END counts; str.find keeps many headers cheap.
    needle = f"END {head.group('label')}PRIVATE KEY"
    at = text.find(needle, head.end())
    if at >= 0 and text.endswith(("-----", "---- "), head.end(), at):
        tail = _PEM_END_TAIL.match(text, at + len(needle))
        body_end = at - 5
        if tail is not None and _PEM_BODY.fullmatch(text, head.end(), body_end):
            if _is_masked_body(text[head.end() : body_end]):
                return None  # `-----BEGIN … KEY-----\nXXXX\nXXXX\n-----END …`: a placeholder
            return pos, tail.end()
    # Truncated key (no END line): take the header and the body lines that follow it.
    end = None
    cursor = head.end()
    while (line := _PEM_BODY_LINE.match(text, cursor)) is not None:
        if line.group("b64") is not None:
            end = line.end("b64")
        cursor = line.end()
    return (pos, end) if end is not None else None


_BASE64_RUN: Final = re.compile(r"[A-Za-z0-9+/]+")


def _is_masked_body(body: str) -> bool:
    """No key material: under 32 base64 characters, or one character repeated."""
    material = "".join(_BASE64_RUN.findall(body.replace("\\n", "\n").replace("\\r", "\r")))
    return len(material) < 32 or len(set(material)) <= 2


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
