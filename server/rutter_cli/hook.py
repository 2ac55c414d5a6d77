"""`rutter hook session-start --agent AGENT`: the command an agent's session-start hook runs
(`rutter connect` installs it for Claude Code and Gemini CLI). It reads the hook's JSON on
stdin (`session_id`, `cwd`, `source`, ...), finds or makes the session's run
(`rutter_core.app.agent_sessions`), and prints the run's assembled context in the agent's own
output: `{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": TEXT}}`,
the JSON both agents read from stdout.

A hook must never stop a session from starting: whatever fails (input that is not the agent's,
a directory in no registered workspace, a store that cannot be opened, instructions that fail
closed) the command still prints that JSON, with a one-line note instead of the context, writes
the same note to stderr (the agents' debug logs), and exits 0 (Claude Code shows a non-zero exit
of a session-start hook as a hook error; Gemini CLI as a warning). The note never quotes the
input: an error's message is rutter's own, and names no content.

The store is the root's (`--database-url`, which `rutter connect` writes into the hook's
command, else the environment): a store that does not exist is not created for it.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated, Any, Final

import typer

if TYPE_CHECKING:
    from rutter_core.app.agent_sessions import SessionStart

HOOK_HELP: Final = "Commands an agent's hooks run (installed by `rutter connect`)."
MAX_INPUT_BYTES: Final = 1_048_576
"""The most of stdin read: a hook's input is a few hundred bytes."""

hook_app = typer.Typer(help=HOOK_HELP, no_args_is_help=True)


@hook_app.command("session-start")
def session_start(
    ctx: typer.Context,
    agent: Annotated[
        str,
        typer.Option("--agent", metavar="AGENT", help="Whose hook: claude-code or gemini."),
    ],
    budget: Annotated[
        int | None,
        typer.Option(
            "--budget",
            min=1,
            help="The context's budget in tokens (default 2048).",
        ),
    ] = None,
) -> None:
    """Print the assembled context of the agent's session (its run, found by the session ID,
    or made) as the agent's SessionStart hook output. Always exits 0."""
    from rutter_cli.common import cli_app

    try:
        hook_input = _read_input()
        from rutter_cli.common import ACTOR
        from rutter_core.app.agent_sessions import SessionStartParams

        params = SessionStartParams(
            agent=agent,
            session_id=_field(hook_input, "session_id"),
            directory=_field(hook_input, "cwd"),
            budget=budget,
        )
        # Not created when missing: a session started before any workspace was registered
        # finds none in the stand-in and says so, leaving no empty store behind.
        with cli_app(ctx, read_only=True) as rutter:
            started = rutter.agent_sessions.start(params, actor=ACTOR)
    except Exception as error:  # a hook never fails the agent's start
        note = f"rutter: no assembled context for this session ({_describe(error)})."
        sys.stderr.write(note + "\n")
        _answer(note)
        return
    _answer(session_text(started))


def _read_input() -> dict[str, Any]:
    from rutter_core.kernel.errors import UsageError

    data = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
    if len(data) > MAX_INPUT_BYTES:
        raise UsageError("invalid_hook_input", "the hook's input is over 1 MiB")
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError("invalid_hook_input", "the hook's input is not a JSON object") from exc
    if not isinstance(document, dict):
        raise UsageError("invalid_hook_input", "the hook's input is not a JSON object")
    return document


def _field(document: dict[str, Any], name: str) -> str:
    from rutter_core.kernel.errors import UsageError

    value = document.get(name)
    if not isinstance(value, str) or not value:
        raise UsageError(
            "invalid_hook_input",
            f"the hook's input has no {name}",
            details={"field": name},
        )
    return value


def _describe(error: Exception) -> str:
    """`code: message` of a rutter error (its own words: they never echo content); the class
    of anything else."""
    from rutter_core.kernel.errors import RutterError

    if isinstance(error, RutterError):
        return f"{error.code}: {error.message}"
    return f"unexpected {type(error).__name__}"


def _answer(text: str) -> None:
    document = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}
    sys.stdout.write(json.dumps(document, ensure_ascii=False) + "\n")


def session_text(started: SessionStart) -> str:
    """The context as the agent reads it: where it comes from, then each included source's
    text in authority order, then what was left out."""
    assembly = started.assembly
    budget = assembly.budget
    delivered = [entry for entry in assembly.entries if entry.text is not None]
    lines = [
        f"# Context from rutter: run {started.run_id}",
        "",
        f"rutter keeps this session as run {started.run_id} (workspace "
        f"{started.workspace_id}, thread {started.thread_id}). Below is the run's assembled "
        f"context, assembly {assembly.assembly_id}: {len(delivered)} of "
        f"{len(assembly.entries)} sources, {budget.used} of {budget.background} tokens. The "
        "rutter MCP tools answer more (effective_instructions with this run_id, memory_list); "
        "context_report records which of these sources you followed.",
    ]
    for entry in delivered:
        assert entry.text is not None
        scope = "" if entry.scope is None else f", {entry.scope}"
        lines += ["", f"## {entry.kind} {entry.id} (version {entry.version}{scope})", ""]
        lines.append(entry.text.rstrip("\n"))
    if assembly.warnings:
        lines += ["", "## Left out", ""]
        lines += [f"- {warning.message}" for warning in assembly.warnings]
    return "\n".join(lines) + "\n"


__all__ = ["HOOK_HELP", "hook_app", "session_text"]
