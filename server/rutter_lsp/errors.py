"""Where the core error hierarchy meets the surfaces: mapped once, here."""

from __future__ import annotations

from rutter_core.errors import ErrorCategory

EXIT_OK = 0
EXIT_CODES: dict[ErrorCategory, int] = {
    ErrorCategory.INTERNAL: 1,
    ErrorCategory.USAGE: 2,
    ErrorCategory.REJECTED: 3,
    ErrorCategory.CONFLICT: 4,
    ErrorCategory.NOT_FOUND: 5,
}
