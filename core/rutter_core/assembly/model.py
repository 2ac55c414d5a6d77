"""The documents of context assembly and its audit (docs/reference/assembly.md), as pydantic models.

Three facts stay apart (docs/reference/assembly.md): what was *configured* (the sources as they
stood: the run's pinned revision, the thread's pins, how many memories each scope had and in which
state), what was *injected* (each source's entry: included or omitted with its reason, by ID,
version, SHA-256 and estimated tokens), and what was *followed*, which only an agent's later
replies and tool receipts can show: rutter keeps it apart, as a report made after the assembly
(`FollowedReport`: the IDs reported followed or ignored, and who reported), never inferred
from the other two. The audit keeps identities and digests, never a body: a memory edited or
deleted after delivery keeps, in every audit that delivered it, the ID, version and digest it
was delivered at.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from rutter_core.kernel.actors import CREATED_BY_PERSON

PROTOCOL_VERSION: Final = "context_assembly.v1"

SourceKind = Literal["instruction", "pin", "summary", "message", "receipt", "memory"]
Decision = Literal["included", "omitted"]
Reason = Literal["quota", "required_context", "instructions", "disabled", "expired"]
REASONS: Final[tuple[Reason, ...]] = (
    "quota",
    "required_context",
    "instructions",
    "disabled",
    "expired",
)
MemoryScope = Literal["user", "project"]

MAX_MEMORY_BUDGET: Final = 2048
"""Tokens memory may take at most, whatever the budget (`min(2048, ...)`)."""
MEMORIES_PER_SCOPE: Final = 100
"""Active records of one scope (user, project) that enter selection, by ID."""
MESSAGES_CONSIDERED: Final = 200
"""The newest messages (since the latest summary) an assembly considers; older ones are
counted in a warning, never listed."""
DEFAULT_BUDGET: Final = 16384
MAX_BUDGET: Final = 1_000_000


class AssemblyDocument(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class Entry(AssemblyDocument):
    """One source and what became of it. `id`: an instruction's workspace-relative path, a
    pin's `pin_` ID or a memory's `mem_` ID; `version`: the pinned revision (instructions), the
    pin's or memory's version; `sha256`: the digest of the text as delivered (redacted), or for
    a disabled or expired memory the stored digest (its body is not read); `tokens`: the
    estimate (null when the body was not read); `reason`: why it was omitted (null when
    included)."""

    kind: SourceKind
    id: str
    version: int
    scope: MemoryScope | None
    sha256: str
    tokens: int | None
    decision: Decision
    reason: Reason | None


class DeliveredEntry(Entry):
    """An entry of an assembly's answer: `text` is what the agent is given (redacted), null
    for an omitted source. Stored audits never hold it."""

    text: str | None


class ConfiguredInstructions(AssemblyDocument):
    revision: int
    fingerprint: str
    target_path: str
    sources: int


class ConfiguredScope(AssemblyDocument):
    """A memory scope as configured when the assembly ran: `active` records (enabled, not
    expired), how many of them were `considered` (at most 100, by ID; the others are found with
    history search), and `inactive` ones (disabled or expired; at most 100 are listed)."""

    active: int
    considered: int
    inactive: int
    inactive_listed: int


class Configured(AssemblyDocument):
    instructions: ConfiguredInstructions
    pins: int
    memory: dict[MemoryScope, ConfiguredScope]


class Budget(AssemblyDocument):
    """`background`: the whole budget of the assembled context (`--budget`); `memory`: the
    memory sub-budget, `min(2048, background // 4, space left after required context)`;
    `required`: tokens of the included instructions and pins; `used`: tokens of everything
    included."""

    background: int
    memory_cap: int
    memory: int
    required: int
    used: int


class AuditedAssembly(AssemblyDocument):
    """One stored assembly: what the audit keeps (identities, digests, estimates, reasons)."""

    protocol_version: Literal["context_assembly.v1"] = PROTOCOL_VERSION
    assembly_id: str
    run_id: str
    thread_id: str
    workspace_id: str
    created_at: str
    created_by: str
    created_by_person: str | None = Field(default=None, description=CREATED_BY_PERSON)
    """Kept beside the audit's document, not in it (the store's column; the fingerprint leaves
    it out with the actor)."""
    estimator: str
    budget: Budget
    configured: Configured
    entries: tuple[Entry, ...]
    fingerprint: str
    """JCS SHA-256 of the assembly without its ID, time and actor: two assemblies that gave an
    agent the same sources under the same budget have the same fingerprint."""


class OmissionWarning(AssemblyDocument):
    """Sources of one kind left out for one reason, counted: part of the answer, so an agent
    (and the person) knows what it was not given. `count` covers entries listed as omitted and
    older messages that were not even considered (`MESSAGES_CONSIDERED`)."""

    kind: SourceKind
    reason: Reason
    count: int
    message: str


class Assembly(AuditedAssembly):
    """What `context assemble` answers: the stored audit, with each included source's text,
    and a warning for each kind of source left out."""

    entries: tuple[DeliveredEntry, ...]
    warnings: tuple[OmissionWarning, ...] = ()


class FollowedReport(AssemblyDocument):
    """The third fact of an assembly, as reported after it (at most once): which of the
    sources it delivered the agent `followed` and which it `ignored`, by ID. A claim of whoever
    reported (`reported_by`: the MCP server for an agent, or an operator surface for a person
    reviewing the agent's replies), recorded as such; rutter does not judge it."""

    assembly_id: str
    followed: tuple[str, ...]
    ignored: tuple[str, ...]
    reported_by: str
    reported_by_person: str | None = Field(
        default=None,
        description="who reported (null: reported before people were recorded)",
    )
    reported_at: str


class AuditRecord(AuditedAssembly):
    """A stored assembly as the audit lists it: configured, injected, and `followed` (null
    until one report was made)."""

    followed: FollowedReport | None


class AuditList(AssemblyDocument):
    """A run's stored assemblies, newest first."""

    run_id: str
    assemblies: tuple[AuditRecord, ...]
    has_more: bool


FINGERPRINT_EXCLUDES: Final = frozenset(
    {
        "assembly_id",
        "created_at",
        "created_by",
        "created_by_person",
        "fingerprint",
        "protocol_version",
    }
)

__all__ = [
    "DEFAULT_BUDGET",
    "FINGERPRINT_EXCLUDES",
    "MAX_BUDGET",
    "MAX_MEMORY_BUDGET",
    "MEMORIES_PER_SCOPE",
    "MESSAGES_CONSIDERED",
    "PROTOCOL_VERSION",
    "REASONS",
    "Assembly",
    "AssemblyDocument",
    "AuditList",
    "AuditRecord",
    "AuditedAssembly",
    "Budget",
    "Configured",
    "ConfiguredInstructions",
    "ConfiguredScope",
    "Decision",
    "DeliveredEntry",
    "Entry",
    "FollowedReport",
    "MemoryScope",
    "OmissionWarning",
    "Reason",
    "SourceKind",
]
