"""Is an assigned value a literal secret, or a reference, template or placeholder?"""

from __future__ import annotations

import re
from typing import Final

from rutter_core.discovery.redaction.kinds import MARKER_PREFIX

PLACEHOLDER_WORDS: Final = frozenset(
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
MASK: Final = re.compile(r"[xX*•·.#_\-]+")
_NON_ALNUM: Final = re.compile(r"[^a-z0-9]+")
_LETTER: Final = re.compile(r"[A-Za-z]")
_NAME_OF_SECRET: Final = re.compile(
    r"[a-z0-9_.\-]*(?:password|passwd|passphrase|pwd|pass|secret|secrets|token|key)"
)
IDENTIFIER: Final = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_ATTRIBUTE_PATH: Final = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::|->)[A-Za-z_$][\w$]*)+")
_PATH_LIKE: Final = re.compile(r"(?:~|\.{1,2})?/|[A-Za-z]:[\\/]|file:")


def normalized(value: str) -> str:
    return _NON_ALNUM.sub("", value.lower())


def is_template(value: str) -> bool:
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


def is_literal(value: str, *, quoted: bool) -> bool:
    """Is this assigned value a literal secret rather than a reference or a placeholder?"""
    value = value.strip()
    if len(value) < 4 or _LETTER.search(value) is None:
        return False
    lowered = value.lower()
    if (
        MARKER_PREFIX.lower() in lowered
        or is_template(value)
        or "..." in value
        or "…" in value
        or "://" in value
        or MASK.fullmatch(value)
        or normalized(value) in PLACEHOLDER_WORDS
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
