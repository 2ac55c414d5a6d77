"""Human-readable output of `rutter session import`. JSON output never passes through here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape

if TYPE_CHECKING:
    from rich.console import Console

    from rutter_core.app.transcripts import TranscriptImport

_REASONS = {
    "invalid_utf8": "not UTF-8",
    "nul_byte": "NUL byte",
    "invalid_json": "not JSON",
    "not_an_object": "not a JSON object",
    "unexpected_shape": "not a record this agent writes",
    "invalid_id": "unusable message ID",
    "line_too_long": "over 32 MiB",
    "truncated": "last line without its newline",
    "nesting_too_deep": "nested more than 64 levels deep",
}


_LEFT_OUT = {
    "abandoned": "of a branch the person rewound away from",
    "rolled_back": "of turns the agent rolled back",
}


def render_import(console: Console, done: TranscriptImport, *, headline: str) -> None:
    where = "a new thread" if done.thread_created else "thread"
    console.print(
        escape(
            f"{headline}: {done.imported} message(s) from {done.agent} session "
            f"{done.session_id} into {where} {done.thread_id} (workspace {done.workspace_id}); "
            f"{done.already_present} already there, {done.lines} line(s) read"
        ),
        soft_wrap=True,
    )
    if done.run_id is not None:
        how = "created" if done.run_created else "the thread's newest run"
        console.print(f"  run: {done.run_id} ({how})", markup=False)
    if done.redacted:
        console.print(
            f"  {done.redacted} with secrets replaced by [REDACTED:<kind>] markers.", markup=False
        )
    for cut in done.truncated:
        console.print(
            f"  line {cut.line}: cut to 64 KiB (was {cut.original_bytes} bytes)", markup=False
        )
    left_out = ", ".join(
        f"{count} {_LEFT_OUT.get(reason, reason)}"
        for reason, count in done.omitted.items()
        if count
    )
    if left_out:
        console.print(f"  left out: {left_out}", markup=False)
    for skip in done.skipped:
        console.print(
            f"  skipped line {skip.line}: {_REASONS.get(skip.reason, skip.reason)}", markup=False
        )
    if done.skipped_total > len(done.skipped):
        console.print(f"  ... {done.skipped_total - len(done.skipped)} more skipped", markup=False)


def render_progress(console: Console, done: TranscriptImport) -> None:
    console.print(
        f"{done.imported} message(s) imported so far into thread {done.thread_id}", markup=False
    )
