"""Secret redaction: the one engine every surface uses (contract section 8).

`redact(text)` replaces each secret with `[REDACTED:<kind>]` and reports exact spans. Patterns
come from detect-secrets where its plugin fits span-level work (AWS access keys, classic GitHub
tokens, GitLab, Slack, PyPI, legacy OpenAI keys, its JWT validity check); our own rules cover
what it lacks or reports only per line (fine-grained GitHub tokens, current Stripe/OpenAI/
Anthropic/Google/npm formats, whole private-key blocks, the password inside a URL, the literal
value of a `password=` / `token:` assignment). No entropy detectors: hashes, UUIDs and base64 in
ordinary text are left alone.

Matching rules and decisions (kinds are `REDACTION_KINDS`):

- private_key: the whole `-----BEGIN <label>PRIVATE KEY-----` ... matching `-----END ...-----`
  block (any label: RSA, EC, DSA, OPENSSH, ENCRYPTED, PGP ... BLOCK, none; SSH2 `---- BEGIN`),
  also with `\\n` escapes inside a JSON string. Without an END line, the header plus the
  base64 body lines after it; a header with no body is prose and stays. PuTTY `.ppk` blocks.
- aws_access_key: AKIA/ASIA/ABIA/ACCA/A3T + 16 (detect-secrets), not inside a longer word.
- aws_secret_key: a 40-character base64 value assigned to an `aws...key/secret/token` or
  `...secret_access_key` name; an all-hex value (a commit SHA) is not one.
- github_token: gh[pousr]_ + 36 (detect-secrets), `github_pat_` + 22..255.
- gitlab_token: detect-secrets' gl*- prefixes plus 20..300-character and routable tokens.
- slack_token: xox[abposr]- tokens and hooks.slack.com webhook URLs (detect-secrets; the whole
  webhook URL is the credential), `xapp-` app tokens.
- stripe_key: `sk_live_`, `rk_live_` and also `sk_test_`/`rk_test_` (test-mode secret keys
  still act on the account), `whsec_` webhook secrets. Publishable `pk_` keys are public.
- openai_api_key: legacy `T3BlbkFJ` keys (detect-secrets), `sk-proj-`/`sk-svcacct-`/
  `sk-admin-`/`sk-None-` keys and bare `sk-` + 32+ alphanumerics that mix digits, upper and
  lower case.
- anthropic_api_key: `sk-ant-` + 32+; never reported as OpenAI.
- google_api_key: AIza + 35. npm_token: npm_ + 36, or a legacy UUID `_authToken=` value.
  pypi_token: detect-secrets' pypi.org / test.pypi.org macaroon prefixes.
- jwt: three base64url segments starting `eyJ` whose header and payload decode to JSON
  (detect-secrets' validity check).
- basic_auth_url: only the password of `user:password@host` credentials after `scheme://`;
  user and host stay.
- secret_assignment: only the value (up to 2 KiB) after a name ending in password/passwd/
  passphrase/pwd/pass/secret/token/<api|access|secret|private|auth|...>key (detect-secrets'
  keyword list plus ours), separated by `=`, `:`, `:=`, `=>` (or compared with `==`/`!=` to a
  quoted literal), quoted or not; the name stays. Not a literal: empty, shorter than 4, no
  letter, `$VAR`/`${VAR}`/`%(x)s`/`{{ x }}`/`<x>` templates, masks (`***`, `xxxx`), placeholder
  words (changeme, your-token-here, null, str, ...), names such as `GITHUB_TOKEN`, paths, URLs;
  unquoted also calls/indexing, `a.b` attribute paths, YAML tags/anchors/aliases, and bare
  identifiers with at most three digits where code is likely (`f(password=pw)`,
  `token = token_value`, `secret: clientSecret,`). An unquoted `name: value` counts only when
  the value ends the line (YAML), not `password: str = ""` or prose after a colon. In a URL
  query (`?token=`) the value stops at `&`/`#`, after `;` (connection strings) at `;`.

Overlaps: a recognized format beats a context rule (assignment, URL password, AWS secret, npm
`_authToken`) it overlaps, even a longer one; otherwise the longest span wins, then the more
specific kind. Findings never overlap. Regexes use ASCII semantics. A finding glued to token
characters can change how its neighbours read once it is a marker, so then the redacted text
is scanned again until nothing new appears: `redact(redact(t).text)` changes nothing.

Speed: every rule sits behind a literal anchor. The text is scanned once per pivot character
(`_`, `-`, `J`, `:`, `A`, `G`) with regexes that begin with that literal (sre scans those fast;
one alternation of all anchors would not), and three times (token/key, pass/pwd, secret) on an
ASCII-lowercased copy; rule code runs only where an anchor occurs. Work per anchor is bounded,
so pathological input stays near linear.

Why one module of ~800 lines: the rules, the pivot table built from their anchors and the
overlap selection are one decision procedure. Whether a span is redacted depends on every rule
that could claim it (the precedence above), and the speed depends on the pivots knowing every
rule's anchor; split apart, each piece would need the others' private tables to be read.
"""

from __future__ import annotations

import re
import string
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final

from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.keyword import DENYLIST as _DS_KEYWORDS
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.slack import SlackDetector

__all__ = [
    "REDACTION_KINDS",
    "RedactionResult",
    "SecretFinding",
    "find_secrets",
    "marker",
    "redact",
]

REDACTION_KINDS: Final[frozenset[str]] = frozenset(
    {
        "private_key",
        "aws_access_key",
        "aws_secret_key",
        "github_token",
        "gitlab_token",
        "slack_token",
        "stripe_key",
        "openai_api_key",
        "anthropic_api_key",
        "google_api_key",
        "npm_token",
        "pypi_token",
        "jwt",
        "basic_auth_url",
        "secret_assignment",
    }
)

_MARKERS: Final[dict[str, str]] = {kind: f"[REDACTED:{kind}]" for kind in REDACTION_KINDS}
_MARKER_PREFIX: Final = "[REDACTED:"


@dataclass(frozen=True, slots=True)
class SecretFinding:
    """One finding; `text[start:end]` is exactly what gets replaced."""

    kind: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class RedactionResult:
    text: str
    findings: tuple[SecretFinding, ...]  # sorted, non-overlapping, offsets into the original

    @property
    def redacted(self) -> bool:
        return bool(self.findings)

    def counts(self) -> list[tuple[str, int]]:
        """[(kind, count)] sorted by kind: what may be reported, never the secret."""
        return sorted(Counter(finding.kind for finding in self.findings).items())


def marker(kind: str) -> str:
    try:
        return _MARKERS[kind]
    except KeyError:
        raise ValueError(f"unknown redaction kind {kind!r}") from None


# -- building blocks -------------------------------------------------------------------------

_Span = tuple[int, int]
_ALNUM: Final = string.ascii_letters + string.digits
_WORD: Final = _ALNUM + "_"
_B64URL: Final = _ALNUM + "_-"
_TOKEN_CHARS: Final = frozenset(_B64URL + ".")  # what boundaries and names are made of


@dataclass(frozen=True, slots=True)
class _Rule:
    kind: str
    match: Callable[[str, int], _Span | None]
    context: bool = False  # context rules (assignments, URL passwords) yield to formats
    rank: int = 1  # tie-break between equally long overlapping spans


def _ds_pattern(plugin: Any, index: int) -> re.Pattern[str]:
    pattern = plugin.denylist[index]
    if not isinstance(pattern, re.Pattern):  # pragma: no cover - detect-secrets changed shape
        raise TypeError(f"{plugin.__name__}.denylist[{index}] is not a compiled pattern")
    return pattern


def _regex_rule(
    kind: str,
    pattern: re.Pattern[str] | str,
    *,
    lead: str = "",
    trail: str = "",
    check: Callable[[str], bool] | None = None,
    rank: int = 1,
) -> _Rule:
    """A rule from one regex tried at the anchor; `lead`/`trail` are characters that must not
    touch the match (a token inside a longer word is not that token)."""
    # ASCII semantics everywhere: under IGNORECASE `[a-z]` would also match `İ`, so a token
    # could end on a non-ASCII letter and its boundary would change once a neighbour is redacted.
    if isinstance(pattern, str):
        compiled = re.compile(pattern, re.ASCII)
    else:
        compiled = re.compile(pattern.pattern, (pattern.flags & ~re.UNICODE) | re.ASCII)

    def match(text: str, pos: int) -> _Span | None:
        # Lead first: inside a long run (`eyJeyJeyJ...`) only the run's first anchor pays
        # for a regex, which keeps the scan linear.
        if pos and text[pos - 1] in lead:
            return None
        found = compiled.match(text, pos)
        if found is None:
            return None
        end = found.end()
        if end < len(text) and text[end] in trail:
            return None
        if check is not None and not check(found.group()):
            return None
        return pos, end

    return _Rule(kind, match, rank=rank)


def _mixed_classes(token: str) -> bool:
    """Random keys of this length carry digits and both cases; slugs and words do not."""
    return (
        any(c.isdigit() for c in token)
        and any(c.isupper() for c in token)
        and any(c.islower() for c in token)
    )


def _jwt_valid(token: str) -> bool:
    return bool(JwtTokenDetector.is_formally_valid(token))


# -- private keys ----------------------------------------------------------------------------

_PEM_HEAD: Final = re.compile(
    r"(?:-----|---- )BEGIN (?P<label>(?:[A-Z0-9]+ )*)PRIVATE KEY(?: BLOCK)?(?:-----| ----)"
)
# One line of a key body: real newline or a `\n` escape (keys pasted into JSON), then base64, an
# armor header (`Proc-Type: ...`) or nothing, up to the end of that line or of a quoted string.
_PEM_BODY_LINE: Final = re.compile(
    r"(?:\r?\n|(?:\\r)?\\n)[ \t]*"
    r"(?:(?P<b64>[A-Za-z0-9+/]{16,}={0,2})|[A-Za-z][A-Za-z0-9-]*:[ \t][^\r\n\\]*)?"
    r"(?=[ \t]*(?:\r?\n|(?:\\r)?\\n|[\"']|$))"
)
# What may stand between BEGIN and END: base64 and armor header lines (`Proc-Type: ...`),
# indented or `\n`-escaped. Prose between a BEGIN and an END far below is not a key block.
_PEM_BODY: Final = re.compile(
    r"[ \t]*(?:[A-Za-z0-9+/=]+[ \t]*)?"
    r"(?:(?:\r?\n|(?:\\r)?\\n)[ \t]*(?:[A-Za-z0-9+/=]+|[A-Za-z][A-Za-z0-9-]*:[^\r\n\\]*)?[ \t]*)*",
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


def _match_private_key(text: str, pos: int) -> _Span | None:
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
            return pos, tail.end()
    # Truncated key (no END line): take the header and the body lines that follow it.
    end = None
    cursor = head.end()
    while (line := _PEM_BODY_LINE.match(text, cursor)) is not None:
        if line.group("b64") is not None:
            end = line.end("b64")
        cursor = line.end()
    return (pos, end) if end is not None else None


def _match_putty(text: str, pos: int) -> _Span | None:
    found = _PUTTY.match(text, pos)
    return found.span() if found is not None else None


# -- URL credentials ---------------------------------------------------------------------------

# detect-secrets' BasicAuthDetector shape, widened: the user may be empty (`redis://:pw@host`)
# and the password may hold RFC 3986 sub-delimiters and `:`.
_URL_CREDENTIALS: Final = r"[^\s:/?#\[\]@\"'`<>]*:[^\s/?#\[\]@\"'`<>]+@(?=[^\s/?#@\"'`<>])"
_BASIC_AUTH: Final = re.compile(
    r"://[^\s:/?#\[\]@\"'`<>]*:(?P<password>[^\s/?#\[\]@\"'`<>]+)@(?=[^\s/?#@\"'`<>])"
)


def _match_basic_auth(text: str, pos: int) -> _Span | None:
    found = _BASIC_AUTH.match(text, pos)
    if found is None:
        return None
    password = found.group("password")
    if not any(c.isalnum() for c in password) or _is_template(password):
        return None
    if _normalized(password) in _PLACEHOLDER_WORDS or _MASK.fullmatch(password):
        return None
    return found.span("password")


# -- literal values ----------------------------------------------------------------------------

_PLACEHOLDER_WORDS: Final = frozenset(
    {
        # placeholders and examples
        "changeme", "changeit", "changethis", "replaceme", "placeholder", "example", "sample",
        "dummy", "fake", "redacted", "hidden", "masked", "notset", "unset", "empty", "required",
        "optional", "todo", "tbd", "fixme", "test", "testing", "foo", "bar", "baz", "foobar",
        "default", "secret", "secrets", "password", "passwd", "pass", "pwd", "pw", "token",
        "apikey", "key", "value", "xxx", "none", "null", "nil", "true", "false", "undefined",
        "yes", "no", "on", "off",
        # type names in annotations and schemas
        "str", "string", "int", "integer", "bool", "boolean", "bytes", "any", "object",
        "secretstr", "secretbytes", "text", "char", "varchar",
    }
)  # fmt: skip
_PLACEHOLDER_SHAPE: Final = re.compile(
    r"^(?:your|insert|enter|paste|put|add)|^my[-_ .]|[-_ .]here$"
    r"|^(?:change|replace)[-_ .]?(?:me|it|this)\b|example|placeholder|dummy|redacted"
)
_MASK: Final = re.compile(r"[xX*•·.#_\-]+")
_NON_ALNUM: Final = re.compile(r"[^a-z0-9]+")
_LETTER: Final = re.compile(r"[A-Za-z]")
_NAME_OF_SECRET: Final = re.compile(
    r"[a-z0-9_.\-]*(?:password|passwd|passphrase|pwd|pass|secret|secrets|token|key)"
)
_IDENTIFIER: Final = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_ATTRIBUTE_PATH: Final = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::|->)[A-Za-z_$][\w$]*)+")
_PATH_LIKE: Final = re.compile(r"(?:~|\.{1,2})?/|[A-Za-z]:[\\/]|file:")


def _normalized(value: str) -> str:
    return _NON_ALNUM.sub("", value.lower())


def _is_template(value: str) -> bool:
    return (
        value[0] in "$%"
        or "${" in value
        or "{{" in value
        or "#{" in value
        or "%(" in value
        or ("{" in value and "}" in value)
        or "<" in value
        or ">" in value
    )


def _is_literal(value: str, *, quoted: bool) -> bool:
    """Is this assigned value a literal secret rather than a reference or a placeholder?"""
    value = value.strip()
    if len(value) < 4 or _LETTER.search(value) is None:
        return False
    lowered = value.lower()
    if (
        _MARKER_PREFIX.lower() in lowered
        or _is_template(value)
        or "..." in value
        or "…" in value
        or "://" in value
        or _MASK.fullmatch(value)
        or _normalized(value) in _PLACEHOLDER_WORDS
        or _PLACEHOLDER_SHAPE.search(lowered)
        or (len(value) <= 128 and _NAME_OF_SECRET.fullmatch(lowered))  # GITHUB_TOKEN: a name
        or _PATH_LIKE.match(value)
    ):
        return False
    if quoted:
        return True
    # Unquoted: YAML tags/anchors/aliases, decorators, calls, indexing, attribute paths.
    return not (
        value[0] in "!&*@" or "(" in value or "[" in value or _ATTRIBUTE_PATH.fullmatch(value)
    )


# -- assignments -------------------------------------------------------------------------------


def _spellings(word: str) -> tuple[str, ...]:
    """detect-secrets writes `api_?key`; names spell it apikey, api_key or api-key."""
    head, *rest = word.split("_?")
    spellings = [head]
    for part in rest:
        spellings = [done + sep + part for done in spellings for sep in ("", "_", "-")]
    return tuple(spellings)


# The name must END with the keyword: `password_file: /run/x` and `max_tokens: 4096` are not
# secrets. detect-secrets' KeywordDetector list (the words our keyword scans reach) plus token,
# passphrase, a `pass` word of its own and more `*_key` names. Checked with str.endswith.
_SECRET_NAME_ENDINGS: Final = (
    *(
        spelling
        for word in (
            *(w for w in _DS_KEYWORDS if w.endswith(("key", "pass", "password", "passwd", "pwd"))),
            *(w for w in _DS_KEYWORDS if w == "secret"),
            "token",
            "passphrase",
            *(
                f"{prefix}_?key"
                for prefix in ("access", "secret", "encryption", "signing", "master")
            ),
            "aws_?key",
        )
        for spelling in _spellings(word)
    ),
    "_pass",
    ".pass",
    "-pass",
)
# AWSKeyDetector's secret-key context: `aws` ... (key|pwd|password|pass|token).
_AWS_NAME_ENDINGS: Final = ("key", "pwd", "password", "pass", "token", "secret")
_SECRET_ACCESS_KEY: Final = _spellings("secret_?access_?key")
_AWS_SECRET_VALUE: Final = re.compile(r"[A-Za-z0-9/+]{40}")
_HEX: Final = re.compile(r"[0-9a-fA-F]+")
_UUID: Final = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
# Matched on the reversed lowercase text: the name that ends where the keyword ends.
_NAME_REVERSED: Final = re.compile(r"[a-z0-9_.\-]{0,128}")
_COMPARISONS: Final = frozenset({"==", "===", "!=", "!=="})

# Run on the lowercased text. Each starts with a literal so the scan is fast; the separator is
# checked in C so only real `name = value` shapes reach Python.
_KEYWORD_TAIL: Final = (
    r"(?![a-z0-9_.\-])[\"']?\]?(?P<ws0>[ \t]*)"
    r"(?P<sep>:=|=>|={1,3}|!={1,2}|:)(?![=:~])(?P<ws>[ \t]*)"
)
_KEYWORD_SCANS: Final = tuple(
    re.compile(f"(?P<kw>{keyword}){_KEYWORD_TAIL}")
    for keyword in (r"ke(?:(?<=toke)n|y)", r"p(?:ass(?:word|wd|phrase)?|wd)", r"secret")
)
_LOWER_ANCHORS: Final = ("token", "key", "pass", "pwd", "secret")
# Values are bounded (2 KiB) so a long line of `password=password=...` stays linear; a longer
# value is data, not a credential someone typed.
_MAX_VALUE: Final = 2048
_QUOTED: Final = re.compile(
    r"(?P<prefix>[rRbBuUfF]{0,2})(?P<q>[\"'`])"
    rf"(?P<v>(?:(?!(?P=q))[^\\\r\n]|\\.){{0,{_MAX_VALUE}}})(?P=q)"
)
_QUOTED_START: Final = frozenset("\"'`rRbBuUfF")
_UNQUOTED: Final = re.compile(rf"[^\s\"'`]{{1,{_MAX_VALUE + 1}}}")
# After an unquoted YAML value: end of line, a comment, or the end of an enclosing string.
_VALUE_ENDS_LINE: Final = re.compile(r"[ \t]*(?:\r?\n|\r|$|#|//|[\"'`])")
_QUERY_VALUE_END: Final = re.compile(r"[&#]")


def _argument_context(text: str, start: int) -> bool:
    """Is the name at `start` a keyword argument (after `(` or `,`)?"""
    at = start - 1
    while at >= 0 and text[at] in " \t":
        at -= 1
    return at >= 0 and text[at] in "(,"


def _assignment(
    text: str, low: str, reversed_low: str, found: re.Match[str]
) -> tuple[str, int, int] | None:
    name_end = found.end("kw")
    kw_start = found.start("kw")
    mirror = len(low) - kw_start  # where the keyword starts, counted in the reversed text
    run = _NAME_REVERSED.match(reversed_low, mirror)
    start = kw_start - (run.end() - mirror) if run is not None else kw_start
    if text.endswith(_MARKER_PREFIX, 0, start):
        return None  # the kind name inside one of our own markers
    name = low[start:name_end]
    generic = name == "pass" or name.endswith(_SECRET_NAME_ENDINGS)
    aws = ("aws" in name and name.endswith(_AWS_NAME_ENDINGS)) or name.endswith(_SECRET_ACCESS_KEY)
    if not (aws or generic):
        return None
    sep, ws0, ws = found.group("sep", "ws0", "ws")
    pos = found.end()
    quoted = _QUOTED.match(text, pos) if text[pos : pos + 1] in _QUOTED_START else None
    code_name = False  # an unquoted bare identifier where code, not config, is likely
    if quoted is not None:
        if "f" in quoted.group("prefix").lower():
            return None  # f-string: a template
        value_start, value_end = quoted.span("v")
        value = quoted.group("v")
    else:
        if sep in _COMPARISONS or (sep == ":" and not ws):
            return None  # `host:port`, `scheme:rest`, a comparison with a variable
        bare = _UNQUOTED.match(text, pos)
        if bare is None:
            return None
        raw = bare.group()
        if len(raw) > _MAX_VALUE:
            return None
        before = text[start - 1] if start else ""
        if before in ("?", "&"):  # URL query parameter
            raw = _QUERY_VALUE_END.split(raw, maxsplit=1)[0]
        elif before == ";":  # `Server=x;Password=y;` connection string
            raw = raw.split(";", 1)[0]
        value = raw.rstrip(",;)]}")
        value_start, value_end = pos, pos + len(value)
        # YAML `key: value` must be the whole rest of the line; `password: str = ""` and prose
        # after a colon are not values.
        if sep == ":" and _VALUE_ENDS_LINE.match(text, bare.end()) is None:
            return None
        code_name = _IDENTIFIER.fullmatch(value) is not None and (
            value != raw  # `secret: clientSecret,` / `token: string;` in code
            or (sep != ":" and bool(ws0 or ws))  # `x = y`
            or _argument_context(text, start)  # `f(password=pw)`
        )
    if aws and _AWS_SECRET_VALUE.fullmatch(value) and not _HEX.fullmatch(value):
        return "aws_secret_key", value_start, value_end
    if name.endswith("authtoken") and _UUID.fullmatch(value):
        return "npm_token", value_start, value_end  # legacy .npmrc token
    # Variable names carry few digits; `Xk9vQ2mP7rT4` or a hex string is a generated secret.
    if code_name and sum(c.isdigit() for c in value) <= 3:
        return None
    if generic and _is_literal(value, quoted=quoted is not None):
        return "secret_assignment", value_start, value_end
    return None


# -- rule table ----------------------------------------------------------------------------------

_GITHUB: Final = (
    _regex_rule("github_token", _ds_pattern(GitHubTokenDetector, 0), lead=_WORD, trail=_WORD),
)
_GITHUB_PAT: Final = (
    _regex_rule("github_token", r"github_pat_[A-Za-z0-9_]{22,255}", lead=_WORD, trail=_WORD),
)
_GITLAB: Final = (
    *(
        _regex_rule("gitlab_token", pattern, lead=_B64URL, trail=_B64URL)
        for pattern in GitLabTokenDetector.denylist
    ),
    # Longer tokens than detect-secrets' 50 and routable `glpat-<payload>.<9>` tokens.
    _regex_rule(
        "gitlab_token",
        r"gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-[0-9A-Za-z_-]{20,300}(?:\.[0-9a-z]{9})?",
        lead=_B64URL,
        trail=_B64URL,
    ),
)
_SLACK_TOKEN: Final = (
    _regex_rule("slack_token", _ds_pattern(SlackDetector, 0), lead=_ALNUM, trail=_ALNUM),
)
_SLACK_APP: Final = (
    _regex_rule(
        "slack_token", r"xapp-\d+-[A-Za-z0-9]+-\d+-[A-Za-z0-9]+", lead=_ALNUM, trail=_ALNUM
    ),
)
_SLACK_WEBHOOK: Final = (
    _regex_rule("slack_token", _ds_pattern(SlackDetector, 1), lead=_ALNUM, trail=_WORD),
)
_STRIPE: Final = (
    _regex_rule("stripe_key", r"[sr]k_(?:live|test)_[0-9a-zA-Z]{24,247}", lead=_WORD, trail=_ALNUM),
)
_STRIPE_WEBHOOK: Final = (
    _regex_rule("stripe_key", r"whsec_[0-9a-zA-Z]{32,128}", lead=_WORD, trail=_ALNUM),
)
_SK_DASH: Final = (
    _regex_rule("anthropic_api_key", r"sk-ant-[A-Za-z0-9_-]{32,}", lead=_B64URL, rank=2),
    _regex_rule("openai_api_key", _ds_pattern(OpenAIDetector, 0), lead=_B64URL, trail=_B64URL),
    _regex_rule(
        "openai_api_key",
        r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}",
        lead=_B64URL,
        check=lambda key: _mixed_classes(key.split("-", 2)[2]),
    ),
    _regex_rule(
        "openai_api_key", r"sk-[A-Za-z0-9]{32,}", lead=_B64URL, trail=_B64URL, check=_mixed_classes
    ),
)
_GOOGLE: Final = (
    _regex_rule("google_api_key", r"AIza[0-9A-Za-z_-]{35}", lead=_B64URL, trail=_B64URL),
)
_AWS_ACCESS: Final = (
    _regex_rule("aws_access_key", _ds_pattern(AWSKeyDetector, 0), lead=_ALNUM, trail=_ALNUM),
)
_NPM: Final = (_regex_rule("npm_token", r"npm_[A-Za-z0-9]{36}", lead=_WORD, trail=_WORD),)
_PYPI: Final = tuple(
    _regex_rule("pypi_token", pattern, lead=_B64URL, trail=_B64URL)
    for pattern in PypiTokenDetector.denylist
)
_JWT: Final = (
    # detect-secrets' own regex ends lazily (it reports header.payload only); we need the whole
    # token, then use its validity check.
    _regex_rule(
        "jwt",
        r"eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+",
        lead=_B64URL + ".",
        trail=_B64URL,
        check=_jwt_valid,
    ),
)
_PRIVATE_KEY: Final = (_Rule("private_key", _match_private_key, rank=3),)
_PUTTY_KEY: Final = (_Rule("private_key", _match_putty, rank=3),)
_BASIC_AUTH_RULE: Final = (_Rule("basic_auth_url", _match_basic_auth, context=True),)

# anchor -> (regex the text after the anchor must match, or None; rules tried at the anchor)
_ANCHORED: Final[tuple[tuple[str, str | None, tuple[_Rule, ...]], ...]] = (
    *((f"gh{c}_", None, _GITHUB) for c in "pousr"),
    ("github_pat_", None, _GITHUB_PAT),
    *(
        (f"gl{p}-", None, _GITLAB)
        for p in ("pat", "dt", "ft", "soat", "rt", "cbt", "imt", "ptt", "agent", "oas")
    ),
    ("GR1348941", None, _GITLAB),
    *((f"xox{c}-", None, _SLACK_TOKEN) for c in "abposr"),
    ("xapp-", None, _SLACK_APP),
    ("https://hooks.slack.com/", None, _SLACK_WEBHOOK),
    *((f"{p}_{mode}_", None, _STRIPE) for p in ("sk", "rk") for mode in ("live", "test")),
    ("whsec_", None, _STRIPE_WEBHOOK),
    ("sk-", None, _SK_DASH),
    ("AIza", None, _GOOGLE),
    *((prefix, None, _AWS_ACCESS) for prefix in ("AKIA", "ASIA", "ABIA", "ACCA", "A3T")),
    ("npm_", None, _NPM),
    ("pypi-AgE", None, _PYPI),
    ("eyJ", None, _JWT),
    ("-----BEGIN ", None, _PRIVATE_KEY),
    ("---- BEGIN ", None, _PRIVATE_KEY),
    ("PuTTY-User-Key-File-", None, _PUTTY_KEY),
    # Every URL has `://`; only those with `user:password@` reach Python.
    ("://", _URL_CREDENTIALS, _BASIC_AUTH_RULE),
)

# Scan pivots: a character every anchor contains (or starts with). sre scans fast only for
# patterns that begin with a literal, so there is one scan per pivot instead of one regex with
# many alternatives; lookarounds confirm the anchor before Python sees the position.
_PIVOT_CHARS: Final = "_-J:"


@dataclass(frozen=True, slots=True)
class _Pivot:
    scan: re.Pattern[str]
    anchors: tuple[tuple[str, int, re.Pattern[str] | None, tuple[_Rule, ...]], ...]


def _build_pivots() -> tuple[_Pivot, ...]:
    grouped: dict[str, list[tuple[str, int, str | None, tuple[_Rule, ...]]]] = {}
    for anchor, after, rules in _ANCHORED:
        index = next((i for i, c in enumerate(anchor) if c in _PIVOT_CHARS), 0)
        grouped.setdefault(anchor[index], []).append((anchor, index, after, rules))
    pivots = []
    for char, entries in grouped.items():
        inner, first = [], []
        for anchor, index, after, _rules in entries:
            ahead = re.escape(anchor[index + 1 :]) + (after or "")
            branch = f"(?={ahead})" if ahead else ""
            if index:
                inner.append(f"(?<={re.escape(anchor[: index + 1])})" + branch)
            else:
                first.append(branch or "")
        branches = list(first)
        if inner:
            # Gate on the one character before the pivot: most `-` and `_` in ordinary text
            # fail this single class test and never reach the per-anchor lookbehinds.
            before = "".join(sorted({anchor[index - 1] for anchor, index, *_ in entries if index}))
            gate = f"(?<=[{re.escape(before)}]{re.escape(char)})"
            branches.append(gate + "(?:" + "|".join(inner) + ")")
        scan = re.compile(re.escape(char) + "(?:" + "|".join(branches) + ")")
        compiled = tuple(
            (anchor, index, re.compile(after) if after else None, rules)
            for anchor, index, after, rules in entries
        )
        pivots.append(_Pivot(scan, compiled))
    return tuple(pivots)


_PIVOTS: Final = _build_pivots()
_ANCHORS: Final = tuple(anchor for anchor, _after, _rules in _ANCHORED)


def _has_anchor(text: str) -> bool:
    """Whether any rule could fire: a text without an anchor is never changed."""
    if any(anchor in text for anchor in _ANCHORS):
        return True
    low = _ascii_lower(text)
    return any(anchor in low for anchor in _LOWER_ANCHORS)


def _ascii_lower(text: str) -> str:
    """Lowercase ASCII letters only, so offsets stay aligned (`str.lower` can change length)."""
    if text.isascii():
        return text.lower()
    return text.encode("utf-8", "surrogatepass").lower().decode("utf-8", "surrogatepass")


# -- engine --------------------------------------------------------------------------------------

# (context?, -length, -rank, start, end, kind): sorting gives the order in which overlapping
# candidates are preferred.
_Candidate = tuple[bool, int, int, int, int, str]


def _candidates(text: str) -> Iterable[_Candidate]:
    seen: set[tuple[int, int, str]] = set()
    for pivot in _PIVOTS:
        for hit in pivot.scan.finditer(text):
            pivot_at = hit.start()
            for anchor, index, after, rules in pivot.anchors:
                start = pivot_at - index
                if start < 0 or not text.startswith(anchor, start):
                    continue
                if after is not None and after.match(text, start + len(anchor)) is None:
                    continue
                for rule in rules:
                    span = rule.match(text, start)
                    if span is not None and (span[0], span[1], rule.kind) not in seen:
                        seen.add((span[0], span[1], rule.kind))
                        yield rule.context, span[0] - span[1], -rule.rank, *span, rule.kind
    low = _ascii_lower(text)
    reversed_low = ""
    for scan in _KEYWORD_SCANS:
        for hit in scan.finditer(low):
            reversed_low = reversed_low or low[::-1]
            found = _assignment(text, low, reversed_low, hit)
            if found is not None:
                kind, start, end = found
                rank = 1 if kind == "secret_assignment" else 2
                yield True, start - end, -rank, start, end, kind


def _select(text: str) -> list[SecretFinding]:
    """One pass: the preferred non-overlapping candidates, sorted by start."""
    starts: list[int] = []
    chosen: list[SecretFinding] = []
    for _context, _length, _rank, start, end, kind in sorted(_candidates(text)):
        at = bisect_right(starts, start)
        if at and chosen[at - 1].end > start:
            continue
        if at < len(starts) and starts[at] < end:
            continue
        starts.insert(at, start)
        chosen.insert(at, SecretFinding(kind, start, end))
    return chosen


def _splice(text: str, findings: Iterable[SecretFinding]) -> str:
    parts: list[str] = []
    cursor = 0
    for finding in findings:
        parts.append(text[cursor : finding.start])
        parts.append(_MARKERS[finding.kind])
        cursor = finding.end
    parts.append(text[cursor:])
    return "".join(parts)


def _glued(text: str, findings: list[SecretFinding]) -> bool:
    return any(
        (finding.start and text[finding.start - 1] in _TOKEN_CHARS)
        or (finding.end < len(text) and text[finding.end] in _TOKEN_CHARS)
        for finding in findings
    )


def _to_original(findings: list[SecretFinding], found: SecretFinding) -> SecretFinding:
    """Map a finding in the redacted text back to the original; a marker it touches counts
    as the whole secret behind it."""
    starts, shift = [], 0
    for finding in findings:
        starts.append((finding.start + shift, finding))
        shift += len(_MARKERS[finding.kind]) - (finding.end - finding.start)

    def original(position: int, last: bool) -> int:
        before = [item for item in starts if item[0] <= position]
        if not before:
            return position
        marker_start, finding = before[-1]
        inside = position - marker_start
        if inside < len(_MARKERS[finding.kind]):
            return finding.end - 1 if last else finding.start
        return finding.end + inside - len(_MARKERS[finding.kind])

    return SecretFinding(
        found.kind, original(found.start, False), original(found.end - 1, True) + 1
    )


def _merge(findings: list[SecretFinding]) -> list[SecretFinding]:
    """Sort and join overlapping findings; a joined span keeps the longer part's kind."""
    merged: list[SecretFinding] = []
    for finding in sorted(findings, key=lambda f: (f.start, f.start - f.end)):
        last = merged[-1] if merged else None
        if last is None or finding.start >= last.end:
            merged.append(finding)
            continue
        longer = last if last.end - last.start >= finding.end - finding.start else finding
        merged[-1] = SecretFinding(longer.kind, last.start, max(last.end, finding.end))
    return merged


def find_secrets(text: str) -> list[SecretFinding]:
    """Secrets in `text`, sorted by start and never overlapping.

    Boundaries are judged on the neighbours a secret has in `text`; once a neighbour is
    replaced by a marker another secret can stand free (a token glued to a key header). So
    while a finding touches a token or name character, the redacted text is scanned again
    until nothing new turns up, which makes `redact(redact(t).text)` a no-op. Findings set
    off by spaces, quotes, `=`, `:` or `@` (nearly all) cannot change a neighbour's reading.
    """
    findings = _select(text)
    covered = sum(finding.end - finding.start for finding in findings)
    while _glued(text, findings):
        extra = _select(_splice(text, findings))
        if not extra:
            break
        merged = _merge([*findings, *(_to_original(findings, found) for found in extra)])
        now = sum(finding.end - finding.start for finding in merged)
        if now <= covered:  # pragma: no cover - a rule matched inside a marker; stop safely
            break
        findings, covered = merged, now
    return findings


def redact(text: str) -> RedactionResult:
    findings = tuple(find_secrets(text))
    if not findings:
        return RedactionResult(text, ())
    return RedactionResult(_splice(text, findings), findings)
