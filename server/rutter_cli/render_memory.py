"""Human-readable output of the memory commands. JSON output never passes through here."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from rutter_cli.render import who
from rutter_core.app.memory import DeletedMemory, MemoryList, MemoryRecord


def _state(record: MemoryRecord) -> str:
    if record.status == "disabled":
        return "disabled"
    return "expired" if record.expired else "active"


def _scope_label(record: MemoryRecord) -> str:
    return "user" if record.scope == "user" else f"project:{record.scope_id}"


def render_memory_list(console: Console, found: MemoryList) -> None:
    if not found.items:
        console.print(
            "No memories. Add one with `rutter context memory create --scope user|project "
            "--title T --content C` (disabled and expired ones show with --all)."
        )
        return
    table = Table()
    table.add_column("id", no_wrap=True)
    table.add_column("scope", overflow="fold")
    table.add_column("status", no_wrap=True)
    table.add_column("v", justify="right", no_wrap=True)
    table.add_column("updated", overflow="fold")
    table.add_column("title", overflow="fold", ratio=1)
    for record in found.items:
        title = record.title + (" (redacted)" if record.redacted else "")
        table.add_row(
            record.memory_id,
            escape(_scope_label(record)),
            _state(record),
            str(record.version),
            record.updated_at,
            escape(title),
        )
    console.print(table)
    if found.has_more:
        console.print("More memories match: raise --limit (at most 500) to see them.")


def render_memory(console: Console, record: MemoryRecord, *, note: str | None = None) -> None:
    if note:
        console.print(escape(note))
    table = Table(show_header=False, show_lines=True)
    table.add_column("field", style="bold", no_wrap=True)
    table.add_column("value", overflow="fold")
    rows = [
        ("id", record.memory_id),
        ("scope", _scope_label(record)),
        ("status", _state(record)),
        ("version", str(record.version)),
        ("title", record.title),
        ("content", record.content),
        ("references", "\n".join(record.references) or "-"),
        ("retention until", record.retention_until or "-"),
        ("redacted", "yes" if record.redacted else "no"),
        ("source", record.source_kind),
        ("created", f"{record.created_at} by {who(record.created_by, record.created_by_person)}"),
        ("updated", f"{record.updated_at} by {who(record.updated_by, record.updated_by_person)}"),
        ("content sha256", record.content_sha256),
    ]
    for field, value in rows:
        table.add_row(field, escape(value))
    console.print(table)


def render_deleted(console: Console, deleted: DeletedMemory) -> None:
    console.print(
        f"Deleted memory {deleted.memory_id} (version {deleted.version}) permanently; it "
        "cannot be recovered from the store."
    )
    if not deleted.purged:
        console.print(
            "Another rutter process held a long read, so the WAL checkpoint did not finish: "
            "the text leaves the -wal file at the next checkpoint (e.g. when every rutter "
            "process has closed the store)."
        )
