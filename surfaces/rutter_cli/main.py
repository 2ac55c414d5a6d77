"""The `rutter` command line: parses arguments, calls rutter_core, prints JSON or tables."""

from __future__ import annotations

import sys
import traceback
from collections.abc import Sequence
from typing import Annotated

import typer

from rutter_cli.common import (
    CliSettings,
    settings_of,
)
from rutter_cli.errors import EXIT_CODES, report
from rutter_cli.instructions import context_instructions
from rutter_cli.memory import memory_app
from rutter_cli.pins import pin_app
from rutter_cli.runs import run_app
from rutter_cli.session import session_app
from rutter_cli.session_branches import register as register_session_branches
from rutter_cli.session_import import register as register_session_import
from rutter_cli.workspace import workspace_app
from rutter_core.kernel.errors import RutterError, UsageError

app = typer.Typer(
    name="rutter",
    help="Context continuity for AI coding agents: which instructions apply, and why.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
context_app = typer.Typer(help="Inspect the context agents are given.", no_args_is_help=True)
app.add_typer(workspace_app, name="workspace")
app.add_typer(context_app, name="context")
context_app.add_typer(memory_app, name="memory")
context_app.add_typer(pin_app, name="pin")
app.add_typer(run_app, name="run")
app.add_typer(session_app, name="session")
register_session_branches(session_app)
register_session_import(session_app)


@app.callback()
def _root(
    ctx: typer.Context,
    database_url: Annotated[
        str | None,
        typer.Option(
            "--database-url",
            help="SQLAlchemy URL of the store (default: $RUTTER_DATABASE_URL, else "
            "SQLite in $RUTTER_HOME).",
        ),
    ] = None,
) -> None:
    ctx.obj = CliSettings(database_url=database_url)


# -- context ----------------------------------------------------------------------------------


context_app.command("instructions")(context_instructions)


# -- language server --------------------------------------------------------------------------


@app.command("serve")
def serve_command(
    ctx: typer.Context,
    tcp: Annotated[
        str | None,
        typer.Option(
            "--tcp", metavar="HOST:PORT", help="Listen on TCP instead of stdio (debugging)."
        ),
    ] = None,
) -> None:
    """Run the language server (LSP over stdio; the same as `rutter-lsp`)."""
    from rutter_lsp.serve import serve

    raise SystemExit(serve(tcp=tcp, database_url=settings_of(ctx).database_url))


# -- MCP server --------------------------------------------------------------------------------


@app.command("mcp")
def mcp_command(ctx: typer.Context) -> None:
    """Serve the Model Context Protocol over stdio, for agents (actor: mcp)."""
    from rutter_mcp.server import serve

    raise SystemExit(serve(database_url=settings_of(ctx).database_url))


# -- entry point ------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    as_json = "--json" in args
    command = typer.main.get_command(app)
    try:
        result = command.main(args=args, prog_name="rutter", standalone_mode=False)
    except RutterError as error:
        return report(error, as_json=as_json)
    except typer.TyperException as exc:
        # Typer's own parse errors (its click exceptions are private; use the public base).
        context = getattr(exc, "ctx", None)
        if type(exc).__name__ == "NoArgsIsHelpError":
            return EXIT_CODES[UsageError.category]  # typer has printed the help already
        hint = f"\n{context.get_usage()}" if context is not None else ""
        return report(UsageError("usage", f"{exc.format_message()}{hint}"), as_json=as_json)
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:
        sys.stderr.write("rutter: aborted\n")
        return 1
    except BrokenPipeError:
        return 1
    except Exception as exc:  # the last line of defence: typed JSON even for bugs
        traceback.print_exc(file=sys.stderr)
        return report(
            RutterError("internal", f"unexpected failure: {type(exc).__name__}: {exc}"),
            as_json=as_json,
        )
    # Outside standalone mode an Exit raised by a command comes back as its code.
    return result if isinstance(result, int) else 0
