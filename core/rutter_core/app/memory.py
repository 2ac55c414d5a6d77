"""Operations on explicit user and project memory: one params model per operation, and
`MemoryOperations` (`Rutter(store).memory`).

The params are what a client may send (the language server decodes its requests into them, the
CLI builds them from its options); results are the memory documents of `rutter_core.memory.model`.
Types are checked here (a version is a whole number, `true` is not one); what the values may be
(a memory ID's form, a limit's range, a known scope) is the service's, so every surface gets the
same typed errors. Who acts (`actor`) and where imported content came from are the surface's own
facts: keyword arguments, never params a client could set. A surface that lets a person name a
file to import reads it with `read_content_file` (fail-closed, see `memory.content_file`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from pydantic import Field, StrictBool, StrictInt, StrictStr

from rutter_core.app.models import NullMeansAbsent, allowed, whole_number
from rutter_core.kernel.actors import OperatorActor
from rutter_core.memory import service
from rutter_core.memory.content_file import ContentFile, read_content_file
from rutter_core.memory.model import (
    DeletedMemory,
    EditedMemory,
    MemoryExport,
    MemoryList,
    MemoryRecord,
    Scope,
    Status,
)
from rutter_core.memory.service import DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT

if TYPE_CHECKING:
    from rutter_core.app.facade import Rutter


# What the service checks (`invalid_scope`, `invalid_status`, `invalid_limit`,
# `invalid_version`), stated in the schemas from the same declarations.
ScopeName = Annotated[StrictStr, allowed(Scope)]
StatusName = Annotated[StrictStr, allowed(Status)]
ListLimit = Annotated[StrictInt, whole_number(1, MAX_LIST_LIMIT)]
Version = Annotated[StrictInt, whole_number(1)]


class MemoryParams(NullMeansAbsent):
    """Base of the memory params: a JSON `null` means the field was not given (as the language
    server always read it; clients send null for an option that is not set)."""


class ListMemoriesParams(MemoryParams):
    scope: ScopeName | None = Field(
        None,
        description="'user' or 'project' (project needs `workspace_id`); without it, user "
        "memory plus `workspace_id`'s project memory, or every memory",
    )
    workspace_id: StrictStr | None = None
    all: StrictBool = Field(False, description="include disabled and expired memories")
    limit: ListLimit = Field(DEFAULT_LIST_LIMIT, description="at most this many (1-500)")


class GetMemoryParams(MemoryParams):
    id: StrictStr


class CreateMemoryParams(MemoryParams):
    scope: ScopeName = Field(description="'user' or 'project'")
    workspace_id: StrictStr | None = Field(None, description="the project's workspace")
    title: StrictStr
    content: StrictStr
    references: tuple[StrictStr, ...] = ()
    retention: StrictStr | None = Field(
        None, description="a duration from now (720h, 30d) or an RFC 3339 time"
    )
    redact_sensitive: StrictBool = Field(
        False, description="store text with secrets replaced by [REDACTED:<kind>]"
    )


class EditMemoryParams(MemoryParams):
    id: StrictStr
    version: Version = Field(description="the version last read")
    title: StrictStr | None = None
    content: StrictStr | None = None
    references: tuple[StrictStr, ...] | None = Field(
        None, description="replaces the list; [] clears it"
    )
    retention: StrictStr | None = Field(
        None, description="a duration from now, an RFC 3339 time, or 'none' to remove it"
    )
    redact_sensitive: StrictBool = False


class SetMemoryStatusParams(MemoryParams):
    id: StrictStr
    version: Version
    status: StatusName = Field(description="'active' or 'disabled'")


class DeleteMemoryParams(MemoryParams):
    id: StrictStr
    version: Version


class ExportMemoriesParams(MemoryParams):
    scope: ScopeName
    workspace_id: StrictStr | None = None
    all: StrictBool = False


class MemoryOperations:
    def __init__(self, rutter: Rutter) -> None:
        self._rutter = rutter

    def list(self, params: ListMemoriesParams) -> MemoryList:
        return service.list_memories(
            self._rutter.store,
            scope=params.scope,
            workspace_id=params.workspace_id,
            include_inactive=params.all,
            limit=params.limit,
        )

    def get(self, params: GetMemoryParams) -> MemoryRecord:
        return service.get_memory(self._rutter.store, params.id)

    def create(
        self,
        params: CreateMemoryParams,
        *,
        actor: OperatorActor,
        imported_from: str | None = None,
    ) -> MemoryRecord:
        """`imported_from`: the file the surface read `params.content` from, as the operator
        named it (checked like a reference, recorded as an import, not stored)."""
        return service.create_memory(
            self._rutter.store,
            scope=params.scope,
            workspace_id=params.workspace_id,
            title=params.title,
            content=params.content,
            references=params.references,
            retention=params.retention,
            redact_sensitive=params.redact_sensitive,
            source_ref=imported_from,
            actor=actor,
        )

    def edit(self, params: EditMemoryParams, *, actor: OperatorActor) -> EditedMemory:
        record, purged = service.edit_memory_purging(
            self._rutter.store,
            params.id,
            version=params.version,
            title=params.title,
            content=params.content,
            references=params.references,
            retention=params.retention,
            redact_sensitive=params.redact_sensitive,
            actor=actor,
        )
        return EditedMemory(**record.model_dump(), purged=purged)

    def set_status(self, params: SetMemoryStatusParams, *, actor: OperatorActor) -> MemoryRecord:
        return service.set_memory_status(
            self._rutter.store,
            params.id,
            version=params.version,
            status=params.status,
            actor=actor,
        )

    def delete_preview(self, params: DeleteMemoryParams) -> MemoryRecord:
        """The memory `delete` would remove: missing or stale fails now, so a surface never
        asks a person to confirm deleting something that cannot be deleted."""
        return service.get_memory(self._rutter.store, params.id, version=params.version)

    def delete(self, params: DeleteMemoryParams, *, actor: OperatorActor) -> DeletedMemory:
        return service.delete_memory(
            self._rutter.store, params.id, version=params.version, actor=actor
        )

    def export(self, params: ExportMemoriesParams) -> MemoryExport:
        return service.export_memories(
            self._rutter.store,
            scope=params.scope,
            workspace_id=params.workspace_id,
            include_inactive=params.all,
        )


__all__ = [
    "DEFAULT_LIST_LIMIT",
    "MAX_LIST_LIMIT",
    "ContentFile",
    "CreateMemoryParams",
    "DeleteMemoryParams",
    "DeletedMemory",
    "EditMemoryParams",
    "EditedMemory",
    "ExportMemoriesParams",
    "GetMemoryParams",
    "ListMemoriesParams",
    "MemoryExport",
    "MemoryList",
    "MemoryOperations",
    "MemoryParams",
    "MemoryRecord",
    "ScopeName",
    "SetMemoryStatusParams",
    "StatusName",
    "read_content_file",
]
