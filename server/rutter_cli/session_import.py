"""`rutter session import claude-code|codex PATH`: an agent's own transcript into a thread.

A thin surface over the app facade (`rutter.transcripts`): the CLI is the actor ("cli") and the
messages' source is `import:<agent>` (set by core from the agent, never from the command line).
`--watch` keeps following the file until SIGINT or SIGTERM, then prints the final answer for
the whole run (one JSON document with `--json`; progress lines for people otherwise) and exits 0.
The commands join the `rutter session` group (`register`).
"""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated

import typer

from rutter_cli.common import ACTOR, JsonFlag, cli_app, emit, make_console
from rutter_cli.render_transcripts import render_import, render_progress

if TYPE_CHECKING:
    from rich.console import Console

    from rutter_core.app.transcripts import (
        ImportTranscriptParams,
        TranscriptImport,
        TranscriptOperations,
    )


def import_transcript(
    ctx: typer.Context,
    agent: Annotated[
        str, typer.Argument(metavar="AGENT", help="Whose transcript: claude-code or codex.")
    ],
    path: Annotated[
        str,
        typer.Argument(
            metavar="PATH",
            help="The transcript: ~/.claude/projects/<project>/<session>.jsonl or "
            "~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl.",
        ),
    ],
    workspace: Annotated[
        str | None,
        typer.Option(
            "--workspace",
            help="Workspace of a new thread (default: the registered workspace containing the "
            "directory the transcript was recorded in, else the current directory).",
        ),
    ] = None,
    thread: Annotated[
        str | None,
        typer.Option(
            "--thread",
            metavar="THREAD",
            help="Import into this thread (default: the thread of an earlier import of the same "
            "session, else a new one).",
        ),
    ] = None,
    watch: Annotated[
        bool,
        typer.Option(
            "--watch", help="Keep importing what the agent appends, until Ctrl-C or SIGTERM."
        ),
    ] = False,
    create_run: Annotated[
        bool,
        typer.Option(
            "--create-run",
            help="Give the thread a run in the same step: its newest run, else a new run "
            "continuing it (instructions pinned from the workspace root).",
        ),
    ] = False,
    goal: Annotated[
        str | None,
        typer.Option("--goal", metavar="TEXT", help="The goal of the run --create-run creates."),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Import an agent's session transcript into a thread: re-importing appends only what is
    new; malformed lines are skipped and reported by number."""
    from rutter_core.app.transcripts import ImportTranscriptParams  # the command's own cost

    params = ImportTranscriptParams(
        agent=agent, path=path, workspace_id=workspace, thread_id=thread, create_run=create_run,
        goal=goal,
    )  # fmt: skip
    console = make_console()
    with cli_app(ctx) as rutter:
        if not watch:
            done = rutter.transcripts.import_transcript(params, actor=ACTOR, cwd=Path.cwd())
        else:
            done = _follow(rutter.transcripts, params, console=None if as_json else console)
    headline = "Watched" if watch else "Imported"
    # The console the import's progress went to renders its result too.
    emit(
        done, as_json=as_json, for_people=lambda _: render_import(console, done, headline=headline)
    )


def _follow(
    operations: TranscriptOperations, params: ImportTranscriptParams, *, console: Console | None
) -> TranscriptImport:
    stop = threading.Event()

    def stopping(_signum: int, _frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, stopping) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        return operations.follow(
            params,
            actor=ACTOR,
            stop=stop,
            cwd=Path.cwd(),
            on_progress=None if console is None else lambda done: render_progress(console, done),
        )
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def register(session_app: typer.Typer) -> None:
    session_app.command("import")(import_transcript)
