"""A thread's pins (docs/reference/pins.md): add, list, edit, remove.

Pins belong to their thread: every later run of the thread carries them, and a new thread
(a fork or a resume starts one) carries none. A thread holds at most 32 pins of at most 8192
characters each and 32768 together, checked under the write lock, so two writers cannot both
fill the last place. Text is redacted per section 8 and stored redacted, like notes and
messages (`redacted` says so); the bounds apply to the redacted text. Every change names the
version read and is `conflict` when the pin moved on. Only operator surfaces write pins: the
actor is refused here, and the store's CHECKs refuse any other writer (`mcp` included).
"""

from __future__ import annotations

import re
from typing import Final

from sqlalchemy.engine import Connection

from rutter_core.continuity.pins import repo
from rutter_core.continuity.pins.model import (
    MAX_PIN_CHARS,
    MAX_PINS,
    MAX_TOTAL_PIN_CHARS,
    Pin,
    PinList,
    RemovedPin,
)
from rutter_core.continuity.policy import CleanText, clean_text, require_thread_id
from rutter_core.continuity.threads import require_thread
from rutter_core.kernel.actors import (
    OperatorActor,
    require_operator,
)
from rutter_core.kernel.clock import now_rfc3339
from rutter_core.kernel.errors import ConflictError, Hint, NotFoundError, RejectedError, UsageError
from rutter_core.kernel.ids import new_id
from rutter_core.store import Store

PIN_ID: Final = re.compile("pin_[0-9A-HJKMNP-TV-Z]{26}")


def clean_pin_text(field: str, text: object) -> CleanText:
    """Text as a pin (or a proposal, or a reply) stores it: checked as a thread's text is and
    readable (what the person is shown is what gets pinned), redacted, and at most 8192
    characters before redaction and after it."""
    if isinstance(text, str):
        _within(field, len(text.replace("\r\n", "\n")), redacted=False)
    clean = clean_text(field, text, max_bytes=4 * MAX_PIN_CHARS, readable=True)
    _within(field, len(clean.text), redacted=True)
    return clean


def _within(field: str, chars: int, *, redacted: bool) -> None:
    if chars > MAX_PIN_CHARS:
        after = " once its secrets are replaced by markers" if redacted else ""
        raise RejectedError(
            "text_too_large",
            f"the {field} is {chars} characters{after}; a pin holds at most {MAX_PIN_CHARS}",
            details={"field": field, "chars": chars, "max_chars": MAX_PIN_CHARS},
        )


def require_pin_id(pin_id: object) -> str:
    if isinstance(pin_id, str) and PIN_ID.fullmatch(pin_id) is not None:
        return pin_id
    raise NotFoundError(
        "pin_not_found",
        "no such pin: a pin ID is pin_ followed by 26 ULID characters",
        hint=Hint("find_pin"),
    )


def require_version(version: object) -> int:
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise UsageError(
            "invalid_version", "a version is a whole number from 1 (the pin's version as last read)"
        )
    return version


def add_pin(store: Store, thread_id: str, *, text: str, actor: str) -> Pin:
    """A new pin of the thread at version 1."""
    operator = require_operator(actor, what="write pins")
    thread_id = require_thread_id(thread_id)
    clean = clean_pin_text("text", text)
    now = now_rfc3339()
    with store.write() as conn:
        return insert_within_bounds(
            conn, thread_id, clean, proposal_id=None, actor=operator, now=now
        )


def insert_within_bounds(
    conn: Connection,
    thread_id: str,
    clean: CleanText,
    *,
    proposal_id: str | None,
    actor: OperatorActor,
    now: str,
) -> Pin:
    """Add the pin in the caller's write transaction if the thread (active) has room for it."""
    require_thread(conn, thread_id, writable=True)
    count, chars = repo.pin_totals(conn, thread_id)
    _room(thread_id, count + 1, chars + len(clean.text))
    return repo.insert_pin(
        conn,
        pin_id=new_id("pin"),
        thread_id=thread_id,
        text=clean.text,
        redacted=clean.redacted,
        proposal_id=proposal_id,
        actor=actor,
        now=now,
    )


def _room(thread_id: str, count: int, chars: int) -> None:
    if count > MAX_PINS:
        raise RejectedError(
            "too_many_pins",
            f"thread {thread_id} already holds {MAX_PINS} pins, the most a thread holds; "
            "remove one first",
            details={"thread_id": thread_id, "max_pins": MAX_PINS},
            hint=Hint("list_pins", {"thread_id": thread_id}),
        )
    if chars > MAX_TOTAL_PIN_CHARS:
        raise RejectedError(
            "pins_too_large",
            f"the pins of thread {thread_id} would hold {chars} characters together; the "
            f"limit is {MAX_TOTAL_PIN_CHARS}: shorten or remove a pin first",
            details={"thread_id": thread_id, "chars": chars, "max_chars": MAX_TOTAL_PIN_CHARS},
            hint=Hint("list_pins", {"thread_id": thread_id}),
        )


def list_pins(conn: Connection, thread_id: str, *, run_id: str | None = None) -> PinList:
    """The thread's pins, oldest first, in the caller's transaction."""
    thread_id = require_thread_id(thread_id)
    require_thread(conn, thread_id, writable=False)
    found = repo.select_pins(conn, thread_id)
    return PinList(
        thread_id=thread_id,
        run_id=run_id,
        pins=tuple(found),
        count=len(found),
        total_chars=sum(len(pin.text) for pin in found),
    )


def edit_pin(store: Store, pin_id: str, *, version: int, text: str, actor: str) -> Pin:
    """The pin's new text as version + 1; the same text changes nothing."""
    operator = require_operator(actor, what="write pins")
    pin_id = require_pin_id(pin_id)
    version = require_version(version)
    clean = clean_pin_text("text", text)
    now = now_rfc3339()
    with store.write() as conn:
        pin = _at(conn, pin_id, version)
        if pin.text == clean.text:
            return pin
        require_thread(conn, pin.thread_id, writable=True)
        count, chars = repo.pin_totals(conn, pin.thread_id, excluding=pin.pin_id)
        _room(pin.thread_id, count + 1, chars + len(clean.text))
        updated = repo.update_pin(
            conn, pin, text=clean.text, redacted=pin.redacted or clean.redacted,
            actor=operator, now=now,
        )  # fmt: skip
        if updated is None:  # pragma: no cover - only without SQLite's write lock
            raise _stale(pin, version)
        return updated


def remove_pin(store: Store, pin_id: str, *, version: int, actor: str) -> RemovedPin:
    """Remove the pin (at the version read): later runs of its thread no longer carry it."""
    require_operator(actor, what="write pins")
    pin_id = require_pin_id(pin_id)
    version = require_version(version)
    with store.write() as conn:
        pin = _at(conn, pin_id, version)
        if not repo.delete_pin(conn, pin):  # pragma: no cover - only without the write lock
            raise _stale(pin, version)
    return RemovedPin(pin_id=pin.pin_id, thread_id=pin.thread_id, version=pin.version)


def _at(conn: Connection, pin_id: str, version: int) -> Pin:
    pin = repo.find_pin(conn, pin_id)
    if pin is None:
        raise NotFoundError(
            "pin_not_found", f"no pin {pin_id}", details={"pin_id": pin_id}, hint=Hint("find_pin")
        )
    if pin.version != version:
        raise _stale(pin, version)
    return pin


def _stale(current: Pin, expected: int) -> ConflictError:
    return ConflictError(
        "conflict",
        f"pin {current.pin_id} is at version {current.version}, not {expected}: it changed "
        "since you read it",
        details={
            "pin_id": current.pin_id,
            "expected_version": expected,
            "current_version": current.version,
        },
        hint=Hint(
            "reread_pin",
            {"pin_id": current.pin_id, "thread_id": current.thread_id, "version": current.version},
        ),
    )


def remove_workspace_pins(conn: Connection, workspace_id: str) -> tuple[int, int]:
    """Delete the workspace's pins and pin proposals in the caller's transaction (`workspace
    remove --cascade`); how many of each."""
    return repo.delete_workspace_pins(conn, workspace_id)
