"""Human-readable (table) output of the CLI. JSON output never passes through here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.table import Table

if TYPE_CHECKING:  # types only: `rutter workspace list` must not import discovery
    from rutter_core.app.instructions import Snapshot
    from rutter_core.app.workspaces import Workspace


def render_snapshot(console: Console, snapshot: Snapshot) -> None:
    # Paths and prose come from the workspace: escaped, so `[...]` in a name is never markup.
    console.print(
        f"[bold]Effective instructions[/bold] for [cyan]{escape(snapshot.target_path)}[/cyan] "
        f"in workspace [cyan]{escape(snapshot.workspace_id)}[/cyan]"
    )
    if snapshot.sources:
        table = Table(show_lines=True)
        table.add_column("#", justify="right")
        table.add_column("path", overflow="fold", ratio=2)
        table.add_column("kind")
        table.add_column("scope", overflow="fold", ratio=1)
        table.add_column("precedence", justify="right")
        table.add_column("why", overflow="fold", ratio=4)
        for source in snapshot.sources:
            path = source.path + (" (redacted)" if source.redacted else "")
            table.add_row(
                str(source.ordinal),
                escape(path),
                source.kind,
                escape(source.scope),
                str(source.precedence),
                escape(source.why_effective),
            )
        console.print(table)
    else:
        console.print("No instruction file applies to this target.")

    if snapshot.conflicts:
        console.print("\n[bold]Conflicts[/bold]")
        for conflict in snapshot.conflicts:
            console.print(
                escape(
                    f"  - {conflict.role}: {conflict.lower_precedence_path} vs "
                    f"{conflict.higher_precedence_path}: {conflict.resolution}"
                ),
                highlight=False,
            )
    if snapshot.ignored:
        console.print("\n[bold]Ignored[/bold]")
        for entry in snapshot.ignored:
            if entry.reason == "superseded":
                why = f"superseded by {entry.superseded_by}"
            elif entry.reason == "blank_override":
                why = "blank override; the level falls back to AGENTS.md"
            else:
                why = f"excluded by .prayu/instructions.ignore:{entry.line} ({entry.pattern})"
            console.print(escape(f"  - {entry.path}: {why}"), highlight=False)
    redacted = [source for source in snapshot.sources if source.redacted]
    if redacted:
        console.print("\n[bold]Redactions[/bold]")
        for source in redacted:
            kinds = ", ".join(f"{item.kind} x{item.count}" for item in source.redactions)
            console.print(escape(f"  - {source.path}: {kinds}"), highlight=False)
    console.print(f"\nfingerprint {snapshot.fingerprint}", highlight=False)


def render_workspaces(console: Console, workspaces: list[Workspace]) -> None:
    if not workspaces:
        console.print("No workspaces registered. Add one with `rutter workspace register ID ROOT`.")
        return
    table = Table()
    for column in ("workspace", "root", "registered"):
        table.add_column(column, overflow="fold")
    for workspace in workspaces:
        table.add_row(workspace.workspace_id, escape(workspace.root), workspace.created_at)
    console.print(table)
