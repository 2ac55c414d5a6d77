"""Reading the targets of `rutter context instructions --targets-from FILE|-`: one name per
line (or NUL-separated with `-z`), with git's quoted names read as the names they quote."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Final

from rutter_core.app.instructions import MAX_BATCH_TARGETS
from rutter_core.kernel.errors import UsageError


def read_targets(source: str, *, nul_separated: bool = False) -> tuple[list[int], list[str]]:
    """The targets listed in FILE (or standard input for `-`) and their line numbers (with
    `nul_separated`, their entry numbers).

    One per line, blank lines skipped, a line's `\\r\\n` or `\\n` ending removed and nothing
    else (paths may hold spaces). A line in double quotes is a name as git quotes it (C-style
    escapes, octal bytes: `"caf\\303\\251.py"`), which `git ls-files` prints for any name with a
    byte outside printable ASCII; git quotes every name holding a `"` itself, so no other name
    starts and ends with one. With `nul_separated` the names are split at NUL bytes (`git
    ls-files -z`) and taken as they are."""
    try:
        data = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
    except OSError as exc:
        raise UsageError(
            "usage", f"the --targets-from file cannot be read ({exc.strerror or 'error'})"
        ) from exc
    what = "entry" if nul_separated else "line"
    lines: list[int] = []
    targets: list[str] = []
    for number, line in enumerate(data.split(b"\0" if nul_separated else b"\n"), 1):
        raw = line if nul_separated else line.removesuffix(b"\r")
        if not raw:
            continue
        if not nul_separated and len(raw) >= 2 and raw[:1] == raw[-1:] == b'"':
            unquoted = git_unquote(raw[1:-1])
            if unquoted is None:
                raise UsageError(
                    "usage",
                    f"line {number} of the --targets-from input is quoted but is not a name as "
                    "git quotes it (an unknown escape or a bare quote inside)",
                )
            raw = unquoted
        if b"\0" in raw:
            raise UsageError(
                "usage",
                f"{what} {number} of the --targets-from input holds a NUL byte; use -z for "
                "NUL-separated names",
            )
        try:
            targets.append(raw.decode("utf-8"))
            lines.append(number)
        except UnicodeDecodeError:
            raise UsageError(
                "usage", f"{what} {number} of the --targets-from input is not valid UTF-8"
            ) from None
        if len(targets) > MAX_BATCH_TARGETS:
            raise UsageError(
                "usage",
                f"the --targets-from input lists more than {MAX_BATCH_TARGETS} targets; split it",
            )
    return lines, targets


GIT_ESCAPES: Final = {
    ord("a"): 0x07,
    ord("b"): 0x08,
    ord("t"): 0x09,
    ord("n"): 0x0A,
    ord("v"): 0x0B,
    ord("f"): 0x0C,
    ord("r"): 0x0D,
    ord('"'): 0x22,
    ord("\\"): 0x5C,
}
"""The one-letter escapes git writes in a quoted name (its `quote_c_style`)."""


def git_unquote(body: bytes) -> bytes | None:
    """The bytes of a name git quoted, from what is between its quotes; None when `body` is not
    something git writes (an unknown escape, an octal escape that is not three digits, a bare
    quote)."""
    out = bytearray()
    index = 0
    while index < len(body):
        byte = body[index]
        if byte == 0x22:
            return None
        if byte != 0x5C:
            out.append(byte)
            index += 1
            continue
        escape = body[index + 1 : index + 2]
        if not escape:
            return None
        if escape[0] in b"0123":
            digits = body[index + 1 : index + 4]
            if len(digits) != 3 or any(d not in b"01234567" for d in digits):
                return None
            out.append(int(digits, 8))
            index += 4
            continue
        mapped = GIT_ESCAPES.get(escape[0])
        if mapped is None:
            return None
        out.append(mapped)
        index += 2
    return bytes(out)
