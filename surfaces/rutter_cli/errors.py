"""Where the core error hierarchy meets the command line: exit codes, the error document, and
the CLI's wording of structured hints, all in one place."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping

from rutter_cli.common import print_json
from rutter_core.kernel.errors import ErrorCategory, Hint, HintValue, RutterError

EXIT_OK = 0
EXIT_CODES: dict[ErrorCategory, int] = {
    ErrorCategory.INTERNAL: 1,
    ErrorCategory.USAGE: 2,
    ErrorCategory.REJECTED: 3,
    ErrorCategory.CONFLICT: 4,
    ErrorCategory.NOT_FOUND: 5,
}

HintWording = Callable[[Mapping[str, HintValue]], str]
HINT_WORDING: dict[str, HintWording] = {
    # -- runs
    "find_run": lambda _: "see `rutter run list --all` for the runs in the store",
    "start_or_find_thread": lambda _: (
        "leave out --thread to start a new one, or take a thread_id from `rutter run list --all`"
    ),
    "copy_fingerprints": lambda params: (
        f"copy it from `rutter context instructions --run {params['run_id']}`"
    ),
    "review_run_again": lambda params: (
        f"review again with `rutter context instructions --run {params['run_id']}` and confirm "
        "what it shows"
    ),
}
"""How the CLI words each `Hint.fix` (naming its own flags and commands)."""


def worded(hint: Hint | None) -> str | None:
    if hint is None:
        return None
    wording = HINT_WORDING.get(hint.fix)
    return None if wording is None else wording(hint.params)


def message_of(error: RutterError) -> str:
    """The surface-neutral message, followed by what to do on the command line."""
    advice = worded(error.hint)
    return error.message if advice is None else f"{error.message}; {advice}"


def report(error: RutterError, *, as_json: bool) -> int:
    """Print `error` (the document on stdout with `--json`, the message on stderr) and return
    the exit code."""
    message = message_of(error)
    if as_json:
        document = error.to_json()
        document["message"] = message
        print_json({"error": document})
    sys.stderr.write(f"rutter: error[{error.code}]: {message}\n")
    return EXIT_CODES[error.category]
