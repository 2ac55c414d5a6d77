"""Human-readable output of `rutter context assemble` and `rutter context audit`. JSON output
never passes through here.

Texts come from instruction files, people and agents: escaped, so `[...]` in them is never
console markup.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from rutter_cli.render import who
from rutter_core.app.assembly import Assembly, AuditedAssembly, AuditList, Entry, FollowedReport


def _say(console: Console, text: str) -> None:
    console.print(escape(text), highlight=False, soft_wrap=True)


def _summary(console: Console, assembly: AuditedAssembly) -> None:
    budget = assembly.budget
    included = sum(1 for entry in assembly.entries if entry.decision == "included")
    by = who(assembly.created_by, assembly.created_by_person)
    _say(
        console,
        f"{assembly.assembly_id} · run {assembly.run_id} · {assembly.created_at} · by {by} · "
        f"{included} of {len(assembly.entries)} sources included",
    )
    _say(
        console,
        f"  budget {budget.background} tokens: required {budget.required}, memory "
        f"{budget.memory} of {budget.memory_cap}, used {budget.used} ({assembly.estimator})",
    )


def _table(console: Console, entries: Sequence[Entry]) -> None:
    table = Table(show_header=True, header_style="bold")
    for column in ("kind", "id", "version", "tokens", "decision", "sha256"):
        table.add_column(column, overflow="fold")
    for entry in entries:
        decision = entry.decision if entry.reason is None else f"omitted: {entry.reason}"
        kind = entry.kind if entry.scope is None else f"{entry.kind} ({entry.scope})"
        tokens = "-" if entry.tokens is None else str(entry.tokens)
        table.add_row(
            kind, escape(entry.id), str(entry.version), tokens, decision, entry.sha256[:12]
        )
    console.print(table)


def render_assembly(console: Console, assembly: Assembly) -> None:
    _summary(console, assembly)
    _table(console, assembly.entries)
    for warning in assembly.warnings:
        _say(console, f"warning: {warning.message}")
    for entry in assembly.entries:
        if entry.text is None:
            continue
        _say(console, f"--- {entry.kind} {entry.id} (version {entry.version})")
        _say(console, entry.text.rstrip("\n"))


def render_audit(console: Console, found: AuditList) -> None:
    if not found.assemblies:
        _say(console, f"No assemblies of run {found.run_id} are stored.")
        return
    for assembly in found.assemblies:
        _summary(console, assembly)
        _table(console, assembly.entries)
        if assembly.followed is None:
            console.print("  followed: not reported")
        else:
            render_report(console, assembly.followed, indent="  ")
    if found.has_more:
        console.print("Older assemblies are stored too: raise --limit to see them.")


def render_report(console: Console, report: FollowedReport, *, indent: str = "") -> None:
    by = who(report.reported_by, report.reported_by_person)
    _say(
        console,
        f"{indent}followed, as {by} reported at {report.reported_at}: "
        f"{', '.join(report.followed) or 'none'}; ignored: {', '.join(report.ignored) or 'none'}",
    )
