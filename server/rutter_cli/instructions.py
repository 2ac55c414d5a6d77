"""`rutter context instructions`: which project instructions apply to a target, in order, and
why (the app's `instructions.effective`); with `--targets-from`, to many targets in one process
(`instructions.effective_each`, JSON Lines with `--json`); with `--run`, a run's pinned
instructions against the disk (`rutter_cli.runs`, imported only then)."""

from __future__ import annotations

import gc
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Final

import typer

from rutter_cli.common import (
    JsonFlag,
    WorkspaceOption,
    cli_app,
    emit,
    make_console,
    settings_of,
)
from rutter_cli.errors import EXIT_CODES, message_of
from rutter_cli.targets import read_targets
from rutter_core.app.instructions import (
    EffectiveInstructionsBatchParams,
    EffectiveInstructionsParams,
)
from rutter_core.kernel.errors import ErrorCategory, RutterError, UsageError

if TYPE_CHECKING:
    from rich.console import Console

    from rutter_core.app.facade import Rutter

WORST_FIRST: Final = (
    ErrorCategory.INTERNAL,
    ErrorCategory.USAGE,
    ErrorCategory.CONFLICT,
    ErrorCategory.REJECTED,
    ErrorCategory.NOT_FOUND,
)
"""How a batch's exit code is chosen: the first of these categories any target failed with."""


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
    targets_from: Annotated[
        str | None,
        typer.Option(
            "--targets-from",
            metavar="FILE",
            help="Answer for every target in FILE (one workspace-relative path per line, or "
            "quoted as `git ls-files` prints non-ASCII names; '-' reads standard input) in one "
            "process; with --json, one JSON document per line.",
        ),
    ] = None,
    nul_separated: Annotated[
        bool,
        typer.Option(
            "-z",
            "--null",
            help="With --targets-from: the names are separated by NUL bytes, as `git ls-files "
            "-z` prints them (taken as they are, never unquoted).",
        ),
    ] = False,
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
    as_agent: Annotated[
        str | None,
        typer.Option(
            "--as",
            metavar="AGENT",
            help="What one agent would load for --target instead, in its order, and where it "
            "would cut: codex, claude, gemini, copilot, cursor, or all.",
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Show which project instructions apply to TARGET, in order, and why; or, with --run,
    a run's pinned instructions against the disk (and --confirm a refresh); or, with --as,
    what one coding agent would load for TARGET and where it would cut."""
    check_instructions_options(
        run_id=run_id,
        target=target,
        targets_from=targets_from,
        workspace_id=workspace_id,
        confirm=confirm,
        expected=expected,
        expected_live=expected_live,
    )
    if nul_separated and targets_from is None:
        raise UsageError("usage", "-z goes with --targets-from FILE: it says how names are split")
    if as_agent is not None:
        if run_id is not None or show_diff:
            raise UsageError(
                "usage",
                "--as AGENT goes with --target PATH or --targets-from FILE (not --run or --diff)",
            )
        if targets_from is not None:
            lines, targets = read_targets(targets_from, nul_separated=nul_separated)
            code = agent_views(ctx, as_agent, targets, lines, workspace_id, as_json=as_json)
            if code:
                raise typer.Exit(code)
            return
        assert target is not None  # checked above
        agent_view(ctx, as_agent, target, workspace_id, as_json=as_json)
        return
    if show_diff:
        if run_id is None or confirm:
            raise UsageError(
                "usage", "--diff goes with --run RUN alone (not --confirm): it shows a run's drift"
            )
        review_run(ctx, run_id, workspace_id, as_json=as_json)
        return
    if run_id is not None:
        from rutter_cli.runs import run_instructions

        run_instructions(
            ctx,
            run_id,
            confirm=confirm,
            expected=expected,
            expected_live=expected_live,
            as_json=as_json,
            workspace_id=workspace_id,
        )
        return
    # Typed targets are relative to the current directory when it is inside the workspace.
    directory = str(Path.cwd())
    if targets_from is not None:
        lines, targets = read_targets(targets_from, nul_separated=nul_separated)
        batch = EffectiveInstructionsBatchParams(
            targets=targets, workspace_id=workspace_id, directory=directory
        )
        code = _answer_each(ctx, batch, lines, as_json=as_json)
        if code:
            raise typer.Exit(code)
        return
    assert target is not None  # checked above
    params = EffectiveInstructionsParams(
        target=target, workspace_id=workspace_id, directory=directory
    )
    with cli_app(ctx, read_only=True) as rutter:
        snapshot = rutter.instructions.effective(params)
        shown = {source.path for source in snapshot.sources}
        others = None if as_json else other_agents_files(rutter, params, shown)

    def for_people(console: Console) -> None:
        from rutter_cli.render import render_snapshot
        from rutter_cli.render_profiles import render_other_agents

        assert others is not None  # read above when not --json
        render_snapshot(console, snapshot)
        render_other_agents(console, others, target)

    emit(snapshot, as_json=as_json, for_people=for_people)


def other_agents_files(
    rutter: Rutter, params: EffectiveInstructionsParams, delivered: set[str]
) -> dict[str, list[str]]:
    """For people: the files each agent would load for the target that the answer does not
    deliver (an agent's own names, such as GEMINI.md), by agent. Empty when the agents' views
    cannot be had: they only add a pointer to `--as`, never fail the answer."""
    from rutter_core.app.profiles import ProfileParams, ProfileViews

    try:
        views = rutter.profiles.view(ProfileParams(**params.model_dump(), agent="all"))
    except RutterError:
        return {}
    assert isinstance(views, ProfileViews)
    found: dict[str, list[str]] = {}
    for view in views.profiles:
        extra = [source.path for source in view.sources if source.path not in delivered]
        if extra:
            found[view.agent] = extra
    return found


def agent_view(
    ctx: typer.Context, agent: str, target: str, workspace_id: str | None, *, as_json: bool
) -> None:
    """`--as AGENT --target PATH`: the files that agent would load (docs/reference/profiles.md)."""
    from pydantic import ValidationError

    from rutter_core.app.profiles import AGENTS, ProfileParams

    try:
        params = ProfileParams(
            target=target,
            workspace_id=workspace_id,
            directory=str(Path.cwd()),
            agent=agent,  # validated just here
        )
    except ValidationError:
        raise UsageError("usage", f"--as takes one of {', '.join(AGENTS)} or all") from None
    with cli_app(ctx, read_only=True) as rutter:
        views = rutter.profiles.view(params)

    def for_people(console: Console) -> None:
        from rutter_cli.render_profiles import render_profiles

        render_profiles(console, views, target)

    emit(views, as_json=as_json, for_people=for_people)


def agent_views(
    ctx: typer.Context,
    agent: str,
    targets: list[str],
    lines: list[int],
    workspace_id: str | None,
    *,
    as_json: bool,
) -> int:
    """`--as AGENT --targets-from FILE`: each target's view as it comes (JSON Lines with
    --json), failures as `{"target", "line", "error"}`; the exit code of the worst failure."""
    from pydantic import ValidationError

    from rutter_core.app.profiles import AGENTS, ProfileBatchParams

    try:
        params = ProfileBatchParams(
            targets=targets,
            workspace_id=workspace_id,
            directory=str(Path.cwd()),
            agent=agent,  # validated just here
        )
    except ValidationError:
        raise UsageError("usage", f"--as takes one of {', '.join(AGENTS)} or all") from None
    failed: set[ErrorCategory] = set()
    console = None
    with cli_app(ctx, read_only=True) as rutter:
        for line, (target, answer) in zip(lines, rutter.profiles.view_each(params), strict=True):
            if isinstance(answer, RutterError):
                failed.add(answer.category)
                _report_failure(answer, target, line, as_json=as_json)
                continue
            if as_json:
                sys.stdout.write(_line(answer.to_json()))
                continue
            from rutter_cli.render_profiles import render_profiles

            if console is None:
                console = make_console()
            else:
                console.out("", highlight=False)
            render_profiles(console, answer, target)
    return _worst(failed)


def _report_failure(error: RutterError, target: str, line: int, *, as_json: bool) -> None:
    """One target's failure in a batch: a JSON line with --json, and a line on stderr."""
    message = message_of(error)
    if as_json:
        document = error.to_json()
        document["message"] = message
        sys.stdout.write(_line({"target": target, "line": line, "error": document}))
    sys.stderr.write(f"rutter: error[{error.code}]: {target}: {message}\n")


def _worst(failed: set[ErrorCategory]) -> int:
    for category in WORST_FIRST:
        if category in failed:
            return EXIT_CODES[category]
    return 0


def review_run(ctx: typer.Context, run_id: str, workspace_id: str | None, *, as_json: bool) -> None:
    """`--run RUN --diff`: the inspection with the text of its drift, then the confirm command."""
    from rutter_cli.render_runs import render_inspection
    from rutter_core.app.runs import InspectRunParams

    with cli_app(ctx, read_only=True) as rutter:
        review = rutter.runs.review(InspectRunParams(run_id=run_id, workspace_id=workspace_id))

    def for_people(console: Console) -> None:
        render_inspection(
            console,
            review,
            database_url=settings_of(ctx).database_url,
            diff_text=review.diff_text,
            workspace_id=workspace_id,
        )

    emit(review, as_json=as_json, for_people=for_people)


def _answer_each(
    ctx: typer.Context, batch: EffectiveInstructionsBatchParams, lines: list[int], *, as_json: bool
) -> int:
    """Print each target's answer as it comes; the exit code of the worst failure (0: none)."""
    failed: set[ErrorCategory] = set()
    out = sys.stdout
    console = None
    with cli_app(ctx, read_only=True) as rutter:
        answers = rutter.instructions.effective_each(batch)
        # What exists now (modules, models, the store) lives until the process ends: kept out
        # of the collector, whose full passes over a heap the answers keep growing would walk
        # it again each time (about a tenth of a 1,000-target batch's CPU).
        gc.freeze()
        for line, (target, answer) in zip(lines, answers, strict=True):
            if isinstance(answer, RutterError):
                failed.add(answer.category)
                _report_failure(answer, target, line, as_json=as_json)
                continue
            if as_json:
                out.write(f"{answer.to_json_line()}\n")
                continue
            from rutter_cli.render import render_snapshot

            console = console or make_console()
            render_snapshot(console, answer)
    return _worst(failed)


def _line(document: object) -> str:
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n"


def check_instructions_options(
    *,
    run_id: str | None,
    target: str | None,
    targets_from: str | None = None,
    workspace_id: str | None,
    confirm: bool,
    expected: str | None,
    expected_live: str | None,
) -> None:
    """The combinations `rutter context instructions` accepts; anything else is a usage error."""
    if run_id is not None and (target is not None or targets_from is not None):
        raise UsageError(
            "usage",
            "--run cannot be combined with --target or --targets-from: a run pins its own "
            "target (--workspace ID compares it with the files of another registration of its "
            "project)",
        )
    if target is not None and targets_from is not None:
        raise UsageError("usage", "give --target PATH or --targets-from FILE, not both")
    if run_id is None and target is None and targets_from is None:
        raise UsageError(
            "usage",
            "give --target PATH for the instructions on disk (--targets-from FILE for many), or "
            "--run RUN for a run's pinned instructions",
        )
    fingerprints = expected is not None or expected_live is not None
    if (confirm or fingerprints) and run_id is None:
        raise UsageError(
            "usage", "--confirm and the expected fingerprints need --run RUN: only runs pin"
        )
    if confirm and (expected is None or expected_live is None):
        raise UsageError(
            "usage",
            "--confirm needs both --expected-fingerprint PINNED and --expected-live-fingerprint "
            "LIVE, as shown by `rutter context instructions --run RUN` (use '' for PINNED when "
            "the run has no revision yet)",
        )
    if fingerprints and not confirm:
        raise UsageError(
            "usage",
            "--expected-fingerprint and --expected-live-fingerprint only go with --confirm",
        )
