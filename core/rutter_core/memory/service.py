"""Explicit user and project long-term memory: the operations (docs/reference/memory.md).

Only an operator surface writes memory: every write names its `actor` the surface sets ("cli",
"lsp", later "http_control"); anything else is refused here and by the store's CHECKs. What
text may be stored is `memory.policy`'s, retention `memory.retention`'s, the table
`memory.repo`'s; a project's workspace is checked by the workspaces service, in one transaction.

Every change names the version it was read at and is written guarded by it inside one write
transaction: a stale version is a conflict that states the current version, a missing memory is
not found, never the same answer for both. Delete is physical: the row goes, the store purges
freed pages and its write-ahead log (`Store.purging_write`): the text is in neither file after.
The history index holds active memories only, compacted as a text leaves it (a disable purges).

Why one module: it is the memory's lifecycle (create, read, edit, enable or disable, delete,
export), each operation a few lines over the same guarded read, versioned write and purge; the
checks it shares are the module's tail, and the rules they apply live in `policy` already.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from sqlalchemy.engine import Connection

from rutter_core.kernel.actors import OPERATOR_ACTORS, OperatorActor, is_operator_actor
from rutter_core.kernel.clock import rfc3339, utc_now
from rutter_core.kernel.errors import ConflictError, Hint, NotFoundError, RejectedError, UsageError
from rutter_core.kernel.ids import new_id
from rutter_core.memory import repo
from rutter_core.memory.model import (
    STATUSES,
    USER_SCOPE_ID,
    DeletedMemory,
    MemoryExport,
    MemoryList,
    MemoryRecord,
    MemoryReference,
    ReferencedMemory,
    Scope,
    SourceKind,
    Status,
)
from rutter_core.memory.policy import (
    check_source_ref,
    clean_content,
    clean_title,
    normalize_references,
    scan_secrets,
)
from rutter_core.memory.retention import edited_retention, parse_retention
from rutter_core.store import Store, person_of

DEFAULT_LIST_LIMIT: Final = 100
MAX_LIST_LIMIT: Final = 500

_MEMORY_ID = re.compile(r"mem_[0-9A-HJKMNP-TV-Z]{26}")
_TEXT_FIELDS = frozenset({"title", "content", "references"})  # what an edit purges for


def create_memory(
    store: Store,
    *,
    scope: str,
    workspace_id: str | None = None,
    title: str,
    content: str,
    references: Sequence[str] = (),
    retention: str | None = None,
    redact_sensitive: bool = False,
    source_ref: str | None = None,
    actor: str,
) -> MemoryRecord:
    """Create a memory at version 1.

    `source_ref` is the path the content was imported from (a file the operator named): it is
    checked like a reference and makes the record `operator_import_explicit`; it is not stored.
    """
    prepared = prepare_memory(
        scope=scope,
        workspace_id=workspace_id,
        title=title,
        content=content,
        references=references,
        retention=retention,
        redact_sensitive=redact_sensitive,
        source_ref=source_ref,
        actor=actor,
    )
    with store.write() as conn:
        return insert_prepared(conn, prepared)


@dataclass(frozen=True, slots=True)
class PreparedMemory:
    """A new memory checked against every rule of `memory.policy`, ready to be inserted (its
    workspace is checked at insertion, in the writer's transaction)."""

    scope: Scope
    scope_id: str
    title: str
    content: str
    source_kind: SourceKind
    references: tuple[str, ...]
    retention_until: str | None
    redacted: bool
    actor: OperatorActor
    now_text: str


def prepare_memory(
    *,
    scope: str,
    workspace_id: str | None = None,
    title: str,
    content: str,
    references: Sequence[str] = (),
    retention: str | None = None,
    redact_sensitive: bool = False,
    source_ref: str | None = None,
    already_redacted: bool = False,
    actor: str,
) -> PreparedMemory:
    """Check a new memory before any write: what `create_memory` stores, for a caller that
    inserts it in its own transaction with other writes (`insert_prepared`). `already_redacted`:
    the text had secrets cut out before it got here (a note's, stored redacted), which stores
    it redacted only when the operator asks for that, as a secret found here would."""
    operator = _require_actor(actor)
    scope_name, scope_id = _scope_of(scope, workspace_id)
    title = clean_title(title)
    content = clean_content(content)
    clean_references = normalize_references(references)
    source_kind: SourceKind = "operator_explicit"
    if source_ref is not None:
        check_source_ref(source_ref, field="content file")
        source_kind = "operator_import_explicit"
    if already_redacted and not redact_sensitive:
        raise RejectedError(
            "secret_detected",
            "the text had secrets cut out where it came from; memory never keeps a secret, and "
            "keeps the redacted text only when asked to",
            details={"findings": [{"field": "content", "kind": "redacted_at_source", "count": 1}]},
            hint=Hint("store_redacted"),
        )
    scanned = scan_secrets(title, content, redact_sensitive=redact_sensitive)
    assert scanned.title is not None
    assert scanned.content is not None
    created = utc_now().replace(microsecond=0)
    until = None
    if retention is not None:
        until = rfc3339(parse_retention(retention, created_at=created, now=created))
    return PreparedMemory(
        scope=scope_name,
        scope_id=scope_id,
        title=scanned.title,
        content=scanned.content,
        source_kind=source_kind,
        references=clean_references,
        retention_until=until,
        redacted=scanned.redacted or already_redacted,
        actor=operator,
        now_text=rfc3339(created),
    )


def insert_prepared(conn: Connection, prepared: PreparedMemory) -> MemoryRecord:
    """Insert a prepared memory at version 1 in the caller's write transaction."""
    if prepared.scope == "project":
        _require_workspace(conn, prepared.scope_id)
    return repo.insert_memory(
        conn,
        memory_id=new_id("mem"),
        scope=prepared.scope,
        scope_id=prepared.scope_id,
        title=prepared.title,
        content=prepared.content,
        source_kind=prepared.source_kind,
        references=prepared.references,
        retention_until=prepared.retention_until,
        redacted=prepared.redacted,
        actor=prepared.actor,
        person=person_of(conn),
        now_text=prepared.now_text,
    )


def get_memory(
    store: Store, memory_id: str, *, version: int | None = None, now: datetime | None = None
) -> MemoryRecord:
    """One memory whatever its status (an explicit ID asks for exactly that record).

    With `version`, only the record at exactly that version: a stale version is a conflict
    (a surface checks this before asking a person to confirm a change).
    """
    _require_memory_id(memory_id)
    if version is not None:
        _require_version(memory_id, version)
    now_text = rfc3339(now or utc_now())
    with store.read() as conn:
        if version is None:
            return _existing(conn, memory_id, now_text)
        return _at_version(conn, memory_id, version, now_text)


def list_memories(
    store: Store,
    *,
    scope: str | None = None,
    workspace_id: str | None = None,
    include_inactive: bool = False,
    limit: int = DEFAULT_LIST_LIMIT,
    now: datetime | None = None,
) -> MemoryList:
    """Memories newest change first (`updated_at` desc, then ID desc), at most `limit`.

    `scope` "user" or "project" (project needs `workspace_id`) lists that scope. Without a
    scope: user memory plus `workspace_id`'s project memory when a workspace is given, else
    every memory. Disabled and expired ones only with `include_inactive`.
    """
    limit = _require_limit(limit)
    scoped = None if scope is None else _scope_of(scope, workspace_id)
    now_text = rfc3339(now or utc_now())
    with store.read() as conn:
        records = repo.select_memories(
            conn,
            now_text=now_text,
            scope=None if scoped is None else _across_project(conn, scoped),
            user_and_project_of=(
                project_ids(conn, workspace_id)
                if scoped is None and workspace_id is not None
                else None
            ),
            include_inactive=include_inactive,
            limit=limit + 1,
        )
    return MemoryList(items=tuple(records[:limit]), has_more=len(records) > limit)


def edit_memory(
    store: Store,
    memory_id: str,
    *,
    version: int,
    title: str | None = None,
    content: str | None = None,
    references: Sequence[str] | None = None,
    retention: str | None = None,
    redact_sensitive: bool = False,
    actor: str,
) -> MemoryRecord:
    """`edit_memory_purging` without the purge's outcome."""
    record, _ = edit_memory_purging(
        store,
        memory_id,
        version=version,
        title=title,
        content=content,
        references=references,
        retention=retention,
        redact_sensitive=redact_sensitive,
        actor=actor,
    )
    return record


def edit_memory_purging(
    store: Store,
    memory_id: str,
    *,
    version: int,
    title: str | None = None,
    content: str | None = None,
    references: Sequence[str] | None = None,
    retention: str | None = None,
    redact_sensitive: bool = False,
    actor: str,
) -> tuple[MemoryRecord, bool | None]:
    """Change title, content, references (replaced as a whole) and/or retention
    (`RETENTION_NONE` removes it) of the memory at `version`; the result is version + 1.

    An edit that changes nothing writes nothing and returns the record as it is. A record
    that was ever stored redacted stays `redacted`. With the record: whether the text it
    replaced left the store's files (`Store.purge`), None when it replaced no text.
    """
    operator = _require_actor(actor)
    _require_memory_id(memory_id)
    _require_version(memory_id, version)
    if title is None and content is None and references is None and retention is None:
        raise UsageError(
            "nothing_to_change",
            "nothing to change: an edit needs a new title, content, references or retention",
            details={"id": memory_id},
            hint=Hint("give_a_change"),
        )
    title = None if title is None else clean_title(title)
    content = None if content is None else clean_content(content)
    clean_references = None if references is None else normalize_references(references)
    scanned = scan_secrets(title, content, redact_sensitive=redact_sensitive)
    now = utc_now().replace(microsecond=0)
    now_text = rfc3339(now)
    # A replaced text leaves the store's files (`purged`); retention alone is an ordinary write,
    # a text given unchanged is seen so only in the transaction (`removes_nothing`).
    text_given = title is not None or content is not None or references is not None
    with store.purging_write(purge=text_given) as purge:
        record = _at_version(purge.conn, memory_id, version, now_text)
        changes: repo.MemoryChanges = {}
        if scanned.title is not None and scanned.title != record.title:
            changes["title"] = scanned.title
        if scanned.content is not None and scanned.content != record.content:
            changes["content"] = scanned.content
        if clean_references is not None and clean_references != record.references:
            changes["references"] = clean_references
        if retention is not None:
            until = edited_retention(retention, created_at=record.created_at, now=now)
            if until != record.retention_until:
                changes["retention_until"] = until
        if scanned.redacted and not record.redacted:
            changes["redacted"] = True
        if not changes:
            purge.abandon()  # wrote nothing: no purge, no sync
            return record, None
        replaces_text = not _TEXT_FIELDS.isdisjoint(changes)
        if text_given and not replaces_text:
            purge.removes_nothing()
        updated = _update(purge.conn, record, changes, operator, now_text)
    return updated, purge.purged if replaces_text else None


def set_memory_status(
    store: Store, memory_id: str, *, version: int, status: str, actor: str
) -> MemoryRecord:
    """Enable (`active`) or disable the memory at `version` (then never in a prompt, listed only
    with inactive ones); the status it already has writes nothing."""
    operator = _require_actor(actor)
    _require_memory_id(memory_id)
    _require_version(memory_id, version)
    wanted = _require_status(status)
    now_text = rfc3339(utc_now())
    # Disabled: out of the history index, so out of the store's files too (not reported).
    with store.purging_write(purge=wanted == "disabled") as purge:
        record = _at_version(purge.conn, memory_id, version, now_text)
        if record.status == wanted:
            purge.abandon()  # wrote nothing: no purge, no sync
            return record
        # Returned once the block's exit has committed and purged.
        return _update(purge.conn, record, {"status": wanted}, operator, now_text)


def delete_memory(store: Store, memory_id: str, *, version: int, actor: str) -> DeletedMemory:
    """Delete the memory at exactly `version`, physically: not recoverable from the store."""
    _require_actor(actor)
    _require_memory_id(memory_id)
    _require_version(memory_id, version)
    now_text = rfc3339(utc_now())
    with store.purging_write() as purge:
        _at_version(purge.conn, memory_id, version, now_text)
        if not repo.delete_memory_row(purge.conn, memory_id, version):  # pragma: no cover
            raise _stale(memory_id, version, version + 1)  # only without SQLite's write lock
    return DeletedMemory(memory_id=memory_id, version=version, purged=purge.purged)


def export_memories(
    store: Store,
    *,
    scope: str,
    workspace_id: str | None = None,
    include_inactive: bool = False,
    now: datetime | None = None,
) -> MemoryExport:
    """Every memory of one scope (`context_memory_export.v1`), in list order; disabled and
    expired ones only with `include_inactive`. A project's workspace must be registered."""
    scope_name, scope_id = _scope_of(scope, workspace_id)
    moment = now or utc_now()
    now_text = rfc3339(moment)
    with store.read() as conn:
        if scope_name == "project":
            _require_workspace(conn, scope_id)
        records = repo.select_memories(
            conn,
            now_text=now_text,
            scope=_across_project(conn, (scope_name, scope_id)),
            include_inactive=include_inactive,
        )
    return MemoryExport(
        exported_at=now_text, scope=scope_name, scope_id=scope_id, items=tuple(records)
    )


def count_project_memories(conn: Connection, workspace_id: str) -> int:
    """How many project memories (any status) belong to `workspace_id`, in the caller's
    transaction: a workspace that has some cannot be removed."""
    return repo.count_project_memories(conn, workspace_id)


def remove_project_memories(conn: Connection, workspace_id: str) -> int:
    """Delete every project memory of `workspace_id`, in the caller's transaction (a
    `workspace remove --cascade`); the caller purges the store once it has committed."""
    return repo.delete_project_memories(conn, workspace_id)


def active_references(
    conn: Connection, *, workspace_id: str, now_text: str, limit: int
) -> tuple[list[MemoryReference], int]:
    """References (ID, version, content digest) to the memories active at `now_text` of the
    local user and `workspace_id`, user first then by ID, at most `limit`, and how many are
    active, in the caller's transaction (a checkpoint's, so a concurrent delete lands wholly
    before or after it). No title or body is read."""
    return repo.select_active_references(
        conn, now_text=now_text, workspace_ids=project_ids(conn, workspace_id), limit=limit
    )


def referenced_memories(
    conn: Connection, memory_ids: Sequence[str], *, now_text: str
) -> dict[str, ReferencedMemory]:
    """What became of the memories checkpoints refer to, by ID, in the caller's transaction:
    each one that still exists with its version, digest, status and expiry at `now_text`. A
    deleted memory is simply absent (its row and body are gone). No title or body is read."""
    return {
        found.memory_id: found
        for found in repo.select_referenced(conn, memory_ids, now_text=now_text)
    }


def project_ids(conn: Connection, workspace_id: str) -> tuple[str, ...]:
    """The registrations of `workspace_id`'s project (itself included): a project memory made
    through any of them is the project's (docs/reference/workspaces.md#projects)."""
    from rutter_core.workspaces.service import project_workspace_ids

    return project_workspace_ids(conn, workspace_id)


def _across_project(conn: Connection, scoped: tuple[Scope, str]) -> tuple[Scope, tuple[str, ...]]:
    scope, scope_id = scoped
    return scope, project_ids(conn, scope_id) if scope == "project" else (scope_id,)


def _require_workspace(conn: Connection, workspace_id: str) -> None:
    """`not_registered` unless `workspace_id` is registered, in the caller's transaction."""
    # Imported on use: the workspaces service imports this module (a workspace that still has
    # project memories cannot be removed), and a cycle at import time fails in either order.
    from rutter_core.workspaces.service import require_workspace

    require_workspace(conn, workspace_id)


def find_memory(conn: Connection, memory_id: str, now_text: str) -> MemoryRecord | None:
    """The memory, or None when there is none, in the caller's transaction."""
    return repo.fetch_memory(conn, memory_id, now_text)


# -- reading under a version ----------------------------------------------------------------------


def _existing(conn: Connection, memory_id: str, now_text: str) -> MemoryRecord:
    found = repo.fetch_memory(conn, memory_id, now_text)
    if found is None:
        raise _not_found(memory_id)
    return found


def _at_version(conn: Connection, memory_id: str, version: int, now_text: str) -> MemoryRecord:
    """The memory at exactly `version`: not found and stale are different answers."""
    found = _existing(conn, memory_id, now_text)
    if found.version != version:
        raise _stale(memory_id, version, found.version)
    return found


def _update(
    conn: Connection,
    read: MemoryRecord,
    changes: repo.MemoryChanges,
    actor: OperatorActor,
    now_text: str,
) -> MemoryRecord:
    """`changes` as version + 1 of the memory as `read`. The write is guarded by the version
    read; under SQLite's write lock the guard always holds, elsewhere a writer in between is
    a conflict (or not found) stating what is there now."""
    updated = repo.update_memory(
        conn, read, changes, actor=actor, person=person_of(conn), now_text=now_text
    )
    if updated is None:
        current = _existing(conn, read.memory_id, now_text)
        raise _stale(read.memory_id, read.version, current.version)
    return updated


def _not_found(memory_id: str) -> NotFoundError:
    return NotFoundError(
        "not_found",
        f"no memory {memory_id} exists (it may have been deleted)",
        details={"id": memory_id},
        hint=Hint("list_memories"),
    )


def _stale(memory_id: str, expected: int, current: int) -> ConflictError:
    return ConflictError(
        "conflict",
        f"memory {memory_id} is at version {current}, not {expected}: it changed since you read it",
        details={"id": memory_id, "expected_version": expected, "current_version": current},
        hint=Hint("reread_memory", {"id": memory_id, "version": current}),
    )


# -- arguments ------------------------------------------------------------------------------------


def _require_actor(actor: str) -> OperatorActor:
    if not is_operator_actor(actor):
        raise RejectedError(
            "actor_not_allowed",
            f"actor {actor!r} may not change memory; only operator surfaces "
            f"({', '.join(OPERATOR_ACTORS)}) create, edit, enable, disable or delete it",
            details={"actor": str(actor), "allowed": list(OPERATOR_ACTORS)},
        )
    return actor


def _require_memory_id(memory_id: str) -> str:
    if not isinstance(memory_id, str) or _MEMORY_ID.fullmatch(memory_id) is None:
        raise RejectedError(
            "invalid_memory_id",
            f"{memory_id!r} is not a memory ID (mem_ followed by 26 ULID characters)",
            details={"id": str(memory_id)},
            hint=Hint("list_memories"),
        )
    return memory_id


def _require_version(memory_id: str, version: int) -> int:
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise UsageError(
            "invalid_version",
            f"version must be a whole number from 1 (the memory's current version), got "
            f"{version!r}",
            details={"version": str(version)},
            hint=Hint("show_memory", {"id": memory_id}),
        )
    return version


def _require_limit(limit: int) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIST_LIMIT:
        raise UsageError(
            "invalid_limit",
            f"limit must be between 1 and {MAX_LIST_LIMIT}, got {limit!r}",
            details={"limit": str(limit), "max": MAX_LIST_LIMIT},
        )
    return limit


def _scope_of(scope: str, workspace_id: str | None) -> tuple[Scope, str]:
    """(scope, scope_id) from a scope name and the workspace ID project scope needs."""
    if scope == "user":
        if workspace_id is not None:
            raise UsageError(
                "workspace_not_allowed",
                "user memory belongs to no workspace, but a workspace was given",
                details={"workspace_id": workspace_id},
                hint=Hint("drop_workspace"),
            )
        return "user", USER_SCOPE_ID
    if scope == "project":
        if workspace_id is None:
            raise UsageError(
                "workspace_required",
                "project memory needs a workspace, and none was given",
                hint=Hint("choose_workspace"),
            )
        return "project", workspace_id
    raise UsageError(
        "invalid_scope",
        f"scope must be 'user' or 'project', got {scope!r}",
        details={"scope": str(scope)},
    )


def _require_status(status: str) -> Status:
    if status not in STATUSES:
        raise UsageError(
            "invalid_status",
            f"status must be 'active' or 'disabled', got {status!r}",
            details={"status": str(status)},
        )
    return status


__all__ = [
    "DEFAULT_LIST_LIMIT",
    "MAX_LIST_LIMIT",
    "active_references",
    "count_project_memories",
    "create_memory",
    "delete_memory",
    "edit_memory",
    "export_memories",
    "get_memory",
    "list_memories",
    "set_memory_status",
]
