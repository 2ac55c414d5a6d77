"""Compaction's operations (docs/reference/continuity.md).

A compaction is three steps, so that no transaction is held open while a summarizer runs:

1. `start`, one write transaction: the operation key is looked up (a completed one answers its
   stored result, and the summarizer is not called again), the thread must have no compaction
   running or awaiting verification, and more than `KEPT_MESSAGES` messages since its previous
   compaction. The summarizer's input is gathered (newest older messages first, while they fit
   its input window) and the operation is stored `running`, with what will be sent recorded as
   IDs and digests.
2. The surface announces the operation key, then the summarizer runs, outside any transaction.
3. `finish`, one write transaction: when the thread's messages are still the ones read, the
   summary and the compaction marker (the range of messages it covers) are written together;
   otherwise `thread_changed` and nothing is stored. `fail` records a summarizer's failure.

A process that dies during step 2 leaves its operation `running` with an owner that no longer
exists: the next compaction of the thread (or the same key) finds it, marks it
`pending_verification` and is refused `compaction_pending`. It is never sent again by itself;
`resolve` abandons it or retries it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from sqlalchemy.engine import Connection

from rutter_core.continuity import repo as continuity_repo
from rutter_core.continuity.compaction import repo
from rutter_core.continuity.compaction.latest import latest_summary
from rutter_core.continuity.compaction.model import (
    KEPT_MESSAGES,
    MAX_SUMMARY_BYTES,
    Compaction,
    SummarizerFailed,
    SummarizerName,
    Summary,
)
from rutter_core.continuity.compaction.owners import current_owner, owner_alive
from rutter_core.continuity.compaction.request import (
    CompactionRequest,
    Estimate,
    check_request,
    request_digest,
    require_operation_key,
)
from rutter_core.continuity.compaction.summarizers import (
    SummarizerInput,
    render_prompt,
    usable_summary,
)
from rutter_core.continuity.model import Message
from rutter_core.continuity.threads import require_thread
from rutter_core.discovery.fingerprint import text_sha256
from rutter_core.discovery.redaction import redact
from rutter_core.kernel.clock import now_rfc3339
from rutter_core.kernel.errors import (
    ConflictError,
    Hint,
    NotFoundError,
    RejectedError,
    RutterError,
)
from rutter_core.kernel.ids import new_id
from rutter_core.store import Store

ResolveAction = Literal["abandon", "retry"]


@dataclass(frozen=True, slots=True)
class Started:
    """A compaction stored `running` by this process: what the summarizer is to read."""

    compaction_id: str
    operation_key: str
    thread_id: str
    summarizer: SummarizerName
    owner: str
    given: SummarizerInput
    estimate: Estimate


def _refuse_open(conn: Connection, found: repo.CompactionRow, now: str) -> None:
    """Refuse because `found` is running (`compaction_in_progress`) or its result is unknown
    (`compaction_pending`, after marking a dead owner's operation so)."""
    if found.status == "running" and owner_alive(found.owner, found.updated_at):
        raise ConflictError(
            "compaction_in_progress",
            f"compaction {found.compaction_id} (operation key {found.operation_key}) of thread "
            f"{found.thread_id} is running; wait for it to finish",
            details={
                "compaction_id": found.compaction_id,
                "operation_key": found.operation_key,
                "thread_id": found.thread_id,
            },
        )
    if found.status == "running":
        repo.set_status(
            conn, found.compaction_id, expected=("running",), status="pending_verification",
            now=now,
        )  # fmt: skip
    raise ConflictError(
        "compaction_pending",
        f"compaction {found.compaction_id} (operation key {found.operation_key}) of thread "
        f"{found.thread_id} stopped while its summarizer was running, so whether it was "
        "answered is unknown; it is never sent again by itself",
        details={
            "compaction_id": found.compaction_id,
            "operation_key": found.operation_key,
            "thread_id": found.thread_id,
            "status": "pending_verification",
        },
        hint=Hint("resolve_compaction", {"operation_key": found.operation_key}),
    )


# -- the operation ------------------------------------------------------------------------------


def document(row: repo.CompactionRow) -> Compaction:
    summary = None
    if row.summary_text is not None and row.summary_tokens is not None:
        summary = Summary(text=row.summary_text, tokens=row.summary_tokens)
    return Compaction(
        compaction_id=row.compaction_id,
        operation_key=row.operation_key,
        thread_id=row.thread_id,
        status=row.status,
        summary=summary,
        kept_message_ids=row.kept_message_ids,
        compacted_message_count=row.compacted_count,
        unread_message_count=row.unread_count,
        summarizer=row.summarizer,
        created_by_person=row.created_by_person,
    )


def _stored_outcome(found: repo.CompactionRow, request_sha256: str, now: str,
                    conn: Connection) -> Compaction:  # fmt: skip
    """What the same operation key answers again."""
    if found.request_sha256 != request_sha256:
        raise ConflictError(
            "operation_key_conflict",
            f"operation key {found.operation_key} was used for another compaction request (of "
            f"thread {found.thread_id}); use a new key for a new request",
            details={"operation_key": found.operation_key, "compaction_id": found.compaction_id},
        )
    if found.status == "completed":
        return document(found)
    if found.status == "failed":
        error_class: type[RutterError] = (
            ConflictError if found.error_code == "thread_changed" else SummarizerFailed
        )
        raise error_class(
            found.error_code or "summarizer_failed",
            f"compaction {found.compaction_id} (operation key {found.operation_key}) failed "
            "and stored nothing; this is its stored outcome: compact again with a new key",
            details={"compaction_id": found.compaction_id, "operation_key": found.operation_key,
                     "stored_outcome": True},
        )  # fmt: skip
    if found.status == "abandoned":
        raise ConflictError(
            "compaction_abandoned",
            f"compaction {found.compaction_id} (operation key {found.operation_key}) was "
            "abandoned; compact again with a new key",
            details={"compaction_id": found.compaction_id, "operation_key": found.operation_key},
        )
    _refuse_open(conn, found, now)
    raise AssertionError("unreachable")  # pragma: no cover


def start(store: Store, request: CompactionRequest, *, actor: str) -> Compaction | Started:
    """Step 1 (see the module docstring): the stored result of the same key, or the operation
    stored `running` with its summarizer's input."""
    request = check_request(request)
    digest = request_digest(request)
    now = now_rfc3339()
    owner = current_owner()
    with store.write() as conn:
        if request.operation_key is not None:
            found = repo.find_by_key(conn, request.operation_key)
            if found is not None:
                return _stored_outcome(found, digest, now, conn)
        require_thread(conn, request.thread_id, writable=True)
        open_one = repo.find_open(conn, request.thread_id)
        if open_one is not None:
            _refuse_open(conn, open_one, now)
        previous = repo.latest_completed(conn, request.thread_id)
        after_seq = 0 if previous is None else previous.through_seq
        since = repo.count_after(conn, request.thread_id, after_seq)
        if since <= KEPT_MESSAGES:
            raise RejectedError(
                "nothing_to_compact",
                f"thread {request.thread_id} has {since} messages since its previous "
                f"compaction; a compaction keeps the newest {KEPT_MESSAGES} verbatim, so there "
                "is nothing older to summarize",
                details={"thread_id": request.thread_id, "messages_since": since,
                         "kept": KEPT_MESSAGES},
            )  # fmt: skip
        kept = repo.newest_after(conn, request.thread_id, after_seq, KEPT_MESSAGES)
        observed_seq = kept[-1].seq
        through_seq = kept[0].seq - 1
        compaction_id = new_id("cmp")
        key = request.operation_key or compaction_id
        given, record = _gather(conn, request, after_seq, through_seq)
        record["observed_seq"] = observed_seq
        repo.insert_compaction(
            conn, compaction_id=compaction_id, operation_key=key, thread_id=request.thread_id,
            request_sha256=digest, summarizer=request.summarizer, owner=owner,
            after_seq=after_seq, through_seq=through_seq, observed_seq=observed_seq,
            kept_message_ids=tuple(message.message_id for message in kept),
            compacted_count=given.compacted, unread_count=given.unread, input_record=record,
            actor=actor, now=now,
        )  # fmt: skip
    return Started(
        compaction_id, key, request.thread_id, request.summarizer, owner, given, request.estimate
    )


def _gather(
    conn: Connection, request: CompactionRequest, after_seq: int, through_seq: int
) -> tuple[SummarizerInput, dict[str, object]]:
    """The summarizer's input and its record (IDs and digests, never a text)."""
    notes = tuple(
        note
        for note in continuity_repo.select_notes(conn, request.thread_id, include_superseded=False)
        if note.kind in ("decision", "summary")
    )
    previous = latest_summary(conn, request.thread_id, before_seq=through_seq + 1)
    left = request.input_tokens
    read: list[Message] = []
    for message in repo.iter_newest_first(conn, request.thread_id, after_seq, through_seq):
        cost = request.estimate(message.text) + 4
        if cost > left:
            break
        left -= cost
        read.append(message)
    read.reverse()
    compacted = through_seq - after_seq
    given = SummarizerInput(
        thread_id=request.thread_id,
        focus=request.focus,
        previous_summary=None if previous is None else previous.text,
        notes=notes,
        messages=tuple(read),
        compacted=compacted,
        unread=compacted - len(read),
    )
    record: dict[str, object] = {
        "after_seq": after_seq,
        "through_seq": through_seq,
        "input_tokens": request.input_tokens,
        "read_message_count": len(read),
        "read_from_seq": read[0].seq if read else None,
        "first_read_message_id": read[0].message_id if read else None,
        "last_read_message_id": read[-1].message_id if read else None,
        "messages_sha256": text_sha256(
            "\n".join(f"{m.message_id}:{text_sha256(m.text)}" for m in read)
        ),
        "notes": [
            {"id": note.note_id, "version": note.version, "sha256": text_sha256(note.text)}
            for note in notes
        ],
        "previous_summary": None
        if previous is None
        else {"source": previous.source, "id": previous.id, "sha256": text_sha256(previous.text)},
        "focus_sha256": None if request.focus is None else text_sha256(request.focus),
        "prompt_sha256": None
        if request.summarizer == "extractive"
        else text_sha256(render_prompt(given)),
    }
    if request.endpoint is not None:
        record["endpoint"] = request.endpoint.record()
    return given, record


def finish(store: Store, started: Started, output: str) -> Compaction:
    """Step 3: the summary and the compaction marker in one transaction, when the thread's
    messages are still the ones read (`thread_changed` otherwise, nothing stored)."""
    text = usable_summary(output, started.summarizer)
    cleaned = redact(text)
    summary = cleaned.text
    encoded = summary.encode("utf-8")
    if len(encoded) > MAX_SUMMARY_BYTES:
        summary = encoded[:MAX_SUMMARY_BYTES].decode("utf-8", errors="ignore")
    now = now_rfc3339()
    with store.write() as conn:
        row = _own_row(conn, started)
        if repo.last_seq(conn, started.thread_id) != row.observed_seq:
            repo.set_status(
                conn, row.compaction_id, expected=("running", "pending_verification"),
                status="failed", error_code="thread_changed", now=now,
            )  # fmt: skip
            changed = ConflictError(
                "thread_changed",
                f"thread {started.thread_id} received messages while compaction "
                f"{row.compaction_id} ran; nothing was stored and the previous summary stays "
                "the latest: compact again",
                details={"thread_id": started.thread_id, "compaction_id": row.compaction_id},
            )
            store_failure = changed
        else:
            store_failure = None
            done = None
            repo.set_status(
                conn, row.compaction_id, expected=("running", "pending_verification"),
                status="completed", now=now,
                summary=(summary, max(1, started.estimate(summary)), bool(cleaned.findings)),
            )  # fmt: skip
            done = repo.find_by_key(conn, row.operation_key)
    if store_failure is not None or done is None:
        # The failure is recorded (committed above) before it is raised.
        raise store_failure or AssertionError("a completed compaction was not found")
    return document(done)


def fail(store: Store, started: Started, code: str) -> None:
    """Record that the operation failed (`code`), storing nothing of a summary."""
    with store.write() as conn:
        repo.set_status(
            conn, started.compaction_id, expected=("running", "pending_verification"),
            status="failed", error_code=code, now=now_rfc3339(),
        )  # fmt: skip


def mark_pending(store: Store, started: Started) -> None:
    """Its process stopped waiting for the summarizer in an unexpected way: the result is
    unknown, so the operation is `pending_verification` (never re-sent by itself)."""
    with store.write() as conn:
        repo.set_status(
            conn, started.compaction_id, expected=("running",),
            status="pending_verification", now=now_rfc3339(),
        )  # fmt: skip


def _own_row(conn: Connection, started: Started) -> repo.CompactionRow:
    row = repo.find_by_key(conn, started.operation_key)
    if row is None or row.owner != started.owner or row.status not in (
        "running", "pending_verification",
    ):  # fmt: skip
        raise ConflictError(
            "compaction_resolved",
            f"compaction {started.compaction_id} was resolved by an operator while its "
            "summarizer ran; its summary was not stored",
            details={"compaction_id": started.compaction_id,
                     "operation_key": started.operation_key},
        )  # fmt: skip
    return row


def resolve(
    store: Store,
    operation_key: str,
    action: ResolveAction,
    *,
    actor: str,
    estimate: Estimate,
    check: Callable[[SummarizerName], object] | None = None,
) -> Compaction | Started:
    """An operator's answer to a `pending_verification` compaction: `abandon` it (the thread
    can be compacted again), or `retry` it (the same messages are read and the summarizer
    called again, under the same key; without the focus, of which only a digest is stored).
    `check(summarizer)` raises before anything changes when that summarizer cannot run here
    (a command or an endpoint not given)."""
    key = require_operation_key(operation_key)
    assert key is not None
    now = now_rfc3339()
    owner = current_owner()
    with store.write() as conn:
        found = repo.find_by_key(conn, key)
        if found is None:
            raise NotFoundError(
                "compaction_not_found",
                "no compaction has this operation key",
                details={"operation_key": key},
            )
        if found.status == "running" and owner_alive(found.owner, found.updated_at):
            _refuse_open(conn, found, now)
        if found.status not in ("running", "pending_verification"):
            raise ConflictError(
                "compaction_not_pending",
                f"compaction {found.compaction_id} is {found.status}: only one awaiting "
                "verification can be resolved",
                details={"compaction_id": found.compaction_id, "status": found.status},
            )
        if action == "retry" and check is not None:
            check(found.summarizer)  # type: ignore[arg-type]  # its summarizer can be built here (a typed error if not)
        if action == "abandon":
            repo.set_status(
                conn, found.compaction_id, expected=("running", "pending_verification"),
                status="abandoned", now=now,
            )  # fmt: skip
            done = repo.find_by_key(conn, key)
            assert done is not None
            return document(done)
        if repo.last_seq(conn, found.thread_id) != found.observed_seq:
            repo.set_status(
                conn, found.compaction_id, expected=("running", "pending_verification"),
                status="failed", error_code="thread_changed", now=now,
            )  # fmt: skip
            stale = True
        else:
            stale = False
            request = CompactionRequest(
                thread_id=found.thread_id,
                estimate=estimate,
                summarizer=found.summarizer,  # type: ignore[arg-type]
                input_tokens=int(found.input["input_tokens"]),
            )
            given, _ = _gather(conn, request, found.after_seq, found.through_seq)
            repo.set_status(
                conn, found.compaction_id, expected=("running", "pending_verification"),
                status="running", owner=owner, now=now,
            )  # fmt: skip
    if stale:
        raise ConflictError(
            "thread_changed",
            f"thread {found.thread_id} received messages since compaction "
            f"{found.compaction_id} started; it is marked failed: compact again",
            details={"thread_id": found.thread_id, "compaction_id": found.compaction_id},
        )
    return Started(
        found.compaction_id, key, found.thread_id, request.summarizer, owner, given, estimate
    )


__all__ = [
    "CompactionRequest",
    "ResolveAction",
    "Started",
    "check_request",
    "document",
    "fail",
    "finish",
    "mark_pending",
    "require_operation_key",
    "resolve",
    "start",
]
