"""Which numbers a client may send: integers the store can hold (64-bit, signed) and finite
floats, the one rule of every surface that takes JSON (HTTP bodies, MCP arguments). A number
out of range is refused with a typed error that names the range, never the number (Python
refuses to convert an integer of more than 4,300 digits at all; SQLite one past 64 bits)."""

from __future__ import annotations

import math
from typing import Any, Final

from rutter_core.kernel.errors import UsageError

MIN_INTEGER: Final = -(2**63)
MAX_INTEGER: Final = 2**63 - 1
NUMBER_OUT_OF_RANGE: Final = "number_out_of_range"


def number_in_range(value: int | float) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    return MIN_INTEGER <= value <= MAX_INTEGER


def numbers_in_range(value: Any) -> bool:
    """Whether every number in parsed JSON (dicts and lists, walked without recursion) is in
    range; booleans are not numbers here."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
        elif (
            isinstance(item, int | float)
            and not isinstance(item, bool)
            and not number_in_range(item)
        ):
            return False
    return True


class OutOfRange(Exception):
    """Raised by the parse hooks below on a number out of range."""


def parse_integer(text: str) -> int:
    """`json.loads`' `parse_int`: its digits are counted before they are converted (Python
    refuses more than 4,300 with a `ValueError` that quotes the count)."""
    if len(text.lstrip("-")) > len(str(MAX_INTEGER)):
        raise OutOfRange
    value = int(text)
    if not number_in_range(value):
        raise OutOfRange
    return value


def parse_float(text: str) -> float:
    """`json.loads`' `parse_float`: `1e400` would read as infinity."""
    value = float(text)
    if not number_in_range(value):
        raise OutOfRange
    return value


def number_out_of_range() -> UsageError:
    return UsageError(
        NUMBER_OUT_OF_RANGE,
        "a number sent is out of range: integers are 64-bit, floats finite",
        details={"min_integer": MIN_INTEGER, "max_integer": MAX_INTEGER},
    )
