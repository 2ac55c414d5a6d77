"""Experience candidates, the operations (docs/reference/memory.md).

**The queue is derived, never written.** Listing a workspace reads its sources (active
`decision` and `summary` notes with at least one reference, newest change first, at most 200)
and keeps those whose thread has a completion record (`repo.completions`): each becomes a
pending candidate, at most 50. No model, tool or agent takes part, and nothing is stored for a
pending candidate: its ID names its note and the note's version (`cand_<note>_<version>`), so it
is the same for as long as the note is, and a new one when the note changes.

**Review is the person's.** Confirm names the candidate's version, its fingerprint, the note's
version and an explicit `confirm=true`: a note that changed since is `candidate_stale`, a stale
candidate version `conflict`. The project memory (actor: the operator's surface, provenance
`operator_explicit`, every rule of `memory.policy`: a note stored redacted is saved only when
the redacted text is asked for) and the resolved candidate are written in one transaction.
Ignore resolves without a memory. A resolved candidate is a row with no title, text or
references; asked again, the same confirm or ignore writes nothing and answers the same.

Candidates are read by no assembly, history search or MCP tool.
"""

from __future__ import annotations

import re
from typing import Final

from sqlalchemy.engine import Connection

from rutter_core.candidates import repo
from rutter_core.candidates.model import (
    CONFIDENCE_NOTES,
    MAX_LISTED,
    MAX_SCANNED,
    PROTOCOL_VERSION,
    CandidateList,
    CandidateReview,
    CandidateSource,
    Completion,
    CompletionKind,
    ConfirmedCandidate,
    MemoryCandidate,
)
from rutter_core.discovery.fingerprint import fingerprint
from rutter_core.kernel.actors import (
    OperatorActor,
    require_operator,
)
from rutter_core.kernel.clock import now_rfc3339
from rutter_core.kernel.errors import ConflictError, Hint, NotFoundError, UsageError
from rutter_core.memory import service as memory
from rutter_core.store import Store
from rutter_core.workspaces.service import project_workspace_ids, require_workspace

_CANDIDATE_ID = re.compile(r"cand_([0-9A-HJKMNP-TV-Z]{26})_([1-9][0-9]{0,9})")
_PENDING_VERSION: Final = 1
_RESOLVED_VERSION: Final = 2
# The strongest proof first: a run that completed, a delivery, then a reply that ended.
_COMPLETION_ORDER: Final[tuple[CompletionKind, ...]] = (
    "run_completed",
    "delivery_report",
    "delivery_checkpoint",
    "reply_completed",
)
_TITLE_BYTES: Final = 200
_KIND_LABEL: Final = {"decision": "Decision", "summary": "Summary"}


def candidate_id_of(note_id: str, note_version: int) -> str:
    return f"cand_{note_id.removeprefix('note_')}_{note_version}"


def list_candidates(store: Store, workspace_id: str) -> CandidateList:
    """The workspace's pending candidates (at most 50 of at most 200 sources scanned)."""
    with store.read() as conn:
        require_workspace(conn, workspace_id)
        sources = repo.select_sources(
            conn, project_workspace_ids(conn, workspace_id), MAX_SCANNED + 1
        )
        scanned = sources[:MAX_SCANNED]
        records = repo.completions(conn, (source.thread_id for source in scanned))
    items: list[MemoryCandidate] = []
    for source in scanned:
        completion = _best(records.get(source.thread_id, []))
        if completion is not None:
            items.append(_pending(source, completion))
    return CandidateList(
        workspace_id=workspace_id,
        items=tuple(items[:MAX_LISTED]),
        scanned=len(scanned),
        truncated=len(sources) > MAX_SCANNED or len(items) > MAX_LISTED,
    )


def get_candidate(store: Store, candidate_id: str, *, workspace_id: str | None) -> MemoryCandidate:
    """One candidate: pending (its note at the version the ID names, with a completion record)
    or resolved (a tombstone). A note that changed since is `candidate_stale`."""
    note_id, note_version = _parse_id(candidate_id)
    with store.read() as conn:
        resolved = repo.find_resolved(conn, candidate_id)
        if resolved is not None:
            _require_in(conn, resolved.workspace_id, workspace_id, candidate_id)
            return _tombstone(resolved)
        return _current_pending(conn, candidate_id, note_id, note_version, workspace_id)


def confirm_candidate(
    store: Store,
    candidate_id: str,
    *,
    version: int,
    fingerprint: str,
    source_version: int,
    confirm: bool,
    redact_sensitive: bool = False,
    workspace_id: str | None = None,
    actor: str,
) -> ConfirmedCandidate:
    """Save the candidate as a project memory and resolve it, in one transaction."""
    operator = require_operator(actor, what="review candidates")
    if confirm is not True:
        raise UsageError(
            "confirmation_required",
            "confirming a candidate saves it as project memory: the person must confirm "
            "explicitly (confirm=true)",
            details={"field": "confirm"},
        )
    note_id, note_version = _parse_id(candidate_id)
    _require_whole("version", version)
    _require_whole("source_version", source_version)
    now = now_rfc3339()
    with store.write() as conn:
        resolved = repo.find_resolved(conn, candidate_id)
        if resolved is not None:
            _require_in(conn, resolved.workspace_id, workspace_id, candidate_id)
            if resolved.status != "confirmed":
                raise _already(resolved, "confirmed")
            _require_same_review(resolved, version, fingerprint, source_version)
            memory_record = memory.find_memory(conn, resolved.memory_id or "", now)
            return ConfirmedCandidate(candidate=_tombstone(resolved), memory=memory_record)
        pending = _current_pending(conn, candidate_id, note_id, note_version, workspace_id)
        _require_review_of(pending, version, fingerprint, source_version)
        assert pending.title is not None
        assert pending.content is not None
        prepared = memory.prepare_memory(
            scope="project",
            workspace_id=pending.workspace_id,
            title=pending.title,
            content=pending.content,
            references=pending.references,
            redact_sensitive=redact_sensitive,
            already_redacted=pending.redacted,
            actor=operator,
        )
        created = memory.insert_prepared(conn, prepared)
        row = repo.insert_resolved(
            conn, _row(pending, "confirmed", created.memory_id, operator, now)
        )
        return ConfirmedCandidate(candidate=_tombstone(row), memory=created)


def ignore_candidate(
    store: Store,
    candidate_id: str,
    *,
    version: int,
    workspace_id: str | None = None,
    actor: str,
) -> MemoryCandidate:
    """Resolve the candidate without a memory."""
    operator = require_operator(actor, what="review candidates")
    note_id, note_version = _parse_id(candidate_id)
    _require_whole("version", version)
    now = now_rfc3339()
    with store.write() as conn:
        resolved = repo.find_resolved(conn, candidate_id)
        if resolved is not None:
            _require_in(conn, resolved.workspace_id, workspace_id, candidate_id)
            if resolved.status != "ignored":
                raise _already(resolved, "ignored")
            if version not in (_PENDING_VERSION, resolved.version):
                raise _stale_version(candidate_id, version, resolved.version)
            return _tombstone(resolved)
        pending = _current_pending(conn, candidate_id, note_id, note_version, workspace_id)
        if version != pending.version:
            raise _stale_version(candidate_id, version, pending.version)
        row = repo.insert_resolved(conn, _row(pending, "ignored", None, operator, now))
        return _tombstone(row)


def remove_workspace_candidates(conn: Connection, workspace_id: str) -> int:
    """Delete the workspace's resolved candidates in the caller's transaction (workspace
    removal, guards lifted); how many."""
    return repo.delete_workspace_candidates(conn, workspace_id)


# -- deriving -------------------------------------------------------------------------------------


def _best(records: list[repo.CompletionRow]) -> repo.CompletionRow | None:
    for kind in _COMPLETION_ORDER:
        of_kind = [record for record in records if record.kind == kind]
        if of_kind:
            return max(of_kind, key=lambda record: record.at)
    return None


def _title(kind: str, text: str) -> str:
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    title = f"{_KIND_LABEL.get(kind, kind.title())}: {first}"
    encoded = title.encode("utf-8")
    if len(encoded) <= _TITLE_BYTES:
        return title
    return encoded[: _TITLE_BYTES - 3].decode("utf-8", errors="ignore").rstrip() + "…"


def _fingerprint(workspace_id: str, source: repo.SourceNote, title: str) -> str:
    return fingerprint(
        {
            "protocol_version": PROTOCOL_VERSION,
            "workspace_id": workspace_id,
            "note_id": source.note_id,
            "note_version": source.version,
            "kind": source.kind,
            "title": title,
            "content": source.text,
            "references": list(source.references),
            "redacted": source.redacted,
        }
    )


def _pending(source: repo.SourceNote, completion: repo.CompletionRow) -> MemoryCandidate:
    title = _title(source.kind, source.text)
    kind = _completion_kind(completion.kind)
    return MemoryCandidate(
        candidate_id=candidate_id_of(source.note_id, source.version),
        workspace_id=source.workspace_id,
        version=_PENDING_VERSION,
        fingerprint=_fingerprint(source.workspace_id, source, title),
        status="pending",
        title=title,
        content=source.text,
        references=source.references,
        redacted=source.redacted,
        source=CandidateSource(
            note_id=source.note_id,
            note_version=source.version,
            run_id=completion.run_id,
            thread_id=source.thread_id,
        ),
        completion=Completion(kind=kind, at=completion.at),
        confidence_note=CONFIDENCE_NOTES[kind],
        review=None,
    )


def _completion_kind(kind: str) -> CompletionKind:
    for known in _COMPLETION_ORDER:
        if kind == known:
            return known
    raise AssertionError(kind)  # pragma: no cover - the table's CHECK allows no other


def _tombstone(row: repo.ResolvedRow) -> MemoryCandidate:
    kind = _completion_kind(row.completion_kind)
    return MemoryCandidate(
        candidate_id=row.candidate_id,
        workspace_id=row.workspace_id,
        version=row.version,
        fingerprint=row.fingerprint,
        status="confirmed" if row.status == "confirmed" else "ignored",
        title=None,
        content=None,
        references=(),
        redacted=False,
        source=CandidateSource(
            note_id=row.note_id,
            note_version=row.note_version,
            run_id=row.run_id,
            thread_id=row.thread_id,
        ),
        completion=Completion(kind=kind, at=row.completion_at),
        confidence_note=CONFIDENCE_NOTES[kind],
        review=CandidateReview(
            by=row.reviewed_by,
            by_person=row.reviewed_by_person,
            at=row.reviewed_at,
            memory_id=row.memory_id,
        ),
    )


def _row(
    pending: MemoryCandidate,
    status: str,
    memory_id: str | None,
    actor: OperatorActor,
    now: str,
) -> repo.ResolvedRow:
    return repo.ResolvedRow(
        candidate_id=pending.candidate_id,
        workspace_id=pending.workspace_id,
        note_id=pending.source.note_id,
        note_version=pending.source.note_version,
        thread_id=pending.source.thread_id,
        run_id=pending.source.run_id,
        fingerprint=pending.fingerprint,
        completion_kind=pending.completion.kind,
        completion_at=pending.completion.at,
        status=status,
        version=_RESOLVED_VERSION,
        memory_id=memory_id,
        reviewed_by=actor,
        reviewed_at=now,
    )


def _current_pending(
    conn: Connection,
    candidate_id: str,
    note_id: str,
    note_version: int,
    workspace_id: str | None,
) -> MemoryCandidate:
    """The pending candidate as its note is now, in the caller's transaction."""
    source = repo.find_source(conn, note_id)
    if source is None or source.kind not in repo.SOURCE_KINDS:
        raise _not_found(candidate_id)
    _require_in(conn, source.workspace_id, workspace_id, candidate_id)
    if source.version != note_version or source.status != "active":
        raise _stale_source(candidate_id, source, note_version)
    completion = _best(repo.completions(conn, (source.thread_id,))[source.thread_id])
    if completion is None or not source.references:
        raise _not_found(candidate_id)
    return _pending(source, completion)


# -- checks ---------------------------------------------------------------------------------------


def _parse_id(candidate_id: str) -> tuple[str, int]:
    found = _CANDIDATE_ID.fullmatch(candidate_id) if isinstance(candidate_id, str) else None
    if found is None:
        raise UsageError(
            "invalid_candidate_id",
            "a candidate ID is cand_ followed by its note's ID and version "
            "(as `context memory candidates` lists them)",
            details={"field": "candidate_id"},
        )
    return f"note_{found.group(1)}", int(found.group(2))


def _require_whole(field: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UsageError(
            "invalid_version",
            f"{field} must be a whole number from 1",
            details={"field": field},
        )


def _require_in(conn: Connection, found: str, wanted: str | None, candidate_id: str) -> None:
    """A candidate asked for through a registration must be its project's."""
    if wanted is not None and found not in project_workspace_ids(conn, wanted):
        raise _not_found(candidate_id)


def _require_review_of(
    pending: MemoryCandidate, version: int, fingerprint_seen: str, source_version: int
) -> None:
    if version != pending.version:
        raise _stale_version(pending.candidate_id, version, pending.version)
    if source_version != pending.source.note_version or fingerprint_seen != pending.fingerprint:
        raise ConflictError(
            "candidate_stale",
            f"candidate {pending.candidate_id} is not what was read: its note or fingerprint "
            "differs from the ones given; show it again, read it, then confirm",
            details={
                "candidate_id": pending.candidate_id,
                "note_id": pending.source.note_id,
                "note_version": pending.source.note_version,
                "fingerprint": pending.fingerprint,
            },
            hint=Hint("reread_candidate", {"candidate_id": pending.candidate_id}),
        )


def _require_same_review(
    resolved: repo.ResolvedRow, version: int, fingerprint_seen: str, source_version: int
) -> None:
    """A repeated confirmation answers the same only when it names what was confirmed."""
    if version not in (_PENDING_VERSION, resolved.version):
        raise _stale_version(resolved.candidate_id, version, resolved.version)
    if fingerprint_seen != resolved.fingerprint or source_version != resolved.note_version:
        raise ConflictError(
            "candidate_stale",
            f"candidate {resolved.candidate_id} was confirmed with another fingerprint or note "
            "version than the ones given",
            details={
                "candidate_id": resolved.candidate_id,
                "note_version": resolved.note_version,
                "fingerprint": resolved.fingerprint,
            },
        )


def _stale_source(candidate_id: str, source: repo.SourceNote, note_version: int) -> ConflictError:
    if source.status != "active":
        why = "was superseded"
    else:
        why = f"is at version {source.version}, not {note_version}"
    return ConflictError(
        "candidate_stale",
        f"the note of candidate {candidate_id} {why}: it changed since it was offered; list "
        "the candidates again and review the new one",
        details={
            "candidate_id": candidate_id,
            "note_id": source.note_id,
            "expected_note_version": note_version,
            "current_note_version": source.version,
            "note_status": source.status,
        },
        hint=Hint("list_candidates", {"workspace_id": source.workspace_id}),
    )


def _stale_version(candidate_id: str, expected: int, current: int) -> ConflictError:
    return ConflictError(
        "conflict",
        f"candidate {candidate_id} is at version {current}, not {expected}: it changed since "
        "you read it",
        details={
            "candidate_id": candidate_id,
            "expected_version": expected,
            "current_version": current,
        },
        hint=Hint("reread_candidate", {"candidate_id": candidate_id}),
    )


def _already(resolved: repo.ResolvedRow, wanted: str) -> ConflictError:
    return ConflictError(
        "conflict",
        f"candidate {resolved.candidate_id} was already {resolved.status}; it cannot be "
        f"{wanted} too",
        details={
            "candidate_id": resolved.candidate_id,
            "status": resolved.status,
            "current_version": resolved.version,
        },
    )


def _not_found(candidate_id: str) -> NotFoundError:
    return NotFoundError(
        "candidate_not_found",
        f"no candidate {candidate_id}: its note is gone, has no reference, or its thread has "
        "no completion record",
        details={"candidate_id": candidate_id},
        hint=Hint("list_candidates"),
    )
