"""`rutter session ...`: a thread's messages and notes, checkpoints, and reading a node.

A thin surface over the app facade (`rutter.continuity`): it turns options into the operation's
params, names itself as the actor and the messages' source ("cli", never taken from the command
line: there is no `--source`), and prints one JSON document (`--json`) or text for people
(`rutter_cli.render_session`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from rutter_cli.common import ACTOR, JsonFlag, cli_app, emit
from rutter_cli.render_session import (
    render_added_message,
    render_messages,
    render_node,
    render_note,
    render_notes,
    render_threads,
)
from rutter_core.app.continuity import (
    AddMessageParams,
    AddNoteParams,
    DeliveryCheckpointParams,
    EditNoteParams,
    ListMessagesParams,
    ListNotesParams,
    ListThreadsParams,
    ShowNodeParams,
    SupersedeNoteParams,
)

if TYPE_CHECKING:
    from rich.console import Console

session_app = typer.Typer(
    help="Session continuity: the threads, a thread's messages and notes, checkpoints of runs, "
    "fork and resume, the session tree, comparing nodes.",
    no_args_is_help=True,
)
message_app = typer.Typer(help="Add a message to a thread.", no_args_is_help=True)
note_app = typer.Typer(help="Add, edit or supersede a thread's notes.", no_args_is_help=True)
session_app.add_typer(message_app, name="message")
session_app.add_typer(note_app, name="note")

ThreadId = Annotated[
    str, typer.Argument(metavar="THREAD", help="The thread's ID (thr_...; see `rutter run show`).")
]
NoteId = Annotated[str, typer.Argument(metavar="NOTE", help="The note's ID (note_...).")]
Text = Annotated[str, typer.Option("--text", help="The text (stored with secrets redacted).")]
Version = Annotated[
    int,
    typer.Option(
        "--version",
        help="The note's version you last saw (`session notes THREAD`); a stale one fails "
        "with exit 4.",
    ),
]


@message_app.command("add")
def message_add(
    ctx: typer.Context,
    thread_id: ThreadId,
    role: Annotated[
        str, typer.Option("--role", metavar="user|assistant|tool|system", help="Who said it.")
    ],
    text: Annotated[
        str, typer.Option("--text", help="The message (stored redacted; at most 64 KiB).")
    ],
    external_id: Annotated[
        str | None,
        typer.Option(
            "--external-id",
            metavar="ID",
            help="The message's ID where it came from: adding it again adds nothing.",
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Append a message to THREAD (source: cli)."""
    params = AddMessageParams(thread_id=thread_id, role=role, text=text, external_id=external_id)
    with cli_app(ctx) as rutter:
        added = rutter.continuity.add_message(params, source=ACTOR)
    emit(added, as_json=as_json, for_people=lambda console: render_added_message(console, added))


@session_app.command("threads")
def threads_list(
    ctx: typer.Context,
    workspace: Annotated[
        str | None,
        typer.Option(
            "--workspace", metavar="ID", help="Only this workspace's threads (default: all)."
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """List threads, newest activity first: title, source agent, messages, last activity."""
    params = ListThreadsParams(workspace_id=workspace)
    with cli_app(ctx) as rutter:
        found = rutter.continuity.threads(params)
    emit(found, as_json=as_json, for_people=lambda console: render_threads(console, found))


@session_app.command("messages")
def messages_list(
    ctx: typer.Context,
    thread_id: ThreadId,
    limit: Annotated[
        int, typer.Option("--limit", help="At most this many, the most recent (1-500).")
    ] = 50,
    before: Annotated[
        int | None,
        typer.Option("--before", metavar="SEQ", help="Only messages before this position."),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """List THREAD's most recent messages, oldest first."""
    params = ListMessagesParams(thread_id=thread_id, limit=limit, before_seq=before)
    with cli_app(ctx, read_only=True) as rutter:
        found = rutter.continuity.messages(params)
    emit(found, as_json=as_json, for_people=lambda console: render_messages(console, found))


@note_app.command("add")
def note_add(
    ctx: typer.Context,
    thread_id: ThreadId,
    kind: Annotated[str, typer.Option("--kind", metavar="decision|summary|fact", help="Kind.")],
    text: Text,
    references: Annotated[
        list[str] | None,
        typer.Option(
            "--reference",
            metavar="R",
            help="A path, URL or identifier the note rests on (repeatable; at most 32). A "
            "decision or summary with one is offered as a memory candidate once its run has a "
            "completion record.",
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Add a note to THREAD (at most 16 KiB)."""
    params = AddNoteParams(
        thread_id=thread_id, kind=kind, text=text, references=tuple(references or ())
    )
    with cli_app(ctx) as rutter:
        note = rutter.continuity.add_note(params, actor=ACTOR)
    emit(
        note,
        as_json=as_json,
        for_people=lambda console: render_note(console, note, headline="Added"),
    )


@note_app.command("edit")
def note_edit(
    ctx: typer.Context, note_id: NoteId, version: Version, text: Text, as_json: JsonFlag = False
) -> None:
    """Replace an active note's text (version + 1)."""
    params = EditNoteParams(note_id=note_id, version=version, text=text)
    with cli_app(ctx) as rutter:
        note = rutter.continuity.edit_note(params, actor=ACTOR)
    emit(
        note,
        as_json=as_json,
        for_people=lambda console: render_note(console, note, headline="Note"),
    )


@note_app.command("supersede")
def note_supersede(
    ctx: typer.Context,
    note_id: NoteId,
    version: Version,
    text: Annotated[
        str | None,
        typer.Option("--text", help="The text of a new note of the same kind that replaces it."),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Mark an active note superseded, optionally by a new note."""
    params = SupersedeNoteParams(note_id=note_id, version=version, text=text)
    with cli_app(ctx) as rutter:
        result = rutter.continuity.supersede_note(params, actor=ACTOR)

    def for_people(console: Console) -> None:
        render_note(console, result.note, headline="Superseded")
        if result.replacement is not None:
            render_note(console, result.replacement, headline="Replaced by")

    emit(result, as_json=as_json, for_people=for_people)


@session_app.command("notes")
def notes_list(
    ctx: typer.Context,
    thread_id: ThreadId,
    all_notes: Annotated[bool, typer.Option("--all", help="Include superseded notes.")] = False,
    as_json: JsonFlag = False,
) -> None:
    """List THREAD's notes in the order they were added (active ones; --all for every one)."""
    params = ListNotesParams(thread_id=thread_id, all=all_notes)
    with cli_app(ctx, read_only=True) as rutter:
        found = rutter.continuity.notes(params)
    emit(
        found,
        as_json=as_json,
        for_people=lambda console: render_notes(console, found, all_notes=all_notes),
    )


@session_app.command("checkpoint")
def checkpoint(
    ctx: typer.Context,
    run_id: Annotated[str, typer.Argument(metavar="RUN", help="The run's ID (run_...).")],
    title: Annotated[str, typer.Option("--title", help="One line, at most 256 bytes.")],
    summary: Annotated[
        str | None, typer.Option("--summary", help="What the checkpoint marks (16 KiB).")
    ] = None,
    delivery: Annotated[
        bool,
        typer.Option(
            "--delivery",
            help="The checkpoint marks what the run delivered: a completion record (the "
            "thread's referenced decisions and summaries become memory candidates).",
        ),
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Append an immutable checkpoint of RUN: its continuity snapshot."""
    params = DeliveryCheckpointParams(
        run_id=run_id, title=title, summary=summary, delivery=delivery
    )
    with cli_app(ctx) as rutter:
        node = rutter.continuity.checkpoint(params, actor=ACTOR)

    def for_people(console: Console) -> None:
        render_node(console, node, headline="Delivery checkpoint" if delivery else "Checkpoint")

    emit(node, as_json=as_json, for_people=for_people)


@session_app.command("show")
def node_show(
    ctx: typer.Context,
    node_id: Annotated[str, typer.Argument(metavar="NODE", help="The node's ID (node_...).")],
    as_json: JsonFlag = False,
) -> None:
    """Show a continuity node and its snapshot, verified."""
    with cli_app(ctx, read_only=True) as rutter:
        node = rutter.continuity.node(ShowNodeParams(node_id=node_id))
    emit(
        node,
        as_json=as_json,
        for_people=lambda console: render_node(console, node, headline="Node"),
    )
