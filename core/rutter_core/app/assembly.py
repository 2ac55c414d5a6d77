"""Context assembly and its audit (docs/reference/assembly.md): `AssembleParams` → `Assembly`,
`AuditParams` → `AuditList`, `ReportParams` → `FollowedReport`, and `AssemblyOperations`
(`Rutter(store, reader).assembly`).

An assembly spans areas, so it is orchestrated here, in one write transaction: the run and its
verified pinned revision (runs), the thread's pins (continuity), the memories of the local user
and the run's workspace as they are at this moment (memory: every call reloads them, so a
memory disabled or expired since the last call is omitted now), then `assembly.service` plans
what fits and appends the audit. The agent-facing answer carries the delivered texts; the audit
keeps only identities, digests, estimates and reasons.

`InstructionsOrAssemblyParams` is the MCP tool `effective_instructions`' input: without `run_id`
it is the effective-instructions question unchanged, with it the run's assembly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Final

from pydantic import Field, StrictBool, StrictInt, StrictStr, model_validator

from rutter_core.app.conversation import gather
from rutter_core.app.models import NullMeansAbsent, whole_number
from rutter_core.app.profiles import AgentChoice, MaybeProfileParams
from rutter_core.assembly import service
from rutter_core.assembly.model import (
    DEFAULT_BUDGET,
    MAX_BUDGET,
    MEMORIES_PER_SCOPE,
    Assembly,
    AuditedAssembly,
    AuditList,
    AuditRecord,
    Configured,
    ConfiguredInstructions,
    ConfiguredScope,
    Entry,
    FollowedReport,
    MemoryScope,
)
from rutter_core.assembly.plan import Candidate
from rutter_core.assembly.service import DEFAULT_AUDIT_LIMIT, MAX_AUDIT_LIMIT
from rutter_core.kernel.actors import Actor
from rutter_core.kernel.clock import now_rfc3339
from rutter_core.kernel.errors import Hint, RejectedError
from rutter_core.memory.model import ScopeSelection, SelectableMemory
from rutter_core.memory.selection import assembly_selection
from rutter_core.runs import service as runs

if TYPE_CHECKING:
    from rutter_core.app.facade import Rutter
    from rutter_core.discovery.snapshot import Snapshot


# Checked by the assembly service (`invalid_budget`, `invalid_limit`); stated in the schemas.
Budget = Annotated[StrictInt, whole_number(1, MAX_BUDGET)]
AuditLimit = Annotated[StrictInt, whole_number(1, MAX_AUDIT_LIMIT)]

MAX_CONTENT_BYTES: Final = 1_048_576
"""The largest `max_content_bytes` (1 MiB): more than any instruction file discovery delivers."""


class AssemblyParams(NullMeansAbsent):
    """Base of the assembly params: a JSON `null` means the field was not given."""


class AssembleParams(AssemblyParams):
    run_id: StrictStr = Field(description="the run's ID (run_...)")
    budget: Budget | None = Field(
        None,
        description=f"the background budget in tokens (1-{MAX_BUDGET}; default "
        f"{DEFAULT_BUDGET}): instructions, pins and memories together",
    )


class AuditParams(AssemblyParams):
    run_id: StrictStr = Field(description="the run's ID (run_...)")
    limit: AuditLimit = Field(
        DEFAULT_AUDIT_LIMIT, description=f"at most this many, newest first (1-{MAX_AUDIT_LIMIT})"
    )


class ReportParams(AssemblyParams):
    assembly_id: StrictStr = Field(description="the assembly's ID (asm_...)")
    followed: tuple[StrictStr, ...] = Field(
        (), description="IDs of the sources it delivered that were followed"
    )
    ignored: tuple[StrictStr, ...] = Field(
        (), description="IDs of the sources it delivered that were not followed"
    )


class InstructionsOrAssemblyParams(AssemblyParams):
    """Either the effective instructions of a target (`target`, with `workspace_id` or
    `directory`), or with `run_id` what the run's agent is given (`budget` optional)."""

    target: StrictStr | None = Field(
        None, description="a file or directory: its effective instructions (without run_id)"
    )
    workspace_id: StrictStr | None = Field(None, description="the registered workspace")
    directory: StrictStr | None = Field(None, description="a directory inside the workspace")
    run_id: StrictStr | None = Field(
        None,
        description="a run (run_...): answer its assembled context instead (pinned "
        "instructions, pins and memories within the budget, each included or omitted)",
    )
    budget: Budget | None = Field(
        None, description=f"with run_id: the budget in tokens (default {DEFAULT_BUDGET})"
    )
    agent: AgentChoice | None = Field(
        None,
        description="with target: what that agent would load for it (codex, claude, gemini, "
        "copilot, cursor, or all) instead of the default answer",
    )
    include_content: StrictBool = Field(
        True,
        description="with target: false lists the sources without their bodies (path, "
        "bytes, content_sha256, why; content empty and content_cut saying so)",
    )
    max_content_bytes: StrictInt | None = Field(
        None,
        ge=1,
        le=MAX_CONTENT_BYTES,
        description=f"with target: at most this many bytes of each body (1-{MAX_CONTENT_BYTES}), "
        "a longer one cut at a character boundary, ended with a marker and its content_cut "
        "saying how many bytes were kept and lost",
    )

    @model_validator(mode="after")
    def _one_question(self) -> InstructionsOrAssemblyParams:
        if self.run_id is None:
            if self.target is None:
                raise ValueError("give target (its effective instructions) or run_id")
            if self.budget is not None:
                raise ValueError("budget goes with run_id")
            if not self.include_content and self.max_content_bytes is not None:
                raise ValueError("give include_content false or max_content_bytes, not both")
        elif self.target is not None or self.workspace_id is not None or self.directory:
            raise ValueError("run_id names its own workspace and target: give none of them")
        elif self.agent is not None:
            raise ValueError("agent goes with target, not run_id")
        elif not self.include_content or self.max_content_bytes is not None:
            raise ValueError(
                "include_content and max_content_bytes go with target; with run_id the "
                "budget bounds the answer"
            )
        return self

    def content_bound(self) -> int | None:
        """The bytes of each body the answer shows, or None for all of them."""
        return 0 if not self.include_content else self.max_content_bytes

    def effective(self) -> MaybeProfileParams:
        assert self.target is not None
        return MaybeProfileParams(
            target=self.target,
            workspace_id=self.workspace_id,
            directory=self.directory,
            agent=self.agent,
        )

    def assemble(self) -> AssembleParams:
        assert self.run_id is not None
        return AssembleParams(run_id=self.run_id, budget=self.budget)


def _not_pinned(run_id: str) -> RejectedError:
    return RejectedError(
        "run_not_pinned",
        f"run {run_id} has no pinned instructions yet, so there is no context to assemble; "
        "confirm its first revision first",
        details={"run_id": run_id},
        hint=Hint("review_run_again", {"run_id": run_id}),
    )


class AssemblyOperations:
    def __init__(self, rutter: Rutter) -> None:
        self._rutter = rutter

    def assemble(self, params: AssembleParams, *, actor: Actor) -> Assembly:
        """What the run's agent is given now, stored as an audit (`run_not_found`,
        `run_not_pinned`, `invalid_budget`)."""
        background = service.require_budget(params.budget)
        now = now_rfc3339()
        with self._rutter.store.write() as conn:
            run = runs.load_run(conn, params.run_id)
            pinned = runs.latest_pinned(conn, run)
            if pinned is None:
                raise _not_pinned(run.run_id)
            conversation = gather(conn, run.run_id, run.thread_id)
            pins = conversation.pins
            selection = assembly_selection(
                conn, workspace_id=run.workspace_id, now_text=now, per_scope=MEMORIES_PER_SCOPE
            )
            return service.assemble(
                conn,
                run_id=run.run_id,
                thread_id=run.thread_id,
                workspace_id=run.workspace_id,
                revision=pinned.revision,
                instructions=_instructions(pinned.snapshot, pinned.revision),
                pins=[
                    Candidate(kind="pin", id=pin.pin_id, version=pin.version, text=pin.text)
                    for pin in pins
                ],
                memories=[
                    _memory(memory)
                    for scope in selection.values()
                    for memory in sorted(
                        (*scope.active, *scope.inactive), key=lambda item: item.memory_id
                    )
                ],
                configured=Configured(
                    instructions=ConfiguredInstructions(
                        revision=pinned.revision,
                        fingerprint=pinned.fingerprint,
                        target_path=run.target_path,
                        sources=len(pinned.snapshot.sources),
                    ),
                    pins=len(pins),
                    memory={scope: _configured(found) for scope, found in selection.items()},
                ),
                background=background,
                actor=actor,
                now=now,
                summary=conversation.summary,
                messages=conversation.messages,
                messages_not_considered=conversation.not_considered,
            )

    def report(self, params: ReportParams, *, actor: Actor) -> FollowedReport:
        """Record once which of an assembly's delivered sources were followed or ignored
        (`invalid_assembly_id`, `assembly_not_found`, `nothing_to_report`, `not_delivered`,
        `conflict`)."""
        now = now_rfc3339()
        with self._rutter.store.write() as conn:
            return service.report(
                conn,
                params.assembly_id,
                followed=params.followed,
                ignored=params.ignored,
                actor=actor,
                now=now,
            )

    def audit(self, params: AuditParams) -> AuditList:
        """The run's stored assemblies, newest first (`run_not_found`, `invalid_limit`)."""
        service.require_audit_limit(params.limit)
        with self._rutter.store.read() as conn:
            run = runs.load_run(conn, params.run_id)
            return service.list_audit(conn, run.run_id, limit=params.limit)


def _instructions(snapshot: Snapshot, revision: int) -> list[Candidate]:
    return [
        Candidate(kind="instruction", id=source.path, version=revision, text=source.content)
        for source in snapshot.sources
    ]


def _memory(memory: SelectableMemory) -> Candidate:
    scope: MemoryScope = memory.scope
    if memory.status == "disabled" or memory.expired:
        return Candidate(
            kind="memory",
            id=memory.memory_id,
            version=memory.version,
            text=None,
            scope=scope,
            state="disabled" if memory.status == "disabled" else "expired",
            stored_sha256=memory.content_sha256,
        )
    return Candidate(
        kind="memory", id=memory.memory_id, version=memory.version, text=memory.content,
        scope=scope,
    )  # fmt: skip


def _configured(found: ScopeSelection) -> ConfiguredScope:
    return ConfiguredScope(
        active=found.active_total,
        considered=len(found.active),
        inactive=found.inactive_total,
        inactive_listed=len(found.inactive),
    )


__all__ = [
    "AssembleParams",
    "Assembly",
    "AssemblyOperations",
    "AuditList",
    "AuditParams",
    "AuditRecord",
    "AuditedAssembly",
    "Entry",
    "FollowedReport",
    "InstructionsOrAssemblyParams",
    "ReportParams",
]
