"""`rutter context instructions`: which project instructions apply to a target, in order, and
why (the app's `instructions.effective`); with `--run`, a run's pinned instructions against the
disk (`rutter_cli.runs`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rutter_cli.common import (
    JsonFlag,
    WorkspaceOption,
    cli_app,
    make_console,
    print_json,
    settings_of,
)
from rutter_cli.render import render_snapshot
from rutter_cli.render_runs import render_inspection
from rutter_cli.runs import check_instructions_options, run_instructions
from rutter_core.app.instructions import EffectiveInstructionsParams
from rutter_core.app.runs import InspectRunParams
from rutter_core.kernel.errors import UsageError


def context_instructions(
    ctx: typer.Context,
    target: Annotated[
        str | None,
        typer.Option(
            "--target",
            help="A file or directory: relative to the current directory inside the "
            "workspace, else to the workspace root; or absolute inside it.",
        ),
    ] = None,
    workspace_id: WorkspaceOption = None,
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
    show_diff: Annotated[
        bool,
        typer.Option(
            "--diff",
            help="With --run: also print each drifted source as a unified diff (pinned → live, "
            "redacted) before the confirm command.",
        ),
    ] = False,
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
    if show_diff:
        if run_id is None or confirm:
            raise UsageError(
                "usage", "--diff goes with --run RUN alone (not --confirm): it shows a run's drift"
            )
        review_run(ctx, run_id, as_json=as_json)
        return
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
    params = EffectiveInstructionsParams(
        target=target,
        workspace_id=workspace_id,
        directory=str(Path.cwd()),
    )
    with cli_app(ctx) as rutter:
        snapshot = rutter.instructions.effective(params)
    if as_json:
        print_json(snapshot.to_json())
        return
    render_snapshot(make_console(), snapshot)


def review_run(ctx: typer.Context, run_id: str, *, as_json: bool) -> None:
    """`--run RUN --diff`: the inspection with the text of its drift, then the confirm command."""
    with cli_app(ctx) as rutter:
        review = rutter.runs.review(InspectRunParams(run_id=run_id))
    if as_json:
        print_json(review.to_json())
        return
    render_inspection(
        make_console(),
        review,
        database_url=settings_of(ctx).database_url,
        diff_text=review.diff_text,
    )
