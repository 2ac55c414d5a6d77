"""The root of the `rutter` command tree in typer: its global options and the commands that are
not groups (`serve`, `mcp`). Imported only once a command runs (`rutter_cli.main.build_app`);
`rutter --help` is printed without typer (`rutter_cli.main.root_help`)."""

from __future__ import annotations

from typing import Annotated

import typer

from rutter_cli.common import CliSettings, settings_of
from rutter_cli.main import DATABASE_URL_HELP, VERSION_HELP, version_line

# The root's commands are named, with their help, in `rutter_cli.main.COMMANDS` (the root's help
# lists them without importing this module); the functions are here.


def _print_version(wanted: bool) -> None:
    if wanted:
        typer.echo(version_line())
        raise typer.Exit(0)


def root_options(
    ctx: typer.Context,
    database_url: Annotated[
        str | None,
        typer.Option("--database-url", help=DATABASE_URL_HELP),
    ] = None,
    version: Annotated[
        bool,
        typer.Option("--version", help=VERSION_HELP, is_eager=True, callback=_print_version),
    ] = False,
) -> None:
    ctx.obj = CliSettings(database_url=database_url)


# -- language server --------------------------------------------------------------------------


def serve_command(
    ctx: typer.Context,
    tcp: Annotated[
        str | None,
        typer.Option(
            "--tcp", metavar="HOST:PORT", help="Listen on TCP instead of stdio (debugging)."
        ),
    ] = None,
) -> None:
    from rutter_lsp.serve import serve

    raise SystemExit(serve(tcp=tcp, database_url=settings_of(ctx).database_url))


# -- MCP server --------------------------------------------------------------------------------


def mcp_command(ctx: typer.Context) -> None:
    from rutter_mcp.server import serve

    raise SystemExit(serve(database_url=settings_of(ctx).database_url))
