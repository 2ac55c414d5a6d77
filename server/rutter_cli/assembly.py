"""`rutter context assemble`, `rutter context audit` and `rutter context report`: what a run's
agent is given, the stored audit of every assembly (docs/reference/assembly.md), and the report of
what was followed.

A thin surface over the app facade (`rutter.assembly`): options become the operation's params,
the CLI names itself as the actor ("cli"), and each command prints one JSON document (`--json`)
or text for people (`rutter_cli.render_assembly`).
"""

from __future__ import annotations

from typing import Annotated

import typer

from rutter_cli.common import ACTOR, JsonFlag, cli_app, emit
from rutter_cli.render_assembly import render_assembly, render_audit, render_report
from rutter_core.app.assembly import AssembleParams, AuditParams, ReportParams

RunOption = Annotated[
    str, typer.Option("--run", metavar="RUN", help="The run's ID (run_...; see `run list`).")
]


def context_assemble(
    ctx: typer.Context,
    run_id: RunOption,
    budget: Annotated[
        int | None,
        typer.Option(
            "--budget",
            metavar="TOKENS",
            help="The background budget in tokens (1-1000000; default 16384): pinned "
            "instructions, pins and memories together; memory gets min(2048, TOKENS/4, what "
            "is left).",
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """What RUN's agent is given now, in authority order, each source included or omitted
    with its reason; the assembly is stored in the run's audit."""
    with cli_app(ctx) as rutter:
        assembly = rutter.assembly.assemble(
            AssembleParams(run_id=run_id, budget=budget), actor=ACTOR
        )
    emit(assembly, as_json=as_json, for_people=lambda console: render_assembly(console, assembly))


def context_audit(
    ctx: typer.Context,
    run_id: Annotated[
        str, typer.Argument(metavar="RUN", help="The run's ID (run_...; see `run list`).")
    ],
    limit: Annotated[
        int, typer.Option("--limit", help="At most this many, newest first (1-500).")
    ] = 50,
    as_json: JsonFlag = False,
) -> None:
    """The stored assemblies of RUN, newest first: what each delivered (IDs, versions,
    digests, estimated tokens) and what it left out, and why. Never a text."""
    with cli_app(ctx, read_only=True) as rutter:
        found = rutter.assembly.audit(AuditParams(run_id=run_id, limit=limit))
    emit(found, as_json=as_json, for_people=lambda console: render_audit(console, found))


def context_report(
    ctx: typer.Context,
    assembly_id: Annotated[
        str,
        typer.Argument(
            metavar="ASSEMBLY", help="The assembly's ID (asm_...; see `context audit`)."
        ),
    ],
    followed: Annotated[
        list[str] | None,
        typer.Option("--followed", metavar="ID", help="A delivered source that was followed."),
    ] = None,
    ignored: Annotated[
        list[str] | None,
        typer.Option("--ignored", metavar="ID", help="A delivered source that was not followed."),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Record, once, which sources ASSEMBLY delivered were followed and which were not (the
    audit's third fact, as you judge it from the agent's replies)."""
    params = ReportParams(
        assembly_id=assembly_id, followed=tuple(followed or ()), ignored=tuple(ignored or ())
    )
    with cli_app(ctx) as rutter:
        made = rutter.assembly.report(params, actor=ACTOR)
    emit(made, as_json=as_json, for_people=lambda console: render_report(console, made))


__all__ = ["context_assemble", "context_audit", "context_report"]
