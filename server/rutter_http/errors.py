"""Where the core error hierarchy meets HTTP: one status per error, the error document of
docs/reference/errors.md as the body, mapped once, here.

The HTTP-only failures (no bearer, the wrong bearer, a body too large, malformed JSON, an
unknown route) are `RutterError`s too, so every response that is not a success has the same
shape. Their messages say what is wrong and never repeat what the client sent.
"""

from __future__ import annotations

from typing import Final

from rutter_core.kernel.errors import ErrorCategory, Hint, RutterError

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


def host_not_allowed() -> HttpError:
    """The `Host` header names another server: what a page whose name was rebound to this
    address sends (DNS rebinding). Never echoes the header."""
    return HttpError(
        "host_not_allowed",
        "the Host header does not name this server: only its address, localhost on loopback, "
        "and the names its operator allows are served",
        hint=Hint("allow_host"),
    )
