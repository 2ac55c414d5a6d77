"""Human-readable output of the run commands. JSON output never passes through here."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping, Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from rutter_cli.render import who
from rutter_core.app.runs import (
    CreatedRun,
    DeliveryReport,
    DeliveryReportList,
    LiveFailure,
    RunInspection,
    RunRecord,
    confirm_refresh_command,
)

MAX_GOAL_IN_TABLE = 60


def _goal_line(goal: str) -> str:
    """The goal's first line, shortened between words to `MAX_GOAL_IN_TABLE` characters."""
    first = goal.splitlines()[0] if goal else ""
    if len(first) > MAX_GOAL_IN_TABLE or first != goal:
        cut = textwrap.shorten(first, width=MAX_GOAL_IN_TABLE - 2, placeholder="")
        return (cut or first[: MAX_GOAL_IN_TABLE - 2]) + " …"
    return first


def render_created(console: Console, created: CreatedRun) -> None:
    pinned = created.snapshot  # revision 1: the run's workspace and target
    console.print(
        f"Created run [cyan]{created.run_id}[/cyan] for "
        f"[cyan]{escape(pinned.target_path)}[/cyan] in workspace "
        f"[cyan]{escape(pinned.workspace_id)}[/cyan]"
    )
    count = len(pinned.sources)
    noun = "file" if count == 1 else "files"
    console.print(
        f"  pinned revision {created.revision}: {count} instruction {noun}, fingerprint "
        f"{created.fingerprint}",
        highlight=False,
        soft_wrap=True,
    )
    console.print(
        f"  mission {created.mission_id}, session {created.session_id}, thread "
        f"{created.thread_id}, root node {created.root_node_id}",
        highlight=False,
        soft_wrap=True,
    )


def render_runs(console: Console, runs: Sequence[RunRecord], *, all_runs: bool) -> None:
    if not runs:
        which = "No runs" if all_runs else "No active runs (`--all` lists finished ones too)"
        console.print(f"{which}. Create one with `rutter run create --goal TEXT`.")
        return
    table = Table()
    # Run IDs stay whole (people copy them); free text folds. `run show` has the times.
    table.add_column("run", no_wrap=True)
    table.add_column("workspace", overflow="fold", min_width=9)
    table.add_column("target", overflow="fold", min_width=12, ratio=1)
    table.add_column("status", no_wrap=True)
    table.add_column("rev", justify="right", no_wrap=True)
    table.add_column("mode", no_wrap=True)
    table.add_column("goal", overflow="fold", min_width=12, ratio=1)
    for run in runs:
        table.add_row(
            run.run_id,
            escape(run.workspace_id),
            escape(run.target_path),
            run.status,
            "-" if run.revision is None else str(run.revision),
            run.mode,
            escape(_goal_line(run.goal)),
        )
    console.print(table)


def render_run(console: Console, run: RunRecord) -> None:
    table = Table(show_header=False, box=None)
    table.add_column("field", style="bold")
    table.add_column("value", overflow="fold")
    rows = (
        ("run", run.run_id),
        ("status", run.status),
        ("workspace", run.workspace_id),
        ("target", run.target_path),
        ("goal", run.goal),
        ("mode", run.mode),
        ("profile", run.profile or "-"),
        ("revision", "none (not pinned yet)" if run.revision is None else str(run.revision)),
        ("fingerprint", run.fingerprint or "-"),
        ("mission", run.mission_id),
        ("session", run.session_id),
        ("thread", run.thread_id),
        ("created", f"{run.created_at} by {who(run.created_by, run.created_by_person)}"),
        ("updated", f"{run.updated_at} by {who(run.updated_by, run.updated_by_person)}"),
    )
    for name, value in rows:
        table.add_row(name, escape(value))
    console.print(table)


def render_delivery_report(console: Console, report: DeliveryReport) -> None:
    console.print(
        escape(
            f"Delivery report {report.report_id} on run {report.run_id}: {report.result}"
            + (" (summary redacted)" if report.summary_redacted else "")
        ),
        highlight=False,
        soft_wrap=True,
    )
    console.print(escape(report.summary), highlight=False, soft_wrap=True)
    if report.references:
        console.print(
            escape("references: " + ", ".join(report.references)), highlight=False, soft_wrap=True
        )


def render_delivery_reports(console: Console, found: DeliveryReportList) -> None:
    if not found.reports:
        console.print(
            f"No delivery reports on run {found.run_id} "
            f"(rutter run report {found.run_id} --result passed|failed --summary TEXT adds one)."
        )
        return
    table = Table()
    table.add_column("report", no_wrap=True)
    table.add_column("result", no_wrap=True)
    table.add_column("reported", no_wrap=True)
    table.add_column("summary", overflow="fold", ratio=1)
    for report in found.reports:
        first = report.summary.splitlines()[0] if report.summary else ""
        table.add_row(
            report.report_id,
            report.result,
            escape(f"{report.created_at} by {who(report.created_by, report.created_by_person)}"),
            escape(first),
        )
    console.print(table)


def confirm_command(
    inspection: RunInspection, *, database_url: str | None = None, workspace_id: str | None = None
) -> str | None:
    """The exact command that confirms what `inspection` shows (of `workspace_id`'s files when
    given), or None when nothing can be."""
    live = inspection.live_fingerprint
    if not inspection.stale or live is None or inspection.run.is_terminal:
        return None
    return confirm_refresh_command(
        inspection.run_id,
        inspection.pinned_fingerprint,
        live,
        database_url=database_url,
        workspace_id=workspace_id,
    )


def render_inspection(
    console: Console,
    inspection: RunInspection,
    *,
    database_url: str | None = None,
    diff_text: Mapping[str, str] | None = None,
    workspace_id: str | None = None,
) -> None:
    run, pinned, diff = inspection.run, inspection.pinned, inspection.diff
    console.print(
        f"[bold]Run[/bold] [cyan]{run.run_id}[/cyan] ({run.status}) in workspace "
        f"[cyan]{escape(run.workspace_id)}[/cyan], target [cyan]{escape(run.target_path)}[/cyan]",
        soft_wrap=True,
    )
    if workspace_id is not None and workspace_id != run.workspace_id:
        console.print(
            f"Live: the files of workspace [cyan]{escape(workspace_id)}[/cyan]", soft_wrap=True
        )
    if pinned is None:
        console.print("Pinned: nothing yet (the run was imported without instructions).")
    else:
        console.print(
            escape(
                f"Pinned: revision {pinned.revision}, fingerprint {pinned.fingerprint}, "
                f"confirmed by {who(pinned.confirmed_by, pinned.confirmed_by_person)} at "
                f"{pinned.confirmed_at}"
            ),
            highlight=False,
            soft_wrap=True,
        )
        for source in pinned.snapshot.sources:
            console.print(escape(f"  {source.ordinal}. {source.path}"), highlight=False)
        if not pinned.snapshot.sources:
            console.print("  (no instruction file applied)")

    if isinstance(inspection.live, LiveFailure):
        error = inspection.live
        where = f" ({error.path})" if error.path else ""
        console.print(
            escape(f"Live: discovery fails closed now: [{error.code}] {error.message}{where}"),
            highlight=False,
        )
        keeps = "its pinned snapshot" if pinned is None else f"revision {pinned.revision}"
        console.print(
            f"The run keeps {keeps}; nothing can be confirmed until discovery succeeds again."
        )
        return
    if not inspection.stale:
        console.print(
            f"Live: fingerprint {inspection.live_fingerprint}, the same as pinned: up to date, "
            "nothing to confirm.",
            highlight=False,
            soft_wrap=True,
        )
        return

    console.print(
        f"Live: fingerprint {inspection.live_fingerprint}", highlight=False, soft_wrap=True
    )
    console.print("\n[bold]Drift[/bold] (pinned → live)")
    for path in diff.added:
        console.print(escape(f"  + added    {path}"), highlight=False)
    for path in diff.removed:
        console.print(escape(f"  - removed  {path}"), highlight=False)
    for path in diff.changed:
        fields = ", ".join(diff.changed_fields.get(path, ()))
        console.print(escape(f"  ~ changed  {path} ({fields})"), highlight=False)
    if diff.order_changed:
        console.print("  order of the sources in both changed")
    if diff.ignored_changed:
        console.print("  ignored files changed")
    if diff_text is not None:
        render_diff_text(console, diff_text, diff.changed_fields)
    keeps = "without instructions" if pinned is None else f"on revision {pinned.revision}"
    if run.is_terminal:  # a confirmation would only be refused (run_terminal)
        console.print(
            f"\nThe run is {run.status}, which is final: it ended {keeps} and takes no new "
            "instructions; create a new run for these."
        )
        return
    command = confirm_command(inspection, database_url=database_url, workspace_id=workspace_id)
    console.print(
        f"\nThe run stays {keeps} until you confirm. After reviewing the drift"
        + ("" if diff_text is not None else " (`--diff` shows it as text)")
        + ", run:",
        soft_wrap=True,
    )
    console.print(f"  {escape(command or '')}", highlight=False, soft_wrap=True)


# Control characters a terminal would act on (ESC starts a sequence that can rewrite the screen):
# shown as \xNN instead. Tab and newline stay.
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _shown(text: str) -> str:
    return _CONTROLS.sub(lambda found: f"\\x{ord(found.group()):02x}", text)


def render_diff_text(
    console: Console, diff_text: Mapping[str, str], changed_fields: Mapping[str, Sequence[str]]
) -> None:
    """Each drifted source's unified diff, byte for byte as `diff -u` writes it (tabs kept,
    never read as markup), apart from control characters."""
    for path, text in diff_text.items():
        fields = ", ".join(changed_fields.get(path, ())) or "its place"
        shown = text or f"{path}: same text; only {fields} changed\n"
        console.file.write("\n" + _shown(shown))
