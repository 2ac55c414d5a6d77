"""`rutter run ...` and `rutter context instructions --run`: runs and their pinned instructions.

A thin surface over the app facade (`rutter.runs`): it turns options into the
operation's params, names itself as the actor ("cli", never taken from the command line), and
prints one JSON document (`--json`) or text for people. `run create` without `--workspace`
uses the registered workspace containing the current directory (docs/reference/workspaces.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from rutter_cli.common import ACTOR, JsonFlag, cli_app, emit, settings_of
from rutter_cli.render_runs import (
    render_created,
    render_delivery_report,
    render_delivery_reports,
    render_inspection,
    render_run,
    render_runs,
)
from rutter_core.app.runs import (
    DEFAULT_MODE,
    ConfirmRefreshParams,
    CreateRunParams,
    InspectRunParams,
    ListDeliveryReportsParams,
    ListRunsParams,
    ReportDeliveryParams,
    RunInspection,
    SetRunStatusParams,
    ShowRunParams,
)

if TYPE_CHECKING:
    from rich.console import Console

"""Who this surface is; set here, never from an option."""

run_app = typer.Typer(
    help="Runs: create them with pinned instructions, list, show and move their status.",
    no_args_is_help=True,
)

RunId = Annotated[str, typer.Argument(metavar="RUN", help="The run's ID (run_...).")]


@run_app.command("create")
def run_create(
    ctx: typer.Context,
    goal: Annotated[str, typer.Option("--goal", help="What the run should achieve.")],
    workspace_id: Annotated[
        str | None,
        typer.Option(
            "--workspace",
            help="Workspace ID (default: the registered workspace containing the current "
            "directory).",
        ),
    ] = None,
    profile: Annotated[
        str | None, typer.Option("--profile", help="Execution profile name (a label).")
    ] = None,
    mode: Annotated[
        str, typer.Option("--mode", metavar="ask|auto|full", help="Approval mode.")
    ] = DEFAULT_MODE,
    target: Annotated[
        str | None,
        typer.Option(
            "--target",
            help="File or directory whose instructions to pin: relative to the current "
            "directory inside the workspace, else to the workspace root; or absolute inside "
            "it (default: the workspace root).",
        ),
    ] = None,
    thread_id: Annotated[
        str | None,
        typer.Option("--thread", metavar="THREAD_ID", help="Continue this thread."),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Create a run: mission, session, thread, root node and pinned instructions (revision 1)."""
    params = CreateRunParams(
        workspace_id=workspace_id,
        goal=goal,
        profile=profile,
        mode=mode,
        target=target,
        thread_id=thread_id,
    )
    with cli_app(ctx) as rutter:
        created = rutter.runs.create(params, actor=ACTOR, cwd=Path.cwd())
    emit(created, as_json=as_json, for_people=lambda console: render_created(console, created))


@run_app.command("list")
def run_list(
    ctx: typer.Context,
    workspace_id: Annotated[
        str | None,
        typer.Option("--workspace", help="Only this workspace's runs (default: every workspace)."),
    ] = None,
    all_runs: Annotated[
        bool,
        typer.Option("--all", help="Include completed, failed and cancelled runs."),
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """List active runs (created, running, paused) in creation order; --all lists every run."""
    params = ListRunsParams(workspace_id=workspace_id, all=all_runs)
    with cli_app(ctx, read_only=True) as rutter:
        found = rutter.runs.list(params)
    emit(
        found,
        as_json=as_json,
        for_people=lambda console: render_runs(console, found.runs, all_runs=all_runs),
    )


@run_app.command("show")
def run_show(ctx: typer.Context, run_id: RunId, as_json: JsonFlag = False) -> None:
    """Show one run, with its status and latest pinned revision."""
    with cli_app(ctx, read_only=True) as rutter:
        run = rutter.runs.show(ShowRunParams(run_id=run_id))
    emit(run, as_json=as_json, for_people=lambda console: render_run(console, run))


@run_app.command("status")
def run_status(
    ctx: typer.Context,
    run_id: RunId,
    status: Annotated[
        str,
        typer.Argument(
            metavar="STATUS",
            help="running, paused, completed, failed or cancelled (the last three are final).",
        ),
    ],
    as_json: JsonFlag = False,
) -> None:
    """Move a run to STATUS (running, paused, completed, failed, cancelled)."""
    params = SetRunStatusParams(run_id=run_id, status=status)
    with cli_app(ctx) as rutter:
        change = rutter.runs.set_status(params, actor=ACTOR)
    run = change.run

    def for_people(console: Console) -> None:
        if not change.changed:
            console.print(f"Run {run.run_id} is already {run.status}; nothing changed.")
        else:
            console.print(f"Run {run.run_id}: {change.previous} → {run.status}")

    emit(run, as_json=as_json, for_people=for_people)


@run_app.command("report")
def run_report(
    ctx: typer.Context,
    run_id: RunId,
    result: Annotated[
        str,
        typer.Option(
            "--result",
            metavar="passed|failed",
            help="Whether the delivery was checked and passed, or failed.",
        ),
    ],
    summary: Annotated[
        str,
        typer.Option(
            "--summary",
            metavar="TEXT",
            help="What was checked and found (stored redacted; at most 4 KiB).",
        ),
    ],
    references: Annotated[
        list[str] | None,
        typer.Option(
            "--reference",
            metavar="R",
            help="A path, URL or identifier the report rests on (repeatable; at most 32).",
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Report on RUN's delivery: checked, and passed or failed.

    The run's newest report that passed is a completion record: the referenced decisions and
    summaries of its thread become memory candidates. A later failed report takes that back.
    """
    params = ReportDeliveryParams(
        run_id=run_id, result=result, summary=summary, references=tuple(references or ())
    )
    with cli_app(ctx) as rutter:
        report = rutter.runs.report(params, actor=ACTOR)
    emit(
        report, as_json=as_json, for_people=lambda console: render_delivery_report(console, report)
    )


@run_app.command("reports")
def run_reports(ctx: typer.Context, run_id: RunId, as_json: JsonFlag = False) -> None:
    """List the reports on RUN's delivery, oldest first."""
    with cli_app(ctx, read_only=True) as rutter:
        found = rutter.runs.reports(ListDeliveryReportsParams(run_id=run_id))
    emit(found, as_json=as_json, for_people=lambda console: render_delivery_reports(console, found))


# -- context instructions --run ---------------------------------------------------------------


def run_instructions(
    ctx: typer.Context,
    run_id: str,
    *,
    confirm: bool,
    expected: str | None,
    expected_live: str | None,
    as_json: bool,
    workspace_id: str | None = None,
) -> None:
    """Inspect a run's pinned instructions against the disk (the files of `workspace_id`, a
    registration of the run's project, when given), or confirm a refresh."""
    inspection: RunInspection
    with cli_app(ctx, read_only=not confirm) as rutter:
        runs = rutter.runs
        if not confirm:
            inspection = runs.inspect(InspectRunParams(run_id=run_id, workspace_id=workspace_id))
            refreshed: bool | None = None
        else:
            # Both checked by `rutter_cli.instructions.check_instructions_options`.
            assert expected is not None
            assert expected_live is not None
            params = ConfirmRefreshParams(
                run_id=run_id,
                expected_fingerprint=expected,
                expected_live_fingerprint=expected_live,
                workspace_id=workspace_id,
            )
            inspection = runs.confirm_refresh(params, actor=ACTOR)
            refreshed = inspection.refreshed

    def for_people(console: Console) -> None:
        if refreshed is True:
            console.print(
                f"Refreshed: run {run_id} now pins revision {inspection.revision} (fingerprint "
                f"{inspection.pinned_fingerprint}).\n",
                highlight=False,
                soft_wrap=True,
            )
        elif refreshed is False:
            console.print(
                f"Nothing to refresh: run {run_id} already uses the instructions on disk; no "
                "revision was appended.\n",
                highlight=False,
                soft_wrap=True,
            )
        render_inspection(
            console,
            inspection,
            database_url=settings_of(ctx).database_url,
            workspace_id=workspace_id,
        )

    emit(inspection, as_json=as_json, for_people=for_people)
