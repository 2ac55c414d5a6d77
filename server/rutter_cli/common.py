"""What every group of CLI commands shares: the `--json` flag, the global settings, the store
each command opens, and the two ways of printing (one JSON document, or tables for people)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Final

import typer

from rutter_cli.flags import hide_flag_types

if TYPE_CHECKING:
    from rich.console import Console

    from rutter_core.app.facade import Rutter
    from rutter_core.kernel.errors import RutterError
    from rutter_core.store import Store

hide_flag_types()  # every command's help: `--json`, not `--json <bool>`

ACTOR: Final = "cli"
"""Who every change made from the command line is recorded as (never taken from input)."""

JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]
WorkspaceOption = Annotated[
    str | None,
    typer.Option(
        "--workspace",
        help="Workspace ID (default: the registered workspace containing the current directory).",
    ),
]


@dataclass(frozen=True)
class CliSettings:
    """Global options (`rutter --database-url URL …`), kept on the root context."""

    database_url: str | None


def settings_of(ctx: typer.Context) -> CliSettings:
    settings: CliSettings = ctx.find_root().obj
    return settings


@contextmanager
def cli_app(ctx: typer.Context, *, read_only: bool = False) -> Iterator[Rutter]:
    """The app facade over the store the global options name: what every command calls.
    `read_only`: the command only reads, so a store that does not exist yet is not created
    for it (it answers as from an empty store). The store is closed after the command. A
    failure to find something names the store that was searched, since the wrong store (an
    agent started with another environment) is the usual cause."""
    from rutter_core.app.facade import open_rutter
    from rutter_core.kernel.errors import RutterError

    rutter = open_rutter(settings_of(ctx).database_url, os.environ, create=not read_only)
    try:
        yield rutter
    except RutterError as error:
        name_store(error, rutter.store)
        raise
    finally:
        rutter.store.close()


STORE_SYMPTOMS: Final = frozenset({"workspace_required", "not_registered"})
"""Errors whose usual cause is a command reading another store than the person thinks."""


def name_store(error: RutterError, store: Store) -> None:
    """Add the store that was searched (`details.store`, and the message) to an error that a
    workspace is not in it, or that anything is not in a store that does not exist yet."""
    from rutter_core.kernel.errors import ErrorCategory

    in_a_missing_store = store.missing is not None and error.category is ErrorCategory.NOT_FOUND
    if error.code not in STORE_SYMPTOMS and not in_a_missing_store:
        return
    where = store.missing or store.display_url
    error.details = {**error.details, "store": where}
    missing = ", which does not exist yet" if store.missing else ""
    error.message = f"{error.message} (store: {where}{missing})"


def print_json(document: Any) -> None:
    sys.stdout.write(json.dumps(document, ensure_ascii=False, indent=2) + "\n")


def emit(result: Any, *, as_json: bool, for_people: Callable[[Console], object]) -> None:
    """A command's one output: with `--json`, `result`'s document on stdout (a result model's
    `to_json()`, or the document itself); else `for_people` renders it on a console made for
    people (`make_console`)."""
    if as_json:
        to_json = getattr(result, "to_json", None)
        print_json(to_json() if callable(to_json) else result)
        return
    for_people(make_console())


def make_console() -> Console:
    """Tables that fit the terminal; plain text that depends on no width off a terminal."""
    from rutter_cli.console import make_console as console_for_people

    return console_for_people()
