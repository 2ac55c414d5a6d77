"""Context assembly's operations: plan an assembly from the sources the app gathered, store
its audit, list a run's audits. Each runs in the caller's transaction, so the sources read and
the audit appended are one unit (a memory disabled at the same moment is wholly before or after
the assembly).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from sqlalchemy.engine import Connection

from rutter_core.assembly import repo
from rutter_core.assembly.model import (
    DEFAULT_BUDGET,
    FINGERPRINT_EXCLUDES,
    MAX_BUDGET,
    PROTOCOL_VERSION,
    Assembly,
    AuditList,
    Configured,
    DeliveredEntry,
    FollowedReport,
    OmissionWarning,
    Reason,
    SourceKind,
)
from rutter_core.assembly.plan import Candidate, ContextOverflow, plan
from rutter_core.assembly.tokens import ESTIMATOR, TokenEstimator
from rutter_core.discovery.fingerprint import fingerprint
from rutter_core.kernel.actors import Actor
from rutter_core.kernel.errors import ConflictError, Hint, NotFoundError, RejectedError, UsageError
from rutter_core.kernel.ids import new_id

DEFAULT_AUDIT_LIMIT: Final = 50
MAX_AUDIT_LIMIT: Final = 500
_ASSEMBLY_ID: Final = re.compile(r"asm_[0-9A-HJKMNP-TV-Z]{26}")


def require_budget(budget: int | None) -> int:
    """The background budget in tokens: `DEFAULT_BUDGET` when not given, else 1-1,000,000."""
    if budget is None:
        return DEFAULT_BUDGET
    if not 1 <= budget <= MAX_BUDGET:
        raise UsageError(
            "invalid_budget",
            f"the budget must be a whole number of tokens from 1 to {MAX_BUDGET}",
            details={"min": 1, "max": MAX_BUDGET},
        )
    return budget


def require_audit_limit(limit: int) -> int:
    if not 1 <= limit <= MAX_AUDIT_LIMIT:
        raise UsageError(
            "invalid_limit",
            f"the limit must be from 1 to {MAX_AUDIT_LIMIT}",
            details={"min": 1, "max": MAX_AUDIT_LIMIT},
        )
    return limit


def assemble(
    conn: Connection,
    *,
    run_id: str,
    thread_id: str,
    workspace_id: str,
    revision: int,
    instructions: Sequence[Candidate],
    pins: Sequence[Candidate],
    memories: Sequence[Candidate],
    configured: Configured,
    background: int,
    actor: Actor,
    now: str,
    estimator: TokenEstimator = ESTIMATOR,
    summary: Candidate | None = None,
    messages: Sequence[Candidate] = (),
    messages_not_considered: int = 0,
) -> Assembly:
    """Plan the assembly and append its audit, in the caller's write transaction
    (`context_overflow` when required context does not fit the budget)."""
    try:
        budget, entries = plan(
            instructions, pins, memories, background=background, estimator=estimator,
            summary=summary, messages=messages,
        )  # fmt: skip
    except ContextOverflow as overflow:
        raise _overflow(overflow) from None
    body = {
        "run_id": run_id,
        "thread_id": thread_id,
        "workspace_id": workspace_id,
        "estimator": estimator.name,
        "budget": budget.to_json(),
        "configured": configured.to_json(),
        "entries": [entry.model_dump(mode="json", exclude={"text"}) for entry in entries],
    }
    assembly_id = new_id("asm")
    digest = fingerprint(body, exclude=FINGERPRINT_EXCLUDES)
    # The audit's document: the answer without texts, dumped once (`AuditedAssembly` reads it).
    stored = {
        "protocol_version": PROTOCOL_VERSION,
        "assembly_id": assembly_id,
        **body,
        "created_at": now,
        "created_by": actor,
        "fingerprint": digest,
    }
    person = repo.insert_assembly(
        conn,
        stored,
        assembly_id=assembly_id,
        run_id=run_id,
        thread_id=thread_id,
        workspace_id=workspace_id,
        revision=revision,
        budget=background,
        fingerprint=digest,
        actor=actor,
        now=now,
    )
    return Assembly(
        assembly_id=assembly_id,
        run_id=run_id,
        thread_id=thread_id,
        workspace_id=workspace_id,
        created_at=now,
        created_by=actor,
        created_by_person=person,
        estimator=estimator.name,
        budget=budget,
        configured=configured,
        entries=tuple(entries),
        fingerprint=digest,
        warnings=_warnings(entries, messages_not_considered),
    )


def _overflow(overflow: ContextOverflow) -> RejectedError:
    return RejectedError(
        "context_overflow",
        f"the required context (pinned instructions, pins and the latest summary) needs "
        f"{overflow.needed} tokens and the budget is {overflow.budget}: nothing is delivered "
        "rather than leaving out an instruction or a pin in silence",
        details={
            "budget": overflow.budget,
            "needed": overflow.needed,
            "required": [
                {"kind": kind, "id": source_id, "tokens": tokens}
                for kind, source_id, tokens in overflow.required
            ],
        },
        hint=Hint("fit_required_context", {"needed": overflow.needed}),
    )


_WHY: Final[dict[str, str]] = {
    "quota": "did not fit the budget",
    "required_context": "did not fit what required context left of the budget",
    "instructions": "were cut with an instruction source",
    "disabled": "are disabled",
    "expired": "have expired",
}


def _warnings(
    entries: Sequence[DeliveredEntry], not_considered: int
) -> tuple[OmissionWarning, ...]:
    counted: dict[tuple[SourceKind, Reason], int] = {}
    for entry in entries:
        if entry.decision == "omitted" and entry.reason is not None:
            key = (entry.kind, entry.reason)
            counted[key] = counted.get(key, 0) + 1
    if not_considered:
        counted[("message", "quota")] = counted.get(("message", "quota"), 0) + not_considered
    warnings = []
    for (kind, reason), count in counted.items():
        where = (
            "; they stay in the thread's history (history search finds them)"
            if kind == "message"
            else ""
        )
        warnings.append(
            OmissionWarning(
                kind=kind,
                reason=reason,
                count=count,
                message=f"{count} {kind} source(s) left out: they {_WHY[reason]}{where}",
            )
        )
    return tuple(warnings)


def list_audit(conn: Connection, run_id: str, *, limit: int) -> AuditList:
    """The run's stored assemblies, newest first, at most `limit` (the caller checked the run
    exists)."""
    found = repo.select_assemblies(conn, run_id, limit=require_audit_limit(limit) + 1)
    return AuditList(run_id=run_id, assemblies=tuple(found[:limit]), has_more=len(found) > limit)


def report(
    conn: Connection,
    assembly_id: str,
    *,
    followed: Sequence[str],
    ignored: Sequence[str],
    actor: Actor,
    now: str,
) -> FollowedReport:
    """Record, once, which of the sources an assembly delivered were followed and which were
    ignored, in the caller's write transaction. Every ID must be one the assembly included,
    named once; a second report of the same assembly is a conflict (the first stands)."""
    if _ASSEMBLY_ID.fullmatch(assembly_id) is None:
        raise UsageError(
            "invalid_assembly_id",
            "not an assembly ID: asm_ and 26 characters, as `context audit RUN` lists them",
            hint=Hint("list_assemblies"),
        )
    assembly = repo.find_assembly(conn, assembly_id)
    if assembly is None:
        raise NotFoundError(
            "assembly_not_found",
            f"no assembly {assembly_id}",
            details={"assembly_id": assembly_id},
            hint=Hint("list_assemblies"),
        )
    if not followed and not ignored:
        raise UsageError(
            "nothing_to_report", "name at least one source that was followed or ignored"
        )
    delivered = {entry.id for entry in assembly.entries if entry.decision == "included"}
    seen: set[str] = set()
    for field, ids in (("followed", followed), ("ignored", ignored)):
        for index, source_id in enumerate(ids):
            if source_id not in delivered or source_id in seen:
                raise RejectedError(
                    "not_delivered",
                    f"{field} item {index + 1} is not a source this assembly included, or is "
                    "named twice; report only the IDs of its included entries, each once",
                    details={"assembly_id": assembly_id, "field": field, "index": index},
                )
            seen.add(source_id)
    if repo.has_report(conn, assembly_id):
        raise ConflictError(
            "conflict",
            f"assembly {assembly_id} was reported on already; the first report stands",
            details={"assembly_id": assembly_id},
        )
    made = FollowedReport(
        assembly_id=assembly_id,
        followed=tuple(followed),
        ignored=tuple(ignored),
        reported_by=actor,
        reported_at=now,
    )
    return repo.insert_report(conn, made, workspace_id=assembly.workspace_id)


def remove_workspace_assemblies(conn: Connection, workspace_id: str) -> int:
    """Delete the audits of the workspace's runs, in the caller's transaction (a `workspace
    remove --cascade`, with the append-only guards lifted, before its runs go)."""
    return repo.delete_workspace_assemblies(conn, workspace_id)


__all__ = [
    "DEFAULT_AUDIT_LIMIT",
    "MAX_AUDIT_LIMIT",
    "assemble",
    "list_audit",
    "remove_workspace_assemblies",
    "report",
    "require_audit_limit",
    "require_budget",
]
