"""One no-echo rule for every surface that answers a client (HTTP, MCP, the language server):
an error names the field and the rule, never what was sent. Core messages quote values to help
a person at a terminal; a client already has what it sent, and what it sent may be a secret
or text meant to be shown to someone (a log, a dashboard, a browser).

`sent_texts` gathers the strings a client sent; `without_echo` is an error document with none
of them in it.
"""

from __future__ import annotations

import re
from typing import Any, Final

from rutter_core.kernel.errors import ErrorCategory, RutterError

_SAFE: Final = re.compile(
    r"[a-z]{2,4}_[0-9A-HJKMNP-TV-Z]{26}"  # a rutter ID (prefixed ULID)
    r"|[0-9a-f]{64}"  # a fingerprint
    r"|[a-z0-9][a-z0-9._-]{0,63}"  # a workspace ID (its own charset)
)
"""What a client sends that an error may name: identifiers whose form excludes free text."""

_SEPARATORS: Final = re.compile(r"[/\\]+")

GENERIC: Final[dict[ErrorCategory, str]] = {
    ErrorCategory.INTERNAL: "the request failed",
    ErrorCategory.USAGE: "the request cannot be used as sent",
    ErrorCategory.REJECTED: "the request's input was refused",
    ErrorCategory.CONFLICT: "the record changed since it was read, or the request conflicts "
    "with what is stored: read it again and retry",
    ErrorCategory.NOT_FOUND: "no such record",
}


def sent_texts(*values: Any, keys: bool = True) -> set[str]:
    """Every string in what a client sent (its objects' keys too, unless `keys` is false), but
    identifiers of a safe form."""
    found: set[str] = set()
    stack = list(values)
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if item.strip() and _SAFE.fullmatch(item) is None:
                found.add(item)
            if "/" in item or "\\" in item:  # a path: an error may name one part of it
                stack.extend(part for part in _SEPARATORS.split(item) if part.strip(". "))
        elif isinstance(item, dict):
            if keys:
                stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return found


def _echoes(text: str, sent: set[str]) -> bool:
    """Whether `text` holds one of `sent`, as sent or as Python quotes it (`{value!r}` in a
    core message escapes a control character: `'a\\x00b'`)."""
    for each in sent:
        for form in {each, repr(each)[1:-1]}:
            if len(form) >= 3 and form in text:
                return True
            if f"'{form}'" in text or f'"{form}"' in text or text == form:
                return True
    return False


def _clean(value: Any, sent: set[str]) -> Any:
    if isinstance(value, str):
        return None if _echoes(value, sent) else value
    if isinstance(value, dict):
        return {k: _clean(v, sent) for k, v in value.items() if not _echoes(str(k), sent)}
    if isinstance(value, list | tuple):
        return [_clean(v, sent) for v in value]
    return value


def without_echo(error: RutterError, sent: set[str]) -> dict[str, Any]:
    """The error document of `error`, with nothing the client sent in it: a message that
    repeats any of it is replaced by its category's generic one, and such strings in the path,
    details and hint are dropped (null)."""
    body = error.to_json()
    if not sent:
        return {"error": body}
    if _echoes(body["message"], sent):
        body["message"] = GENERIC[error.category]
    if "path" in body and _echoes(body["path"], sent):
        del body["path"]
    for key in ("details", "hint"):
        if key in body:
            body[key] = _clean(body[key], sent)
    if "hint" in body and body["hint"].get("fix") is None:
        del body["hint"]
    return {"error": body}
