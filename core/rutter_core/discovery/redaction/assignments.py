"""`password = ...` / `token: ...` assignments: the name must end with a secret keyword and
the value must be a literal."""

from __future__ import annotations

import re
from functools import cache
from typing import Final

from rutter_core.discovery.redaction import upstream
from rutter_core.discovery.redaction.kinds import MARKER_PREFIX
from rutter_core.discovery.redaction.literals import (
    IDENTIFIER,
    is_literal,
    looks_chosen,
    looks_typed,
)


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
@cache
def _secret_name_endings() -> tuple[str, ...]:
    keywords = upstream.keywords()
    return (
        *(
            spelling
            for word in (
                *(w for w in keywords if w.endswith(("key", "pass", "password", "passwd", "pwd"))),
                *(w for w in keywords if w == "secret"),
                "token",
                "passphrase",
                *(
                    f"{prefix}_?key"
                    for prefix in ("access", "secret", "encryption", "signing", "master", "account")
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
# Also a command's `--password VALUE` option (docker login, gpg, many CLIs), and
# `<password>value</password>` (sep `>`) and `<add key="Password" value="…"/>` (the
# `value=` attribute after a `key=` that names a secret: .NET and NuGet configuration).
_KEYWORD_TAIL: Final = (
    r"(?![a-z0-9_.\-])(?:[\"']?\]?(?P<ws0>[ \t]*)"
    r"(?P<sep>:=|=>|={1,3}|!={1,2}|:|>)(?![=:~])(?P<ws>[ \t]*)"
    r"|(?P<attr>[\"'][ \t]+value[ \t]*=[ \t]*)"
    r"|(?P<option>(?:(?<=--password)|(?<=--passwd)|(?<=--passphrase))[ \t]+))"
)
KEYWORD_SCANS: Final = tuple(
    re.compile(f"(?P<kw>{keyword}){_KEYWORD_TAIL}")
    for keyword in (r"ke(?:(?<=toke)n|y)", r"p(?:ass(?:word|wd|phrase)?|wd)", r"secret")
)
LOWER_ANCHORS: Final = ("token", "key", "pass", "pwd", "secret")
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
# An element's text up to its closing tag, on one line.
# One greedy class that stops at `<`: no backtracking; surrounding blanks are trimmed after.
_ELEMENT_TEXT: Final = re.compile(rf"[^<>\r\n]{{1,{_MAX_VALUE}}}(?=</)")
# `secret: db-credentials`, `token: vault-ci-token`: lower-case words joined by `-` (a Kubernetes
# object name, a vault entry) name a secret under `secret`/`token`/`key`; a password's value
# of that shape (`correct-horse-battery-staple`) is a passphrase.
_OBJECT_NAME: Final = re.compile(r"[a-z]+[0-9]{0,2}(?:-[a-z]+[0-9]{0,2}){1,7}")
# An INI/TOML section header (`[client]`, `[database.replica]`) and the lines that may stand
# between it and a `name = value` line of that section.
_SECTION: Final = re.compile(r"[ \t]*\[{1,2}[A-Za-z0-9_. \-\"']{1,128}\]{1,2}[ \t]*\r?")
_SECTION_LINE: Final = re.compile(r"[ \t]*(?:[#;].*|[A-Za-z0-9_.\-]{1,128}[ \t]*[=:].*|)\r?")
_SECTION_REACH: Final = 64  # lines looked back for a section header ...
_SECTION_BYTES: Final = 8192  # ... and characters


def _closes_a_string(text: str, pos: int, quote: str) -> bool:
    """Does the quote at `pos` close a string (or code span) opened earlier on its line?"""
    line = text[text.rfind("\n", 0, pos) + 1 : pos]
    if quote != "'":
        return line.count(quote) % 2 == 1
    # Apostrophes (`don't`) are not quotes.
    quotes = sum(
        1
        for at, char in enumerate(line)
        if char == "'"
        and not (0 < at < len(line) - 1 and line[at - 1].isalnum() and line[at + 1].isalnum())
    )
    return quotes % 2 == 1


# Names ending in `token` that hold a pagination cursor or an idempotency key (API docs are
# full of them), and names of a secret object rather than its value, in any spelling:
# next_token, nextToken and next-token alike.
_CURSOR_TOKENS: Final = tuple(
    spelling
    for word in (
        "next_?token", "next_?forward_?token", "next_?backward_?token", "page_?token",
        "pagination_?token", "continuation_?token", "idempotency_?token", "client_?token",
        "sync_?token", "resume_?token", "change_?token", "update_?token", "cursor_?token",
        "request_?token", "max_?token", "num_?token", "lock_?token",
        # names of a secret object, not its value (Helm's `existingSecret: api-auth`)
        "existing_?secret", "external_?secret", "sealed_?secret", "image_?pull_?secret",
    )
    for spelling in _spellings(word)
)  # fmt: skip
_PASSWORD_NAMES: Final = ("password", "passwd", "pwd", "passphrase", "pass")
_PROSE_AFTER: Final = re.compile(r"[ \t]+[A-Za-z(]")


def _password_in_prose(name: str, text: str, end: int, value: str) -> bool:
    """`password: hunter2 is …`: a word with letters and digits after a password's name, then
    more words. Only password names (`token: gpt4o is the model` stays) and only such words."""
    value = value.rstrip(".")
    return (
        name.endswith(_PASSWORD_NAMES)
        and _PROSE_AFTER.match(text, end) is not None
        and len(value) >= 6
        and any(c.isdigit() for c in value)
        and any(c.isalpha() for c in value)
        and is_literal(value, quoted=False)
    )


_OPTION_VALUE: Final = re.compile(
    r"(?P<q>[\"']?)(?P<v>[^\s\"'-][^\s\"']{0,255})(?P=q)(?![^\s|;&)])"
)


def _option_value(text: str, pos: int) -> tuple[str, int, int] | None:
    """`--password S3cret`: only a value that looks typed (a digit, a symbol or mixed case),
    so `the --password flag` in prose stays."""
    found = _OPTION_VALUE.match(text, pos)
    if found is None:
        return None
    value = found.group("v")
    if not (looks_typed(value) and is_literal(value, quoted=True)):
        return None
    return "login_password", *found.span("v")


def _markup_value(
    text: str, low: str, start: int, name_end: int, pos: int, name: str, *, element: bool
) -> tuple[str, int, int] | None:
    """`<password>value</password>`, or the `value="…"` of `<add key="Password" …/>`."""
    if element:
        span = _element(text, low, start, name_end, pos)
    elif low.endswith(('key="', "key='"), 0, start):
        quoted = _QUOTED.match(text, pos)
        span = quoted.span("v") if quoted is not None and not quoted.group("prefix") else None
    else:
        span = None
    if span is None or not (name == "pass" or name.endswith(_secret_name_endings())):
        return None
    if is_literal(text[span[0] : span[1]], quoted=True):
        return "secret_assignment", *span
    return None


def _argument_context(text: str, start: int) -> bool:
    """Is the name at `start` a keyword argument (after `(` or `,`)?"""
    at = start - 1
    while at >= 0 and text[at] in " \t":
        at -= 1
    return at >= 0 and text[at] in "(,"


def _in_config_section(text: str, start: int) -> bool:
    """Is the name at `start` the first word of a line in an INI/TOML section (a
    `[section]` header above it, with only blank, comment and `name = value` lines between)?
    There `password = S3cretPass` is a setting, not code assigning a variable."""
    line_start = text.rfind("\n", 0, start) + 1
    if text[line_start:start].strip(" \t"):
        return False
    if text.rfind("[", max(0, line_start - _SECTION_BYTES), line_start) < 0:
        return False  # no header within reach: most code and prose stop here
    end = line_start - 1
    for _ in range(_SECTION_REACH):
        if end <= 0:
            return False
        begin = text.rfind("\n", 0, end) + 1
        if line_start - begin > _SECTION_BYTES:
            return False
        if _SECTION.fullmatch(text, begin, end):
            return True
        if not _SECTION_LINE.fullmatch(text, begin, end):
            return False
        end = begin - 1
    return False


def _element(text: str, low: str, start: int, name_end: int, pos: int) -> tuple[int, int] | None:
    """`<password>value</password>`: the text of an element named like a secret."""
    if not start or text[start - 1] != "<":
        return None
    found = _ELEMENT_TEXT.match(text, pos)
    if found is None or not low.startswith(low[start:name_end] + ">", found.end() + 2):
        return None
    value = found.group()
    begin = pos + len(value) - len(value.lstrip(" \t"))
    end = found.end() - (len(value) - len(value.rstrip(" \t")))
    return (begin, end) if end > begin else None


def assignment(
    text: str, low: str, reversed_low: str, found: re.Match[str]
) -> tuple[str, int, int] | None:
    name_end = found.end("kw")
    kw_start = found.start("kw")
    mirror = len(low) - kw_start  # where the keyword starts, counted in the reversed text
    run = _NAME_REVERSED.match(reversed_low, mirror)
    start = kw_start - (run.end() - mirror) if run is not None else kw_start
    if text.endswith(MARKER_PREFIX, 0, start):
        return None  # the kind name inside one of our own markers
    name = low[start:name_end]
    if name.endswith(_CURSOR_TOKENS):
        return None  # `NextToken`, `IdempotencyToken`, `existingSecret`: not credentials
    generic = name == "pass" or name.endswith(_secret_name_endings())
    aws = ("aws" in name and name.endswith(_AWS_NAME_ENDINGS)) or name.endswith(_SECRET_ACCESS_KEY)
    if not (aws or generic):
        return None
    sep, ws0, ws = found.group("sep", "ws0", "ws")
    pos = found.end()
    if sep == ":" and not ws and text[start - 1 : start] == ":":
        return None  # a reStructuredText role: :token:`name`
    if sep is None:  # `--password VALUE` or `key="…Password" value="…"`
        if found.group("option") is not None:
            return _option_value(text, pos)
        return _markup_value(text, low, start, name_end, pos, name, element=False)
    if sep == ">":
        return _markup_value(text, low, start, name_end, pos, name, element=True)
    quoted = _QUOTED.match(text, pos) if text[pos : pos + 1] in _QUOTED_START else None
    code_name = False  # an unquoted bare identifier where code, not config, is likely
    if quoted is not None:
        if "f" in quoted.group("prefix").lower():
            return None  # f-string: a template
        if _closes_a_string(text, pos + len(quoted.group("prefix")), quoted.group("q")):
            return None  # ``with `api_key=`. Custom``: the quote ends the name's code span
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
        # after a colon are not values, except a password-like word in a sentence
        # (`password: hunter2 is the staging DB password.`).
        if sep == ":" and _VALUE_ENDS_LINE.match(text, bare.end()) is None:
            if not _password_in_prose(name, text, bare.end(), value):
                return None
            value = value.rstrip(".")
            value_end = value_start + len(value)
        code_name = (
            IDENTIFIER.fullmatch(value) is not None
            and (
                value != raw  # `secret: clientSecret,` / `token: string;` in code
                or (sep != ":" and bool(ws0 or ws))  # `x = y`
                or _argument_context(text, start)  # `f(password=pw)`
            )
            # `S3cretPass` is typed, not named; under `[client]` `password = x` is a setting
            and not looks_chosen(value)
            and not (sep == "=" and _in_config_section(text, start))
        )
    if "-" in value and _OBJECT_NAME.fullmatch(value) and not name.endswith(_PASSWORD_NAMES):
        return None  # `secret: db-credentials`: the name of a secret object
    if aws and _AWS_SECRET_VALUE.fullmatch(value) and not _HEX.fullmatch(value):
        return "aws_secret_key", value_start, value_end
    if name.endswith("authtoken") and _UUID.fullmatch(value):
        return "npm_token", value_start, value_end  # legacy .npmrc token
    # Variable names carry few digits; `Xk9vQ2mP7rT4` or a hex string is a generated secret.
    if code_name and sum(c.isdigit() for c in value) <= 3:
        return None
    # A backtick value is a code span: `os.environ["X"]` is read like unquoted code.
    literal_quote = quoted is not None and quoted.group("q") != "`"
    if generic and is_literal(value, quoted=literal_quote):
        return "secret_assignment", value_start, value_end
    return None
