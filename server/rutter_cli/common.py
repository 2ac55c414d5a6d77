"""What every group of CLI commands shares: the `--json` flag, the global settings, the store
each command opens, and the two ways of printing (one JSON document, or tables for people)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Final

import typer

from rutter_cli.flags import hide_flag_types

if TYPE_CHECKING:
    from rich.console import Console

    from rutter_core.app.facade import Rutter
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
def cli_app(ctx: typer.Context) -> Iterator[Rutter]:
    """The app facade over the store the global options name: what every command calls."""
    from rutter_core.app.facade import Rutter

    with cli_store(ctx) as store:
        yield Rutter(store)


@contextmanager
def cli_store(ctx: typer.Context) -> Iterator[Store]:
    """The store the global options and the environment name, closed after the command."""
    from rutter_core.store import open_store, resolve_database_url

    url = resolve_database_url(database_url=settings_of(ctx).database_url, env=os.environ)
    store = open_store(url)
    try:
        yield store
    finally:
        store.close()


def print_json(document: Any) -> None:
    sys.stdout.write(json.dumps(document, ensure_ascii=False, indent=2) + "\n")


def make_console() -> Console:
    """Tables that fit the terminal; plain text that depends on no width off a terminal."""
    from rutter_cli.console import make_console as console_for_people

    return console_for_people()
