"""`rutter context pin ...`: a thread's pins, and answering the pins agents propose.

A thin surface over the app facade (`rutter.pins`): options become the operation's params, the
CLI names itself as the actor ("cli": an operator, never taken from the command line), and each
command prints one JSON document (`--json`) or text for people (`rutter_cli.render_pins`).
"""

from __future__ import annotations

from typing import Annotated

import typer

from rutter_cli.common import ACTOR, JsonFlag, cli_app, emit
from rutter_cli.render_pins import (
    render_answered,
    render_pin,
    render_pins,
    render_proposals,
    render_removed,
)
from rutter_core.app.pins import (
    AddPinParams,
    AnswerProposalParams,
    EditPinParams,
    ListPinsParams,
    ListProposalsParams,
    RemovePinParams,
)

pin_app = typer.Typer(
    help="Pins: requirements a thread keeps for all its later runs, and the pins agents propose.",
    no_args_is_help=True,
)

PinId = Annotated[str, typer.Argument(metavar="PIN", help="The pin's ID (pin_...).")]
Text = Annotated[
    str, typer.Option("--text", help="The pin (stored redacted; at most 8192 characters).")
]
Version = Annotated[
    int,
    typer.Option(
        "--version",
        help="The pin's version you last saw (`context pin list THREAD`); a stale one fails "
        "with exit 4.",
    ),
]


@pin_app.command("add")
def pin_add(
    ctx: typer.Context,
    thread_id: Annotated[
        str, typer.Argument(metavar="THREAD", help="The thread's ID (thr_...; see `run show`).")
    ],
    text: Text,
    as_json: JsonFlag = False,
) -> None:
    """Pin TEXT to THREAD: every later run of the thread carries it."""
    with cli_app(ctx) as rutter:
        pin = rutter.pins.add(AddPinParams(thread_id=thread_id, text=text), actor=ACTOR)
    emit(pin, as_json=as_json, for_people=lambda console: render_pin(console, pin, "Pinned"))


@pin_app.command("list")
def pin_list(
    ctx: typer.Context,
    thread_or_run: Annotated[
        str,
        typer.Argument(
            metavar="THREAD|RUN",
            help="A thread's ID (thr_...), or a run's (run_...) for the pins its thread gives it.",
        ),
    ],
    as_json: JsonFlag = False,
) -> None:
    """List the pins of a thread (or of a run's thread), oldest first."""
    if thread_or_run.startswith("run_"):
        params = ListPinsParams(run_id=thread_or_run)
    else:
        params = ListPinsParams(thread_id=thread_or_run)
    with cli_app(ctx, read_only=True) as rutter:
        found = rutter.pins.list(params)
    emit(found, as_json=as_json, for_people=lambda console: render_pins(console, found))


@pin_app.command("edit")
def pin_edit(
    ctx: typer.Context, pin_id: PinId, version: Version, text: Text, as_json: JsonFlag = False
) -> None:
    """Replace PIN's text (version + 1)."""
    params = EditPinParams(pin_id=pin_id, version=version, text=text)
    with cli_app(ctx) as rutter:
        pin = rutter.pins.edit(params, actor=ACTOR)
    emit(pin, as_json=as_json, for_people=lambda console: render_pin(console, pin, "Edited"))


@pin_app.command("remove")
def pin_remove(
    ctx: typer.Context, pin_id: PinId, version: Version, as_json: JsonFlag = False
) -> None:
    """Remove PIN: later runs of its thread no longer carry it."""
    with cli_app(ctx) as rutter:
        removed = rutter.pins.remove(RemovePinParams(pin_id=pin_id, version=version), actor=ACTOR)
    emit(removed, as_json=as_json, for_people=lambda console: render_removed(console, removed))


@pin_app.command("proposals")
def pin_proposals(
    ctx: typer.Context,
    workspace_id: Annotated[
        str | None, typer.Option("--workspace", help="Only this workspace's proposals.")
    ] = None,
    thread_id: Annotated[
        str | None, typer.Option("--thread", metavar="THREAD", help="Only this thread's.")
    ] = None,
    include_answered: Annotated[
        bool, typer.Option("--all", help="Include answered proposals.")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """List the pins agents proposed that wait for your answer (every workspace's)."""
    params = ListProposalsParams(
        workspace_id=workspace_id, thread_id=thread_id, all=include_answered
    )
    with cli_app(ctx, read_only=True) as rutter:
        found = rutter.pins.proposals(params)
    emit(found, as_json=as_json, for_people=lambda console: render_proposals(console, found))


@pin_app.command("answer")
def pin_answer(
    ctx: typer.Context,
    proposal_id: Annotated[
        str, typer.Argument(metavar="PROPOSAL", help="The proposal's ID (prop_...).")
    ],
    choice: Annotated[
        str,
        typer.Argument(
            metavar="pin|discuss|custom",
            help="pin: pin the proposed text as shown; discuss: answer without pinning; "
            "custom: your own reply, pinned only with --pin.",
        ),
    ],
    text: Annotated[
        str | None,
        typer.Option("--text", help="Your reply (discuss: optional; custom: required)."),
    ] = None,
    pin: Annotated[bool, typer.Option("--pin", help="custom only: pin your reply.")] = False,
    as_json: JsonFlag = False,
) -> None:
    """Answer a proposed pin, once: only `pin`, or `custom --pin`, creates a pin."""
    params = AnswerProposalParams(proposal_id=proposal_id, choice=choice, text=text, pin=pin)
    with cli_app(ctx) as rutter:
        answered = rutter.pins.answer(params, actor=ACTOR)
    emit(answered, as_json=as_json, for_people=lambda console: render_answered(console, answered))
