"""The conversation a run's assembled context carries (docs/reference/assembly.md): the latest
summary, the newest messages since it, and the thread pins, gathered across continuity for
`app.assembly`.

- A run's own thread comes first: its latest summary (a rutter compaction, an imported
  compaction summary, or the summary note written last) and its messages after what that
  summary stands for.
- A run branched from a checkpoint (`session resume`, `session fork`) starts a new thread, so
  until its own thread holds a compaction it is given the checkpoint's summary and the
  messages the checkpoint carried, then its own.
- Pins: the run's own thread's; a resumed run also gets the pins of the thread it resumes (the
  task's pins, read as they are now, following resumes back to the thread that began the task);
  a fork does not (its answer says pins are not inherited).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from sqlalchemy.engine import Connection

from rutter_core.app.receipts import as_receipt
from rutter_core.assembly.model import MESSAGES_CONSIDERED
from rutter_core.assembly.plan import Candidate
from rutter_core.continuity.compaction.latest import (
    covered_through,
    find_message,
    latest_summary,
    messages_since,
)
from rutter_core.continuity.model import Message
from rutter_core.continuity.pins.model import Pin
from rutter_core.continuity.pins.service import list_pins
from rutter_core.continuity.service import branch_origin

MAX_RESUME_HOPS: Final = 32
"""How far back a chain of resumes is followed for the task's pins."""


@dataclass(slots=True)
class Conversation:
    summary: Candidate | None = None
    messages: list[Candidate] = field(default_factory=list)
    not_considered: int = 0
    pins: list[Pin] = field(default_factory=list)


def _message(
    message_id: str, seq: int, role: str, text: str, run_id: str, original: Message | None
) -> Candidate:
    """A message as delivered: a large tool result as its receipt, else verbatim (`original`:
    the stored message, when `text` may be a checkpoint's cut copy of it)."""
    if role == "tool":
        receipt = as_receipt(original, message_id, seq, role, text, run_id)
        if receipt is not None:
            return receipt
    return Candidate(
        kind="message", id=message_id, version=1, text=f"[{seq} {role}]\n{text}",
        from_person=role == "user",
    )  # fmt: skip


def gather(conn: Connection, run_id: str, thread_id: str) -> Conversation:
    """The run's conversation, in the caller's transaction."""
    found = Conversation()
    own = latest_summary(conn, thread_id)
    origin = branch_origin(conn, run_id)
    carried = None if origin is None or origin[1].snapshot is None else origin[1].snapshot
    use_checkpoint = (
        carried is not None
        and (own is None or own.source == "note")
        and (carried.compaction_summary is not None or carried.messages.items)
    )
    if use_checkpoint and carried is not None:
        summary = carried.compaction_summary
        through = None
        if summary is not None:
            found.summary = Candidate(
                kind="summary", id=summary.note_id, version=summary.version, text=summary.text
            )
            through = covered_through(conn, summary.note_id)
        for item in carried.messages.items:
            if through is None or item.seq > through:
                found.messages.append(
                    _message(
                        item.message_id,
                        item.seq,
                        item.role,
                        item.text,
                        run_id,
                        find_message(conn, item.message_id) if item.role == "tool" else None,
                    )
                )
        after = 0
    else:
        if own is not None:
            found.summary = Candidate(kind="summary", id=own.id, version=own.version, text=own.text)
        after = 0 if own is None or own.through_seq is None else own.through_seq
    recent, total = messages_since(conn, thread_id, after, MESSAGES_CONSIDERED)
    found.messages.extend(_message(m.message_id, m.seq, m.role, m.text, run_id, m) for m in recent)
    found.not_considered = total - len(recent)
    found.pins = list(list_pins(conn, thread_id, run_id=run_id).pins)
    if origin is not None and origin[0] == "resume":
        found.pins = [*_task_pins(conn, origin[1].thread_id, origin[1].run_id), *found.pins]
    return found


def _task_pins(conn: Connection, thread_id: str, run_id: str) -> list[Pin]:
    """The pins of the thread a resume continues, and of the threads it resumed in turn."""
    pins: list[Pin] = []
    for _ in range(MAX_RESUME_HOPS):
        pins = [*list_pins(conn, thread_id).pins, *pins]
        origin = branch_origin(conn, run_id)
        if origin is None or origin[0] != "resume":
            break
        thread_id, run_id = origin[1].thread_id, origin[1].run_id
    return pins


__all__ = ["Conversation", "gather"]
