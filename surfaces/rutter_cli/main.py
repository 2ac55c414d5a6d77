"""The `rutter` command line: parses arguments, calls rutter_core, prints JSON or tables."""

from __future__ import annotations

import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer

from rutter_cli.common import (
    CliSettings,
    JsonFlag,
    cli_store,
    make_console,
    print_json,
    settings_of,
)
from rutter_cli.errors import EXIT_CODES, report
from rutter_cli.memory import memory_app
from rutter_cli.render import render_snapshot
from rutter_cli.runs import check_instructions_options, run_app, run_instructions
from rutter_cli.workspace import workspace_app
from rutter_core.app.instructions import effective_instructions
from rutter_core.discovery.fsread import FileReader
from rutter_core.kernel.errors import RutterError, UsageError
from rutter_core.workspaces.service import infer_workspace

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
app.add_typer(run_app, name="run")


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


@context_app.command("instructions")
def context_instructions(
    ctx: typer.Context,
    target: Annotated[
        str | None,
        typer.Option("--target", help="Workspace-relative path of a file or directory."),
    ] = None,
    workspace_id: Annotated[
        str | None,
        typer.Option(
            "--workspace",
            help="Workspace ID (default: the registered workspace containing the current "
            "directory).",
        ),
    ] = None,
    run_id: Annotated[
        str | None,
        typer.Option(
            "--run",
            metavar="RUN",
            help="A run's pinned instructions against the disk, instead of --target.",
        ),
    ] = None,
    confirm: Annotated[
        bool,
        typer.Option("--confirm", help="Pin the instructions on disk as the run's next revision."),
    ] = False,
    expected: Annotated[
        str | None,
        typer.Option(
            "--expected-fingerprint",
            metavar="PINNED",
            help="With --confirm: the pinned fingerprint you reviewed ('' if none).",
        ),
    ] = None,
    expected_live: Annotated[
        str | None,
        typer.Option(
            "--expected-live-fingerprint",
            metavar="LIVE",
            help="With --confirm: the live fingerprint you reviewed.",
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Show which project instructions apply to TARGET, in order, and why; or, with --run,
    a run's pinned instructions against the disk (and --confirm a refresh)."""
    check_instructions_options(
        run_id=run_id,
        target=target,
        workspace_id=workspace_id,
        confirm=confirm,
        expected=expected,
        expected_live=expected_live,
    )
    if run_id is not None:
        run_instructions(
            ctx,
            run_id,
            confirm=confirm,
            expected=expected,
            expected_live=expected_live,
            as_json=as_json,
        )
        return
    assert target is not None  # checked above
    with cli_store(ctx) as store:
        if workspace_id is None:
            workspace_id = infer_workspace(store, Path.cwd()).workspace_id
        snapshot = effective_instructions(store, workspace_id, target, reader=FileReader())
    if as_json:
        print_json(snapshot.to_json())
        return
    render_snapshot(make_console(), snapshot)


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
