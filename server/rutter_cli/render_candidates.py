"""Human-readable output of the candidate commands. JSON output never passes through here."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from rutter_cli.render import who
from rutter_core.app.candidates import CandidateList, ConfirmedCandidate, MemoryCandidate


def render_candidates(console: Console, found: CandidateList) -> None:
    if not found.items:
        console.print(
            f"No experience candidates in workspace {escape(found.workspace_id)} "
            f"({found.scanned} notes scanned). A decision or summary note with a --reference "
            "becomes one when its run completes, is checkpointed with --delivery, or an "
            "imported agent reply ends."
        )
        return
    table = Table()
    table.add_column("id", no_wrap=True)
    table.add_column("v", justify="right", no_wrap=True)
    table.add_column("note", no_wrap=True)
    table.add_column("completion", overflow="fold")
    table.add_column("title", overflow="fold", ratio=1)
    for item in found.items:
        table.add_row(
            item.candidate_id,
            str(item.version),
            f"{item.source.note_id} v{item.source.note_version}",
            f"{item.completion.kind} {item.completion.at}",
            escape((item.title or "") + (" (redacted)" if item.redacted else "")),
        )
    console.print(table)
    console.print(
        "Review one with `rutter context memory candidate show ID`; nothing is saved until you "
        "confirm it."
    )
    if found.truncated:
        console.print(
            f"More may be waiting: {found.scanned} notes were scanned and at most 50 candidates "
            "are listed; resolve these to see the rest."
        )


def render_candidate(console: Console, item: MemoryCandidate, *, note: str | None = None) -> None:
    if note:
        console.print(escape(note))
    table = Table(show_header=False, show_lines=True)
    table.add_column("field", style="bold", no_wrap=True)
    table.add_column("value", overflow="fold")
    rows = [
        ("id", item.candidate_id),
        ("status", item.status),
        ("version", str(item.version)),
        ("fingerprint", item.fingerprint),
        ("source", f"note {item.source.note_id} version {item.source.note_version}"),
        ("thread / run", f"{item.source.thread_id} / {item.source.run_id or '-'}"),
        ("completion", f"{item.completion.kind} at {item.completion.at}"),
    ]
    if item.status == "pending":
        rows += [
            ("title", item.title or ""),
            ("content", item.content or ""),
            ("references", "\n".join(item.references) or "-"),
            ("redacted", "yes (confirm with --redact-sensitive)" if item.redacted else "no"),
            ("confidence", item.confidence_note),
        ]
    if item.review is not None:
        review = (
            f"{item.status} at {item.review.at} by {who(item.review.by, item.review.by_person)}"
        )
        if item.review.memory_id:
            review += f"; memory {item.review.memory_id}"
        rows.append(("review", review))
    for field, value in rows:
        table.add_row(field, escape(value))
    console.print(table)
    if item.status == "pending":
        console.print(
            escape(
                "Save it: rutter context memory candidate confirm "
                f"{item.candidate_id} --version {item.version} --fingerprint {item.fingerprint} "
                f"--source-version {item.source.note_version}"
                + (" --redact-sensitive" if item.redacted else "")
                + f"\nOr ignore it: rutter context memory candidate ignore {item.candidate_id} "
                f"--version {item.version}"
            ),
            highlight=False,
            soft_wrap=True,
        )


def render_confirmed(console: Console, confirmed: ConfirmedCandidate) -> None:
    memory = confirmed.memory
    if memory is None:
        console.print(
            f"Candidate {confirmed.candidate.candidate_id} was confirmed before; the memory it "
            "created has been deleted since."
        )
        return
    console.print(
        escape(
            f"Saved candidate {confirmed.candidate.candidate_id} as project memory "
            f"{memory.memory_id} (version {memory.version}): {memory.title}"
        ),
        highlight=False,
        soft_wrap=True,
    )
