"""The `rutter` command line: parses arguments, calls rutter_core, prints JSON or tables.

Only the invoked command group is imported and built: `rutter workspace list` imports neither
discovery nor runs. The root lists every group from `GROUPS` and every other command from
`COMMANDS` (its name and help) without importing it; `rutter --help` (and `rutter` alone) is
printed by click alone, without typer, the store or any group (`root_help`).
`tests/test_cli_startup.py` checks that each entry's help is the group's own, that the root's
help is the one typer prints, and that the paths that need no store or redaction do not import
them.
"""

from __future__ import annotations

import functools
import gc
import importlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from rutter_cli.errors import EXIT_CODES
from rutter_core.kernel.errors import ErrorCategory, RutterError

if TYPE_CHECKING:
    import click
    import typer

ROOT_HELP: Final = "Context continuity for AI coding agents: which instructions apply, and why."
DATABASE_URL_HELP: Final = (
    "SQLAlchemy URL of the store (default: $RUTTER_DATABASE_URL, else SQLite in $RUTTER_HOME)."
)
VERSION_HELP: Final = "Print rutter's version and exit."


def version_line() -> str:
    """`rutter X.Y.Z`, from the installed package's metadata (read only when asked for)."""
    from rutter_core.kernel.version import rutter_version

    found = rutter_version()
    if found is None:  # run from a source tree that was never installed
        return "rutter (version unknown: the package is not installed)"
    return f"rutter {found}"


@dataclass(frozen=True, slots=True)
class Command:
    """A command of the root that is not a group: its help, and its function's name in its
    module."""

    help: str
    function: str
    module: str = "rutter_cli.root"
    """Where `function` is (imported only once a command runs)."""


COMMANDS: Final[dict[str, Command]] = {
    "serve": Command(
        "Run the language server (LSP over stdio; the same as `rutter-lsp`).", "serve_command"
    ),
    "mcp": Command(
        "Serve the Model Context Protocol over stdio, for agents (actor: mcp).", "mcp_command"
    ),
    "connect": Command(
        "Add rutter's MCP server to an agent's configuration (claude-code, codex, gemini, "
        "vscode, cursor), naming this store, and for Claude Code and Gemini CLI a hook that "
        "gives each session its assembled context. Other servers and hooks are kept. The "
        "project is the registered workspace around the current directory (or --workspace), "
        "else its git repository.",
        "connect_command",
        "rutter_cli.connect",
    ),
}
"""The root's commands that are not groups, in the order the help lists them (before the
groups, as typer lists them): both the typer tree (`build_app`) and the root's help
(`root_command`) are built from this table."""


@dataclass(frozen=True, slots=True)
class Group:
    """A command group, imported only when it is invoked (or its help is asked for)."""

    help: str
    load: Callable[[list[str]], typer.Typer]
    """Builds the group, given the arguments after its name (to build only what they name)."""


def _attribute(module: str, name: str) -> Callable[[list[str]], typer.Typer]:
    def load(_: list[str]) -> typer.Typer:
        found: typer.Typer = getattr(importlib.import_module(module), name)
        return found

    return load


def _session(_: list[str]) -> typer.Typer:
    return _session_app()


@functools.cache
def _session_app() -> typer.Typer:
    """`rutter session` with fork, resume, tree and compare joined to it (once per process)."""
    from rutter_cli.session import session_app
    from rutter_cli.session_branches import register
    from rutter_cli.session_compaction import register as register_compaction
    from rutter_cli.session_import import register as register_import

    register(session_app)
    register_import(session_app)
    register_compaction(session_app)
    return session_app


CONTEXT_HELP: Final = "Inspect the context agents are given."


def _context(args: list[str]) -> typer.Typer:
    import typer

    context_app = typer.Typer(help=CONTEXT_HELP, no_args_is_help=True)
    wanted = _command_name(args, {"instructions", "memory", "pin", "assemble", "audit", "report"})
    if wanted in (None, "instructions"):
        from rutter_cli.instructions import context_instructions

        context_app.command("instructions")(context_instructions)
    if wanted in (None, "memory"):
        from rutter_cli.memory import memory_app

        context_app.add_typer(memory_app, name="memory")
    if wanted in (None, "pin"):
        from rutter_cli.pins import pin_app

        context_app.add_typer(pin_app, name="pin")
    if wanted in (None, "assemble", "audit", "report"):
        from rutter_cli.assembly import context_assemble, context_audit, context_report

        context_app.command("assemble")(context_assemble)
        context_app.command("audit")(context_audit)
        context_app.command("report")(context_report)
    return context_app


GROUPS: Final[dict[str, Group]] = {
    "workspace": Group(
        "Register, inspect, move and remove workspaces.",
        _attribute("rutter_cli.workspace", "workspace_app"),
    ),
    "context": Group(CONTEXT_HELP, _context),
    "run": Group(
        "Runs: create them with pinned instructions, list, show and move their status.",
        _attribute("rutter_cli.runs", "run_app"),
    ),
    "session": Group(
        "Session continuity: the threads, a thread's messages and notes, checkpoints of runs, "
        "fork and resume, the session tree, comparing nodes.",
        _session,
    ),
    "history": Group(
        "Search memories and a run's history (notes, messages, receipts, summaries, "
        "checkpoints), and read a hit in pages.",
        _attribute("rutter_cli.history", "history_app"),
    ),
    "http": Group(
        "Serve the HTTP API (/api/v1) and manage its bearer tokens.",
        _attribute("rutter_cli.http", "http_app"),
    ),
    "store": Group(
        "Prepare a store for its people (init) and check its state (check).",
        _attribute("rutter_cli.store", "store_app"),
    ),
    "hook": Group(
        "Commands an agent's hooks run (installed by `rutter connect`).",
        _attribute("rutter_cli.hook", "hook_app"),
    ),
}
"""Every group under `rutter`, in the order the help lists them (then `serve`)."""

_ROOT_OPTIONS_WITH_VALUE: Final = frozenset({"--database-url"})


def _command_name(args: Sequence[str], known: set[str] | dict[str, Group]) -> str | None:
    """The command `args` name at this level (skipping options), when it is one of `known`."""
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg == "--":
            return None
        if arg.startswith("-"):
            skip = arg in _ROOT_OPTIONS_WITH_VALUE
            continue
        return arg if arg in known else None
    return None


def build_app(args: Sequence[str] = ()) -> typer.Typer:
    """The `rutter` command tree, with only the group `args` invoke built (every group when
    they name none: the root's help lists them all, each by its help alone)."""
    import typer

    from rutter_cli import root

    app = typer.Typer(
        name="rutter",
        help=ROOT_HELP,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )
    app.callback()(root.root_options)
    invoked = _command_name(args, GROUPS)
    for name, group in GROUPS.items():
        if name == invoked:
            rest = list(args[list(args).index(name) + 1 :])
            app.add_typer(group.load(rest), name=name)
        else:  # listed by name and help; never run, since `args` do not name it
            app.add_typer(typer.Typer(help=group.help, no_args_is_help=True), name=name)
    for name, command in COMMANDS.items():
        module = (
            root if command.module == root.__name__ else importlib.import_module(command.module)
        )
        app.command(name, help=command.help)(getattr(module, command.function))
    return app


# -- the root's help, without typer ----------------------------------------------------------


ROOT_HELP_ARGS: Final[tuple[list[str], ...]] = ([], ["--help"])
"""The arguments `root_help` answers: `rutter` alone (a usage error) and `rutter --help`."""


def root_command() -> click.Group:
    """The root as click shows it in its help: the option and the commands of `build_app`'s
    tree, each with its help, built with click alone. Importing typer costs more CPU than the
    rest of `rutter --help`; `tests/test_cli_startup.py` checks the text is typer's."""
    import click

    class InOrder(click.Group):
        """Lists its commands in the order they were added, as typer does (click sorts)."""

        def list_commands(self, ctx: click.Context) -> list[str]:
            return list(self.commands)

    root = InOrder(
        "rutter",
        help=ROOT_HELP,
        params=[
            click.Option(["--database-url"], metavar="<str>", help=DATABASE_URL_HELP),
            click.Option(["--version"], is_flag=True, help=VERSION_HELP),
        ],
    )
    # Typer lists the commands before the groups; each group by its help alone.
    for name, command in COMMANDS.items():
        root.add_command(click.Command(name, help=command.help))
    for name, group in GROUPS.items():
        root.add_command(click.Group(name, help=group.help))
    return root


def root_help() -> str:
    """`rutter --help`: the root's usage, help, option and commands (ends in a newline)."""
    import click

    root = root_command()
    with click.Context(root, info_name="rutter") as context:
        return f"{root.get_help(context)}\n"


# -- entry point ------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """The process's entry point (`rutter`, `python -m rutter`): the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--version"]:  # answered without typer, like the root's help
        try:
            sys.stdout.write(f"{version_line()}\n")
            sys.stdout.flush()
        except BrokenPipeError:
            return 1
        return 0
    if args in ROOT_HELP_ARGS:
        try:
            sys.stdout.write(root_help())
            sys.stdout.flush()
        except BrokenPipeError:  # a reader that went away: as `run` answers it
            return 1
        return EXIT_CODES[ErrorCategory.USAGE] if not args else 0  # as typer's no_args_is_help
    # Building the tree imports the invoked group and what it stands on (the models,
    # discovery, SQLAlchemy): some 50,000 objects that live as long as the process, none of
    # them garbage, which the cyclic collector would walk again and again while they arrive
    # (about a tenth of a command's CPU). The collector is paused meanwhile, then they are
    # frozen out of its later passes: what `gc.freeze` is documented for.
    gc.disable()
    try:
        return run(args, paused_collector=True)
    finally:
        gc.enable()


def _params_refused(exc: Exception) -> RutterError | None:
    """`exc` as the app layer's `invalid_params` error when a params model refused it (the
    same error, and the same `details.problems`, as every surface's); pydantic is not imported
    for it (a command that failed before using it did not load it)."""
    if "pydantic" not in sys.modules:
        return None
    from pydantic import ValidationError

    if not isinstance(exc, ValidationError):
        return None
    from rutter_core.app.models import invalid_params

    return invalid_params(exc)


def run(args: list[str], *, paused_collector: bool = False) -> int:
    """Build the tree `args` invoke and run it: the exit code, errors reported as the CLI does.
    With `paused_collector` (the process's own run, `main`), the collector paused while the
    tree is built is resumed after it, with everything built kept out of its passes."""
    import typer

    from rutter_cli.errors import report
    from rutter_core.kernel.errors import UsageError

    as_json = "--json" in args
    try:
        try:
            command = typer.main.get_command(build_app(args))
        finally:
            if paused_collector:
                gc.freeze()
                gc.enable()
        result = command.main(args=args, prog_name="rutter", standalone_mode=False)
    except RutterError as error:
        return report(error, as_json=as_json)
    except typer.TyperException as exc:
        # Typer's own parse errors (its click exceptions are private; use the public base).
        context = getattr(exc, "ctx", None)
        if type(exc).__name__ == "NoArgsIsHelpError":
            sys.stdout.write(f"{exc.format_message()}\n")  # the help (plain: no rich panels)
            return EXIT_CODES[UsageError.category]
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
        refused = _params_refused(exc)
        if refused is not None:  # a params model refused what the options gave it
            return report(refused, as_json=as_json)
        import traceback

        traceback.print_exc(file=sys.stderr)
        return report(
            RutterError("internal", f"unexpected failure: {type(exc).__name__}: {exc}"),
            as_json=as_json,
        )
    # Outside standalone mode an Exit raised by a command comes back as its code.
    return result if isinstance(result, int) else 0
