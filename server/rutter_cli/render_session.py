"""Human-readable output of the session commands. JSON output never passes through here.

Text written by people and agents (messages, notes, titles) is escaped: `[...]` in it is never
console markup.
"""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from rutter_cli.render import who
from rutter_core.app.continuity import (
    AddedMessage,
    ContinuityNode,
    Message,
    MessageList,
    Note,
    NoteList,
    ThreadList,
)

MAX_LINE = 80


def _line(text: str) -> str:
    first = text.splitlines()[0] if text else ""
    if len(first) > MAX_LINE or first != text:
        return first[: MAX_LINE - 1] + "…"
    return first


def _provenance(message: Message) -> str:
    if message.external_id is None:
        return message.source
    return f"{message.source} ({message.external_id})"


def render_added_message(console: Console, added: AddedMessage) -> None:
    if added.created:
        said = f"Added message {added.message_id} (#{added.seq}) to thread {added.thread_id}"
    else:
        said = (
            f"Already there: message {added.message_id} (#{added.seq}) has this external ID; "
            "nothing was added"
        )
    console.print(escape(said), highlight=False, soft_wrap=True)
    if added.redacted:
        console.print("  secrets in the text were replaced by [REDACTED:<kind>] markers.")


def render_threads(console: Console, found: ThreadList) -> None:
    if not found.items:
        console.print(
            "No threads yet: a run starts one (`rutter run create`), and so does importing an "
            "agent's transcript (`rutter session import`)."
        )
        return
    table = Table(box=None, pad_edge=False)
    for column in ("last activity", "messages", "source", "thread", "title"):
        table.add_column(column, no_wrap=column != "title", overflow="fold")
    for thread in found.items:
        table.add_row(
            thread.last_activity_at or "-",
            str(thread.message_count),
            escape(thread.source),
            thread.thread_id,
            escape(thread.title or "-"),
        )
    console.print(table)


def render_messages(console: Console, found: MessageList) -> None:
    if not found.messages:
        console.print(f"No messages in thread {found.thread_id}.")
        return
    for message in found.messages:
        console.print(
            escape(
                f"#{message.seq} {_role(message)} · {_provenance(message)} · "
                f"{message.created_at} · {message.message_id}"
            ),
            style="bold",
            highlight=False,
            soft_wrap=True,
        )
        console.print(escape(message.text), highlight=False, soft_wrap=True)
    if found.has_more:
        first = found.messages[0].seq
        console.print(f"Older messages exist: --before {first} lists them.")


def _role(message: Message) -> str:
    """The role, and for text an agent's harness inserted, its kind (`system (command)`)."""
    return message.role if message.injected is None else f"{message.role} ({message.injected})"


def render_note(console: Console, note: Note, *, headline: str) -> None:
    console.print(
        escape(
            f"{headline}: {note.kind} note {note.note_id}, version {note.version}, {note.status}"
            + (f" (by {note.superseded_by})" if note.superseded_by else "")
        ),
        highlight=False,
        soft_wrap=True,
    )
    console.print(escape(note.text), highlight=False, soft_wrap=True)
    if note.references:
        console.print(
            escape("references: " + ", ".join(note.references)), highlight=False, soft_wrap=True
        )


def render_notes(console: Console, found: NoteList, *, all_notes: bool) -> None:
    if not found.notes:
        which = "No notes" if all_notes else "No active notes (--all shows superseded ones too)"
        console.print(f"{which} in thread {found.thread_id}.")
        return
    table = Table()
    table.add_column("note", no_wrap=True)
    table.add_column("kind", no_wrap=True)
    table.add_column("v", justify="right", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("updated", no_wrap=True)
    table.add_column("text", overflow="fold", ratio=1)
    for note in found.notes:
        table.add_row(
            note.note_id,
            note.kind,
            str(note.version),
            note.status,
            note.updated_at,
            escape(_line(note.text)),
        )
    console.print(table)


def render_node(console: Console, node: ContinuityNode, *, headline: str) -> None:
    console.print(
        escape(
            f"{headline} {node.node_id} ({node.kind}) of run {node.run_id}, below "
            f"{node.parent_node_id or 'nothing'}"
        ),
        highlight=False,
        soft_wrap=True,
    )
    snapshot = node.snapshot
    if snapshot is None:
        created = who(node.created_by, node.created_by_person)
        console.print(escape(f"  created {node.created_at} by {created}; no snapshot"))
        return
    table = Table(show_header=False, box=None)
    table.add_column("field", style="bold", no_wrap=True)
    table.add_column("value", overflow="fold")
    git = snapshot.git
    git_line = (
        f"none ({snapshot.git_reason})"
        if git is None
        else f"{git.branch or '(detached HEAD)'} at {git.head}"
    )
    config = snapshot.project_configuration
    rows = (
        ("title", snapshot.title),
        ("summary", _line(snapshot.summary) if snapshot.summary else "-"),
        ("fingerprint", snapshot.fingerprint),
        ("created", f"{node.created_at} by {who(node.created_by, node.created_by_person)}"),
        ("messages", f"{len(snapshot.messages.items)} of {snapshot.messages.total}"),
        (
            "latest summary",
            "-" if snapshot.compaction_summary is None else snapshot.compaction_summary.note_id,
        ),
        (
            "memories",
            f"{len(snapshot.memory.references)} of {snapshot.memory.total_active} active "
            "referenced (no bodies)",
        ),
        (
            "instructions",
            f"revision {snapshot.instructions.revision}, {snapshot.instructions.fingerprint}",
        ),
        (
            "configuration",
            config.fingerprint
            + (" (as pinned)" if config.matches_pinned else " (differs from pinned)")
            if config.fingerprint
            else f"unreadable ({config.reason})",
        ),
        ("git", git_line),
        ("inherits", ", ".join(snapshot.inherits)),
    )
    for name, value in rows:
        table.add_row(name, escape(value))
    console.print(table)
