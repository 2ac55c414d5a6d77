"""Where the core error hierarchy meets HTTP: one status per error, the error document of
docs/reference/errors.md as the body, mapped once, here.

The HTTP-only failures (no bearer, the wrong bearer, a body too large, malformed JSON, an
unknown route) are `RutterError`s too, so every response that is not a success has the same
shape. Their messages say what is wrong and never repeat what the client sent.
"""

from __future__ import annotations

import re
from typing import Any, Final

from pydantic import ValidationError

from rutter_core.kernel.errors import ErrorCategory, RutterError, UsageError

CATEGORY_STATUS: Final[dict[ErrorCategory, int]] = {
    ErrorCategory.INTERNAL: 500,
    ErrorCategory.USAGE: 400,
    ErrorCategory.REJECTED: 422,
    ErrorCategory.CONFLICT: 409,
    ErrorCategory.NOT_FOUND: 404,
}

CODE_STATUS: Final[dict[str, int]] = {
    "unauthorized": 401,
    "forbidden": 403,
    "body_too_large": 413,
    "unsupported_media_type": 415,
    "method_not_allowed": 405,
    "route_not_found": 404,
    "invalid_params": 422,
    # A history handle's source is deleted, disabled, expired or invisible: it existed.
    "gone": 410,
    # The summarizer (a program the server runs) gave no usable summary: a bad gateway.
    "summarizer_failed": 502,
    # The store is busy past its timeout (another writer): try again, not a server fault.
    "store_busy": 503,
}
"""Codes whose status is not their category's."""


class HttpError(RutterError):
    """A failure of the HTTP layer itself (its status is in `CODE_STATUS`)."""

    category = ErrorCategory.USAGE


def status_of(error: RutterError) -> int:
    return CODE_STATUS.get(error.code, CATEGORY_STATUS[error.category])


def error_document(error: RutterError) -> dict[str, Any]:
    return {"error": error.to_json()}


def unauthorized() -> HttpError:
    return HttpError(
        "unauthorized",
        "a valid bearer token is required (Authorization: Bearer <secret>)",
    )


def forbidden() -> HttpError:
    return HttpError("forbidden", "this route changes state and needs a control token")


def body_too_large(limit: int) -> HttpError:
    return HttpError(
        "body_too_large", f"the request body is over {limit} bytes", details={"limit": limit}
    )


def invalid_json(why: str) -> HttpError:
    """`why` is one of our own fixed phrases, never the parser's text (which quotes input)."""
    return HttpError("invalid_json", f"the request body is not valid JSON: {why}")


def invalid_params(error: ValidationError, known: frozenset[str]) -> UsageError:
    """The params did not validate: each problem's place and kind, never the value sent, and
    an unknown field only as unknown (its name is the client's text)."""
    problems: list[dict[str, Any]] = []
    for each in error.errors(include_url=False, include_input=False, include_context=False):
        loc = [part for part in each["loc"] if isinstance(part, str | int)]
        if each["type"] == "extra_forbidden" or (loc and loc[0] not in known):
            problems.append({"field": None, "type": "unknown_field"})
            continue
        problems.append(
            {"field": ".".join(str(part) for part in loc) or None, "type": each["type"]}
        )
    return UsageError(
        "invalid_params",
        "the request's fields do not match the operation's schema",
        details={"problems": problems[:20]},
    )


_SAFE: Final = re.compile(
    r"[a-z]{2,4}_[0-9A-HJKMNP-TV-Z]{26}"  # a rutter ID (prefixed ULID)
    r"|[0-9a-f]{64}"  # a fingerprint
    r"|[a-z0-9][a-z0-9._-]{0,63}"  # a workspace ID (its own charset)
)
"""What a client sends that an error may name: identifiers whose form excludes free text."""

GENERIC: Final[dict[ErrorCategory, str]] = {
    ErrorCategory.INTERNAL: "the request failed",
    ErrorCategory.USAGE: "the request cannot be used as sent",
    ErrorCategory.REJECTED: "the request's input was refused",
    ErrorCategory.CONFLICT: "the record changed since it was read, or the request conflicts "
    "with what is stored: read it again and retry",
    ErrorCategory.NOT_FOUND: "no such record",
}


def sent_texts(*values: Any) -> set[str]:
    """Every string in what a client sent (keys included), but identifiers of a safe form."""
    found: set[str] = set()
    stack = list(values)
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if item.strip() and _SAFE.fullmatch(item) is None:
                found.add(item)
        elif isinstance(item, dict):
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
    details and hint are dropped (null). Core messages quote values to help a person at a
    terminal; over HTTP the client already has what it sent."""
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
