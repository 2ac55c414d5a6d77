"""Human-readable (table) output of the CLI. JSON output never passes through here."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.table import Table

if TYPE_CHECKING:  # types only: `rutter workspace list` must not import discovery
    from rutter_core.app.instructions import Snapshot
    from rutter_core.app.workspaces import RemovedContents, Workspace


def _out(console: Console, text: str, *, indent: int = 0, hang: int = 0) -> None:
    """`text` as it is (never markup), wrapped between words to a terminal's width; off a
    terminal, one line whatever its length. `hang`: the extra indent of continuation lines."""
    first, rest = " " * indent, " " * (indent + hang)
    if not console.is_terminal:
        console.out(first + text, highlight=False)
        return
    lines = textwrap.wrap(
        text,
        width=console.width,
        initial_indent=first,
        subsequent_indent=rest,
        break_long_words=False,
        break_on_hyphens=False,
    )
    for line in lines or [first]:
        console.out(line, highlight=False)


def who(surface: str, person: str | None) -> str:
    """Who did something, as plain text (not markup): the person and the surface they used
    (`alice via cli`), or the surface alone when the record is older than people being recorded
    (`cli, person unknown`)."""
    return f"{surface}, person unknown" if person is None else f"{person} via {surface}"


def render_snapshot(console: Console, snapshot: Snapshot) -> None:
    # Paths and prose come from the workspace: printed with `out`, never read as markup.
    _out(
        console,
        f"Effective instructions for {snapshot.target_path} in workspace {snapshot.workspace_id}",
    )
    count = len(snapshot.sources)
    if not count:
        console.out("No instruction file applies to this target.", highlight=False)
    else:
        files = "1 file applies" if count == 1 else f"{count} files apply"
        _out(console, f"{files}, from the widest scope to the nearest; a later one takes "
                      "precedence where they differ:")  # fmt: skip
    for source in snapshot.sources:
        console.out("", highlight=False)
        number = f"{source.ordinal:>2}. "
        redacted = " (redacted)" if source.redacted else ""
        link = ""
        if source.link_target is not None:
            stub = " (git link stub)" if source.link_stub else ""
            link = f" → {source.link_target}{stub}"
        _out(console, f"{number}{source.path}{link}{redacted}", hang=len(number))
        _out(
            console,
            f"{source.kind}, scope {source.scope}, precedence {source.precedence}",
            indent=len(number),
        )
        _out(console, source.why_effective, indent=len(number))

    if snapshot.conflicts:
        pairs = len(snapshot.conflicts)
        noun = "1 pair of files applies" if pairs == 1 else f"{pairs} pairs of files apply"
        console.out("", highlight=False)
        _out(console, f"Layering: {noun} together; where they differ, the nearer file wins:")
        for conflict in snapshot.conflicts:
            _out(
                console,
                f"- {conflict.lower_precedence_path}, then {conflict.higher_precedence_path} "
                f"(nearer; {conflict.role})",
                indent=2,
                hang=2,
            )
    if snapshot.ignored:
        console.out("", highlight=False)
        console.out("Ignored:", highlight=False)
        for entry in snapshot.ignored:
            if entry.reason == "superseded":
                why = f"superseded by {entry.superseded_by}"
            elif entry.reason == "blank_override":
                why = "blank override; the level falls back to AGENTS.md"
            elif entry.reason == "alias":
                how = "a git link stub naming it" if entry.link_stub else "a link to it"
                why = f"alias of {entry.alias_of} ({how}; not delivered twice)"
            else:
                why = f"excluded by .prayu/instructions.ignore:{entry.line} ({entry.pattern})"
            _out(console, f"- {entry.path}: {why}", indent=2, hang=2)
    redacted_sources = [source for source in snapshot.sources if source.redacted]
    if redacted_sources:
        console.out("", highlight=False)
        console.out("Redactions:", highlight=False)
        for source in redacted_sources:
            kinds = ", ".join(f"{item.kind} x{item.count}" for item in source.redactions)
            _out(console, f"- {source.path}: {kinds}", indent=2, hang=2)
    console.out("", highlight=False)
    console.out(f"fingerprint {snapshot.fingerprint}", highlight=False)


_MACHINE_MARKS = {
    "this_machine": "this machine",
    "other_machine": "another machine",
    "unclaimed": "unclaimed",
}


def render_workspaces(console: Console, workspaces: Sequence[Workspace]) -> None:
    if not workspaces:
        console.print("No workspaces registered. Add one with `rutter workspace register ID ROOT`.")
        return
    # A listing marks whose location each is (`ListedWorkspace.machine`); `show` does not.
    marks = [getattr(workspace, "machine", None) for workspace in workspaces]
    marked = any(mark is not None for mark in marks)
    table = Table()
    columns = ("workspace", "root", "project", *(("machine",) if marked else ()), "registered")
    for column in columns:
        table.add_column(column, overflow="fold")
    for workspace, mark in zip(workspaces, marks, strict=True):
        project = escape(workspace.project_id)
        if workspace.project_source != "local":
            project = f"{project} ({workspace.project_source})"
        machine = (_MACHINE_MARKS[str(mark)],) if marked else ()
        table.add_row(
            workspace.workspace_id, escape(workspace.root), project, *machine, workspace.created_at
        )
    console.print(table)


_CONTENT_NOUNS = (
    ("runs", "run", "runs"),
    ("missions", "mission", "missions"),
    ("revisions", "pinned revision", "pinned revisions"),
    ("sessions", "session", "sessions"),
    ("threads", "thread", "threads"),
    ("nodes", "continuity node", "continuity nodes"),
    ("checkpoints", "checkpoint", "checkpoints"),
    ("messages", "message", "messages"),
    ("notes", "note", "notes"),
    ("pins", "pin", "pins"),
    ("pin_proposals", "pin proposal", "pin proposals"),
    ("transcript_imports", "imported transcript", "imported transcripts"),
    ("project_memories", "project memory", "project memories"),
)


def render_removed_contents(deleted: RemovedContents) -> str:
    """`Deleted with it: 2 runs, 1 checkpoint, ...` (only what there was)."""
    counts = deleted.model_dump()
    parts = [
        f"{counts[field]} {one if counts[field] == 1 else many}"
        for field, one, many in _CONTENT_NOUNS
        if counts[field]
    ]
    return "Deleted with it: " + (", ".join(parts) if parts else "nothing else") + "."
