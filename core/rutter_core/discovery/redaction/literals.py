"""Is an assigned value a literal secret, or a reference, template or placeholder?"""

from __future__ import annotations

import hashlib
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
        # settings that are words, not secrets (`id-token: write` in GitHub Actions)
        "read", "write", "readwrite", "readonly", "admin", "enabled", "disabled", "enable",
        "disable", "auto", "inherit", "public", "private", "internal", "bearer", "basic",
        "oauth", "oauth2", "header", "query", "cookie", "env", "file", "vault", "prompt", "ask",
        "ignore", "skip", "always", "never", "random", "generated", "unused", "ignored",
        "notneeded", "notrequired", "notused", "na", "anything", "whatever", "ollama",
        "lmstudio", "sknokeyrequired", "nokey", "local", "missing", "invalid", "expired",
        "revoked", "error", "mismatch", "unknown", "sktest", "testkey", "testtoken", "seconds",
        "minutes", "hours", "days", "weeks",
    }
)  # fmt: skip
_PLACEHOLDER_SHAPE: Final = re.compile(
    r"^(?:your|insert|enter|paste|put|add)|^my[-_ .]|[-_ .]here$"
    r"|^(?:change|replace)[-_ .]?(?:me|it|this)\b|example|placeholder|dummy|redacted"
    r"|^not[-_ .]?(?:needed|required|used|set|a[-_ .]?real)|^(?:sk-)?no[-_ .]?key"
    r"|^(?:sk[-_])?(?:test|fake|mock|dummy|demo)(?:[-_ .]?(?:key|token|secret|password|value))?$"
    r"|^\[.*\]$|^(?:arn|urn):"
)
# References to a secret manager's entry, and values a tool keeps encrypted (SOPS); matched at
# the start only (a search would try every alternative at every character).
_REFERENCE: Final = re.compile(
    r"(?:vault|op|bw|ssm|sm|secretsmanager|keyvault|azurekeyvault|gcpsm|k8s|doppler"
    r"|infisical|sops|secretref|keyring):|enc\[|projects/[^/]+/secrets/"
)
# `token: v2.3.1-rc4`, `key: 1.20.0+build.7`: a version (semantic versioning's shape), not a
# credential.
_VERSION: Final = re.compile(
    r"[vV]?[0-9]+(?:\.[0-9]+){1,3}(?:-[0-9A-Za-z.-]{1,40})?(?:\+[0-9A-Za-z.-]{1,40})?"
)
# A digit inside a word, between letters, in a value that mixes cases (`S3cretPass`,
# `P4ssw0rd`): how people write passwords, not how names are spelled (`oauth2Token`, `s3_key`).
_LEET: Final = re.compile(r"[A-Za-z][0-9]+[a-z]{2}")
MASK: Final = re.compile(r"[xX*•·.#_\-]+")
_NON_ALNUM: Final = re.compile(r"[^a-z0-9]+")
_LETTER: Final = re.compile(r"[A-Za-z]")
_NAME_OF_SECRET: Final = re.compile(
    r"[a-z0-9_.\-]*(?:password|passwd|passphrase|pwd|pass|secret|secrets|token|key)"
)
# `HEADER.PAYLOAD.SIGNATURE`, `MY_TOKEN`: an upper-case name without digits, not a value.
_SHOUTED_NAME: Final = re.compile(r"[A-Z][A-Z_.\-]{3,}")
# `'Password used to generate key'`: four or more words of prose, one of them a small word.
_SENTENCE: Final = re.compile(r"[A-Za-z]+(?:[ \t]+[A-Za-z]+){3,}[.!]?")
_SMALL_WORD: Final = re.compile(r"(?i)\b(?:the|a|an|to|for|of|is|are|used|your|here|with|from)\b")
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


def looks_typed(password: str) -> bool:
    """A digit, a symbol other than `._-`, or mixed case: a chosen or generated password."""
    return any(not c.isalpha() and c not in "._-" for c in password) or (
        password.lower() != password and password.upper() != password
    )


def looks_chosen(value: str) -> bool:
    """A password someone chose: a digit inside a word, in a value that mixes cases
    (`S3cretPass` ends in `pass` but names nothing)."""
    return (
        _LEET.search(value) is not None
        and any(c.isupper() for c in value)
        and any(c.islower() for c in value)
    )


def is_literal(value: str, *, quoted: bool) -> bool:
    """Is this assigned value a literal secret rather than a reference or a placeholder?"""
    value = value.strip()
    if len(value) < 4 or _LETTER.search(value) is None:
        return False
    if _SHOUTED_NAME.fullmatch(value) or (_SENTENCE.fullmatch(value) and _SMALL_WORD.search(value)):
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
        or _REFERENCE.match(lowered)
        or (len(value) <= 128 and _NAME_OF_SECRET.fullmatch(lowered) and not looks_chosen(value))
        or _VERSION.fullmatch(value)
        or _PATH_LIKE.match(value)
    ):
        return False
    if quoted:
        return True
    # Unquoted: YAML tags/anchors/aliases, decorators, calls, indexing, attribute paths.
    # A TypeScript non-null assertion (`process.env.API_KEY!`) is still a reference.
    bare = value.rstrip("!")
    return not (
        value[0] in "!&*@"
        or "(" in value
        or "[" in value
        or _ATTRIBUTE_PATH.fullmatch(bare)
        or (bare != value and IDENTIFIER.fullmatch(bare))
    )


# Values published in vendors' documentation as examples (AWS's `AKIAIOSFODNN7EXAMPLE` and its
# secret key, jwt.io's sample token, Stripe's documented test key): quoting them is not a leak.
# Kept as SHA-256 digests so no key-shaped string sits in the source.
_DOCUMENTED_EXAMPLES: Final = frozenset(
    {
        "7f75367e7881255134e1375e723d1dea8ad5f6a4fdb79d938df1f1754a830606",  # jwt.io sample
        "2cafc0970149a84f3b9e62eaf169f36f59907a3b3e31f7b82e68c69cd27f7326",  # Stripe docs
        "f2d6ca16515033e5dce14eba840b979d27b5cbae24bb3e5bf484339667f86397",  # Stripe docs, older
    }
)
# A token whose body is a mask (`ghp_xxxxxxxx…`, `AKIA0000000000000000`: one character eight
# times in a row, which a random token of these lengths practically never has) or says EXAMPLE.
_MASKED_TOKEN: Final = re.compile(r"(.)\1{7,}|example", re.IGNORECASE | re.DOTALL)


def is_documented_example(value: str) -> bool:
    """A vendor's published example value or a masked token: shown in docs, grants nothing."""
    if _MASKED_TOKEN.search(value):
        return True
    return (
        hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest() in _DOCUMENTED_EXAMPLES
    )
