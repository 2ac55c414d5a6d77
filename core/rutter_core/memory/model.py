"""The documents of explicit memory (docs/reference/memory.md), as pydantic models.

Each model's JSON dump is exactly the wire document every surface prints or returns: the CLI's
`--json`, the language server's results, and later the HTTP API and its OpenAPI schema. Field
order is the document's key order; a field that may be null is always present.
"""

from __future__ import annotations

from typing import Any, Final, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from rutter_core.kernel.actors import OperatorActor

PROTOCOL_VERSION: Final = "context_memory.v1"
EXPORT_PROTOCOL_VERSION: Final = "context_memory_export.v1"
USER_SCOPE_ID: Final = "local-user"

Scope = Literal["user", "project"]
Status = Literal["active", "disabled"]
SourceKind = Literal["operator_explicit", "operator_import_explicit"]
SCOPES: Final[tuple[Scope, ...]] = get_args(Scope)
STATUSES: Final[tuple[Status, ...]] = get_args(Status)


class MemoryDocument(BaseModel):
    """Base of the memory documents: frozen, no unknown fields, and `to_json` is the dump
    under the wire names (`id`, not `memory_id`)."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
    )

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class MemoryRecord(MemoryDocument):
    """One memory as stored (`context_memory.v1`), plus `expired`, derived when it is read."""

    memory_id: str = Field(alias="id")
    protocol_version: Literal["context_memory.v1"] = PROTOCOL_VERSION
    scope: Scope
    scope_id: str
    owner: str | None = Field(
        description="the person whose user memory this is (a PostgreSQL role, or the "
        "operating-system user of a SQLite store); null for project memory, and for a user "
        "memory a SQLite store kept before it recorded people"
    )
    title: str
    content: str
    content_sha256: str
    status: Status
    source_kind: SourceKind
    references: tuple[str, ...]
    retention_until: str | None
    expired: bool
    redacted: bool
    created_by: OperatorActor
    created_by_person: str | None = Field(
        description="who made it (null: made before people were recorded)"
    )
    updated_by: OperatorActor
    updated_by_person: str | None = Field(
        description="who changed it last (null: before people were recorded)"
    )
    version: int
    created_at: str
    updated_at: str

    @property
    def workspace_id(self) -> str | None:
        return self.scope_id if self.scope == "project" else None


class EditedMemory(MemoryRecord):
    """The answer of an edit: the record (`context_memory.v1`) and `purged`, whether the title,
    content or references it replaced have left the store's files (false: another process held
    a read open past the busy timeout, and the next checkpoint removes them; null: the edit
    replaced no text)."""

    purged: bool | None


class MemoryList(MemoryDocument):
    items: tuple[MemoryRecord, ...]
    has_more: bool
    """More records matched than the list's `limit`."""


class DeletedMemory(MemoryDocument):
    memory_id: str = Field(alias="id")
    version: int
    deleted: Literal[True] = True
    recoverable: Literal[False] = False
    purged: bool
    """The WAL checkpoint completed: no copy of the text is left in the database files.
    False only when another process held a read open for longer than the busy timeout; the
    next checkpoint (any later delete or edit, or the last connection closing) finishes it."""


class MemoryReference(MemoryDocument):
    """An active memory as a checkpoint refers to it: identity, version and content digest,
    never the title or the body."""

    memory_id: str
    scope: Scope
    version: int
    content_sha256: str


class ReferencedMemory(MemoryDocument):
    """A memory as a checkpoint's reference finds it now: identity, version, digest, status and
    whether its retention has passed; never the title or the body."""

    memory_id: str
    version: int
    content_sha256: str
    status: Status
    expired: bool


class SelectableMemory(MemoryDocument):
    """A memory as context assembly sees it: identity, version, digest and state, and the body
    (`content`) only when it is active; a disabled or expired one is never read past its
    digest. `title` is not delivered."""

    memory_id: str
    scope: Scope
    version: int
    content_sha256: str
    status: Status
    expired: bool
    content: str | None


class ScopeSelection(MemoryDocument):
    """One scope's memories for an assembly: the first `per_scope` active ones by ID (with
    their bodies), the first `per_scope` inactive ones by ID (without), and how many of each
    the scope has."""

    active: tuple[SelectableMemory, ...]
    inactive: tuple[SelectableMemory, ...]
    active_total: int
    inactive_total: int


class MemoryExport(MemoryDocument):
    """`context_memory_export.v1`: memory is context, never a grant."""

    protocol_version: Literal["context_memory_export.v1"] = EXPORT_PROTOCOL_VERSION
    exported_at: str
    scope: Scope
    scope_id: str
    items: tuple[MemoryRecord, ...]
    capability_grant: Literal[False] = False


__all__ = [
    "EXPORT_PROTOCOL_VERSION",
    "PROTOCOL_VERSION",
    "SCOPES",
    "STATUSES",
    "USER_SCOPE_ID",
    "DeletedMemory",
    "MemoryDocument",
    "MemoryExport",
    "MemoryList",
    "MemoryRecord",
    "MemoryReference",
    "ReferencedMemory",
    "Scope",
    "ScopeSelection",
    "SelectableMemory",
    "SourceKind",
    "Status",
]
