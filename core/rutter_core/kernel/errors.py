"""The one error hierarchy. Surfaces map `category` to exit codes / LSP errors once.

Messages are surface-neutral: they say what is wrong, never which flag or field to use. What
the person can do next travels as a structured `Hint` (`{"fix": "choose_workspace"}`), and each
surface words it once (the CLI names its flag, the editor its command, HTTP its field).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar

HintValue = str | int | None


@dataclass(frozen=True, slots=True)
class Hint:
    """What to do next, as data: `fix` names the remedy, `params` what it needs (IDs, versions,
    fingerprints; never user-written text)."""

    fix: str
    params: Mapping[str, HintValue] = field(default_factory=dict)

    def to_json(self) -> dict[str, HintValue]:
        return {"fix": self.fix, **self.params}


class ErrorCategory(Enum):
    INTERNAL = "internal"
    USAGE = "usage"
    REJECTED = "rejected"
    CONFLICT = "conflict"
    NOT_FOUND = "not_found"


class RutterError(Exception):
    """A typed, user-facing failure: a stable `code`, a message that says what to do."""

    category: ClassVar[ErrorCategory] = ErrorCategory.INTERNAL

    def __init__(
        self,
        code: str,
        message: str,
        *,
        path: str | None = None,
        details: dict[str, Any] | None = None,
        hint: Hint | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.path = path
        self.details = details or {}
        self.hint = hint

    def to_json(self) -> dict[str, Any]:
        """The error document (docs/reference/errors.md), plus the structured `hint` when there is
        one; surfaces that word hints for people put the wording in their own message."""
        body: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.path is not None:
            body["path"] = self.path
        if self.details:
            body["details"] = self.details
        if self.hint is not None:
            body["hint"] = self.hint.to_json()
        return body

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r})"


class UsageError(RutterError):
    category = ErrorCategory.USAGE


class RejectedError(RutterError):
    """Validation failures, fail-closed discovery, policy refusals."""

    category = ErrorCategory.REJECTED


class ConflictError(RutterError):
    """Stale versions or fingerprints: re-read and try again."""

    category = ErrorCategory.CONFLICT


class NotFoundError(RutterError):
    category = ErrorCategory.NOT_FOUND


class StoreError(RutterError):
    """The store cannot be used (e.g. a recorded migration was altered)."""

    category = ErrorCategory.INTERNAL


class DiscoveryError(RejectedError):
    """Discovery failed closed: nothing is delivered."""


class DiscoveryNotFoundError(NotFoundError):
    """Discovery failed because its workspace or target directory does not exist."""


# Every discovery error code from docs/reference/discovery.md and the class that carries it.
DISCOVERY_ERROR_CODES: dict[str, type[RutterError]] = {
    "not_registered": DiscoveryNotFoundError,
    "not_found": DiscoveryNotFoundError,
    "invalid_target": DiscoveryError,
    "symlink": DiscoveryError,
    "not_regular_file": DiscoveryError,
    "invalid_utf8": DiscoveryError,
    "nul_byte": DiscoveryError,
    "empty_source": DiscoveryError,
    "too_large": DiscoveryError,
    "total_too_large": DiscoveryError,
    "too_many_files": DiscoveryError,
    "too_deep": DiscoveryError,
    "invalid_ignore": DiscoveryError,
    "concurrent_modification": DiscoveryError,
    # The OS refused a read (permissions, I/O error). Fails closed too.
    "unreadable": DiscoveryError,
    # A rules entry named with a control character (a newline would forge
    # lines wherever the name is shown). Fails closed too.
    "invalid_name": DiscoveryError,
}


def discovery_error(
    code: str,
    message: str,
    *,
    path: str | None = None,
    details: dict[str, Any] | None = None,
    hint: Hint | None = None,
) -> RutterError:
    """Build the typed error for a discovery failure code."""
    return DISCOVERY_ERROR_CODES[code](code, message, path=path, details=details, hint=hint)
