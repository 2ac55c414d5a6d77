"""History search and read (docs/reference/history.md), and the index's upkeep.

**Upkeep.** The areas that write searchable sources call the `index_*` / `unindex_*` functions
from their repos with the connection of the write, so the index changes in the same transaction
as the source and cannot drift from it: memories (indexed while active; an expiry is checked at
read time), notes (while active; `summary` notes are the `summary` scope), messages (`tool`
messages are the `receipt` scope), and checkpoint snapshots (title and summary). A memory text
that leaves the index (edit, disable, delete) is followed by a compaction of the memory index
shard that held it, so none of its tokens stay in the store's pages; the memory service then
purges the log.

**Search.** Memories of the visible owners first, then the thread content of the run's lineage,
each newest first by entry ID (the keyset). A cursor signs the query, scopes, run, workspace,
the phase and the last entry ID, and the horizon: the last entry ID given out when the search
began. Entry IDs are never reused, so later sources stay out of an old cursor's set and a
deleted one only thins it: no hit is skipped or repeated. Queries shorter than the index's
minimum (3 characters) use a bounded scan: each page examines at most `SCAN_BOUND` of the
visible owners' entries and its cursor continues after them (a page may then hold fewer hits,
or none, and a cursor).

**Read.** A handle signs the source's kind, ID, version and content hash with the run and
workspace of the search. Every page re-checks it: a source no longer indexed (deleted,
disabled, superseded), expired or no longer visible to that run and workspace is `gone`
(no text); one at another version or hash is `conflict`.
"""

from __future__ import annotations

import hashlib
import math
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy.engine import Connection

from rutter_core.history import repo
from rutter_core.history.model import (
    MAX_LIMIT,
    MAX_QUERY_CHARS,
    PAGE_CHARS,
    SCAN_BOUND,
    SCOPES,
    SNIPPET_CHARS,
    HistoryHit,
    HistoryHits,
    HistoryPage,
    SourceKind,
)
from rutter_core.history.tokens import CURSOR, HANDLE, invalid, sign, verify
from rutter_core.kernel.errors import ConflictError, Hint, NotFoundError, UsageError
from rutter_core.kernel.ids import recorded_at
from rutter_core.store import Store, fulltext

USER_OWNER = "local-user"


@dataclass(frozen=True, slots=True)
class Visibility:
    """Whose sources a run (or a workspace) may see: memory owners (`local-user` and the
    workspace) and threads (the run's lineage)."""

    memory_owners: tuple[str, ...]
    thread_owners: tuple[str, ...]


VisibilityOf = Callable[[Connection, "str | None", "str | None"], "Visibility | None"]
"""(connection, run ID, workspace ID) -> what they see, None when the run or workspace no
longer exists. Given by the app layer, which knows runs and their lineage."""


def _sha256(body: str) -> str:
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


# -- upkeep ------------------------------------------------------------------------------------


def index_memory(
    conn: Connection,
    *,
    memory_id: str,
    scope_id: str,
    workspace_id: str | None,
    version: int,
    title: str,
    content: str,
    retention_until: str | None,
    active: bool,
    person: str | None = None,
    new: bool = False,
) -> None:
    """Bring the memory's entry in step with the memory as just written (`new`: just created,
    so not indexed yet: nothing to look up). `person`: a user memory's owner, whom its entry
    belongs to as the memory does."""
    found = None if new else repo.find_entry_id(conn, memory_id)
    if not active:
        if found is not None:
            repo.delete_entries(conn, [found[0]], memory=True)
            repo.compact_memory_shards(conn, [found[0]])
        return
    body = f"{title}\n{content}"
    entry = repo.NewEntry(
        source_kind="memory",
        source_id=memory_id,
        owner_id=scope_id,
        workspace_id=workspace_id,
        version=version,
        content_sha256=_sha256(body),
        expires_at=retention_until,
        body=body,
        person=person,
    )
    if found is None:
        repo.insert_entries(conn, [entry])
        return
    changed = found[1] != entry.content_sha256
    repo.replace_entry(conn, found[0], entry, body_changed=changed)
    if changed:
        repo.compact_memory_shards(conn, [found[0]])


def unindex_memories(conn: Connection, memory_ids: Sequence[str]) -> None:
    """Remove deleted memories from the index, leaving none of their tokens."""
    ids = [found[0] for m in memory_ids if (found := repo.find_entry_id(conn, m)) is not None]
    if ids:
        repo.delete_entries(conn, ids, memory=True)
        repo.compact_memory_shards(conn, ids)


@dataclass(frozen=True, slots=True)
class ThreadText:
    """A new source a thread holds."""

    source_kind: SourceKind
    source_id: str
    thread_id: str
    version: int
    text: str


def message_kind(role: str) -> SourceKind:
    return "receipt" if role == "tool" else "message"


def note_kind(kind: str) -> SourceKind:
    return "summary" if kind == "summary" else "note"


def index_thread_texts(conn: Connection, items: Sequence[ThreadText]) -> None:
    """Index new thread content (messages, notes, checkpoints) in the caller's write."""
    repo.insert_entries(
        conn,
        [
            repo.NewEntry(
                source_kind=item.source_kind,
                source_id=item.source_id,
                owner_id=item.thread_id,
                workspace_id=None,
                version=item.version,
                content_sha256=_sha256(item.text),
                expires_at=None,
                body=item.text,
            )
            for item in items
        ],
    )


def index_note(conn: Connection, item: ThreadText, *, active: bool) -> None:
    """Bring a note's entry in step with the note as just written (a superseded note leaves
    the index)."""
    found = repo.find_entry_id(conn, item.source_id)
    if not active:
        if found is not None:
            repo.delete_entries(conn, [found[0]], memory=False)
        return
    if found is None:
        index_thread_texts(conn, [item])
        return
    entry = repo.NewEntry(
        source_kind=item.source_kind,
        source_id=item.source_id,
        owner_id=item.thread_id,
        workspace_id=None,
        version=item.version,
        content_sha256=_sha256(item.text),
        expires_at=None,
        body=item.text,
    )
    repo.replace_entry(conn, found[0], entry, body_changed=found[1] != entry.content_sha256)


def backfill_pending(conn: Connection) -> bool:
    """Whether sources stored before the index existed still wait to be indexed."""
    return repo.state(conn)[2]


def backfill_thread_texts(conn: Connection, items: Sequence[ThreadText]) -> None:
    """Index the ones of `items` not indexed yet (the backfill of an upgraded store)."""
    present = repo.indexed_among(conn, [item.source_id for item in items])
    index_thread_texts(conn, [item for item in items if item.source_id not in present])


def finish_backfill(conn: Connection) -> None:
    repo.backfill_done(conn)


Backfill = Callable[[Store], None]
"""Indexes what an upgraded store held before the index (given by the app layer, which knows
the areas), then `finish_backfill`, in one write."""


def unindex_owners(conn: Connection, owner_ids: Sequence[str]) -> int:
    """Remove every entry of these owners (threads or a workspace's memories, on a workspace
    removal); how many. Memory text is compacted away."""
    owned = repo.entries_owned(conn, owner_ids)
    memory = [entry_id for entry_id, kind in owned if kind == "memory"]
    thread = [entry_id for entry_id, kind in owned if kind != "memory"]
    removed = repo.delete_entries(conn, thread, memory=False)
    if memory:
        removed += repo.delete_entries(conn, memory, memory=True)
        repo.compact_memory_shards(conn, memory)
    return removed


# -- search and read ---------------------------------------------------------------------------

Phase = Literal["m", "t"]


def _made_secret(store: Store) -> str:
    """The signing secret, made on the first search of a store (one write, ever)."""
    with store.write() as conn:
        return repo.set_secret_once(conn, secrets.token_hex(32))


def require_query(query: object) -> str:
    if (
        not isinstance(query, str)
        or not 0 < len(query) <= MAX_QUERY_CHARS
        or not query.strip()
        or "\x00" in query
    ):
        raise UsageError(
            "invalid_query",
            f"a history query is 1-{MAX_QUERY_CHARS} characters, not only spaces, without NUL",
            details={"max_chars": MAX_QUERY_CHARS},
        )
    return query


def require_scopes(scopes: Sequence[str] | None) -> tuple[SourceKind, ...]:
    if not scopes:
        return SCOPES
    unknown = [s for s in scopes if s not in SCOPES]
    if unknown:
        raise UsageError(
            "invalid_scope",
            f"a history scope is one of {', '.join(SCOPES)}",
            details={"allowed": list(SCOPES)},
        )
    return tuple(s for s in SCOPES if s in scopes)


def require_limit(limit: int) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise UsageError(
            "invalid_limit",
            f"a history search limit is 1-{MAX_LIMIT}",
            details={"max": MAX_LIMIT},
        )
    return limit


def search(
    store: Store,
    *,
    query: str,
    scopes: Sequence[str] | None,
    run_id: str | None,
    workspace_id: str | None,
    cursor: str | None,
    limit: int,
    now: str,
    visibility: VisibilityOf,
    backfill: Backfill,
) -> HistoryHits:
    """One page of hits (see the module's docstring)."""
    query = require_query(query)
    kinds = require_scopes(scopes)
    limit = require_limit(limit)
    while True:
        with store.read() as conn:
            secret, last, pending = repo.state(conn)
            if not pending:
                seen = visibility(conn, run_id, workspace_id)
                if seen is None:  # pragma: no cover - the app layer raises not found first
                    raise _gone()
                if cursor is None:
                    horizon = last
                    phase: Phase = "m" if "memory" in kinds else "t"
                    before = horizon + 1
                elif secret is None:
                    raise invalid(CURSOR)  # no cursor was ever issued here
                else:
                    phase, before, horizon = _resume(
                        secret, cursor, query, kinds, run_id, workspace_id
                    )
                found, next_key = _collect(
                    conn, query, kinds, seen, phase=phase, before=before, horizon=horizon,
                    now=now, limit=limit,
                )  # fmt: skip
                break
        backfill(store)  # once per store: it clears `pending` in its write
    if secret is None:
        secret = _made_secret(store)
    basis = {"q": query, "sc": list(kinds), "r": run_id, "w": workspace_id, "z": horizon}
    next_cursor = (
        None
        if next_key is None
        else sign(secret, CURSOR, {**basis, "p": next_key[0], "b": next_key[1]})
    )
    hits = tuple(
        HistoryHit(
            handle=sign(
                secret,
                HANDLE,
                {
                    "k": entry.source_kind,
                    "s": entry.source_id,
                    "v": entry.version,
                    "h": entry.content_sha256,
                    "r": run_id,
                    "w": workspace_id,
                },
            ),
            source_kind=entry.source_kind,
            source_id=entry.source_id,
            version=entry.version,
            thread_id=None if entry.source_kind == "memory" else entry.owner_id,
            recorded_at=recorded_at(entry.source_id),
            snippet=_snippet(entry.body, query),
        )
        for entry in found
    )
    return HistoryHits(hits=hits, next_cursor=next_cursor)


def _resume(
    secret: str,
    cursor: str,
    query: str,
    kinds: tuple[SourceKind, ...],
    run_id: str | None,
    workspace_id: str | None,
) -> tuple[Phase, int, int]:
    document = verify(secret, CURSOR, cursor)
    basis = (document.get("q"), document.get("sc"), document.get("r"), document.get("w"))
    phase, before, horizon = document.get("p"), document.get("b"), document.get("z")
    if (
        basis != (query, list(kinds), run_id, workspace_id)
        or phase not in ("m", "t")
        or not isinstance(before, int)
        or not isinstance(horizon, int)
    ):
        raise invalid(CURSOR)
    return phase, before, horizon


def _collect(
    conn: Connection,
    query: str,
    kinds: tuple[SourceKind, ...],
    seen: Visibility,
    *,
    phase: Phase,
    before: int,
    horizon: int,
    now: str,
    limit: int,
) -> tuple[list[repo.Entry], tuple[Phase, int] | None]:
    short = len(query) < fulltext.min_query_chars(conn)
    folded = query.casefold()
    thread_kinds = [k for k in kinds if k != "memory"]
    hits: list[repo.Entry] = []
    while True:
        tables = repo.MEMORY_TABLES if phase == "m" else (repo.THREAD_TABLE,)
        phase_kinds = ["memory"] if phase == "m" else thread_kinds
        owners = seen.memory_owners if phase == "m" else seen.thread_owners
        if phase_kinds and owners:
            left = limit - len(hits)
            window: dict[str, Any] = {
                "owners": owners, "kinds": phase_kinds, "before": before,
                "horizon": horizon, "now": now,
            }  # fmt: skip
            if short:
                rows, lowest = repo.scan(conn, tables, bound=SCAN_BOUND, **window)
                rows = [row for row in rows if folded in row.body.casefold()]
            else:
                rows, lowest = repo.search(conn, tables, query, limit=left + 1, **window), None
            if len(rows) > left:
                hits.extend(rows[:left])
                return hits, (phase, hits[-1].entry_id)
            hits.extend(rows)
            if lowest is not None:
                return hits, (phase, lowest)
        if phase == "m" and thread_kinds and seen.thread_owners:
            phase, before = "t", horizon + 1
            if len(hits) == limit:
                return hits, (phase, before)
            continue
        return hits, None


def _snippet(body: str, query: str) -> str:
    at = body.lower().find(query.lower())
    start = max(0, at - 40) if at >= 0 else 0
    return " ".join(body[start : start + SNIPPET_CHARS].split())


def read(
    store: Store, *, handle: str, page: int, now: str, visibility: VisibilityOf
) -> HistoryPage:
    # No backfill here: a handle comes from a search, which ran it.
    """Page `page` (from 1) of the text a handle names, re-checked (see the module's
    docstring)."""
    if isinstance(page, bool) or not isinstance(page, int) or page < 1:
        raise UsageError("invalid_page", "a page is a whole number from 1", details={"min": 1})
    with store.read() as conn:
        secret = repo.secret(conn)
        if secret is None:
            raise invalid(HANDLE)  # no handle was ever issued here
        document = verify(secret, HANDLE, handle)
        kind, source_id, version, sha = (document.get(k) for k in ("k", "s", "v", "h"))
        run_id, workspace_id = document.get("r"), document.get("w")
        if not (
            kind in SCOPES
            and isinstance(source_id, str)
            and isinstance(version, int)
            and isinstance(sha, str)
            and (run_id is None or isinstance(run_id, str))
            and (workspace_id is None or isinstance(workspace_id, str))
        ):
            raise invalid(HANDLE)
        seen = visibility(conn, run_id, workspace_id)
        entry = repo.read_entry(conn, source_id)
    if seen is None or entry is None or entry.source_kind != kind:
        raise _gone()
    owners = seen.memory_owners if kind == "memory" else seen.thread_owners
    if entry.owner_id not in owners or (entry.expires_at is not None and entry.expires_at <= now):
        raise _gone()
    if entry.version != version or entry.content_sha256 != sha:
        raise ConflictError(
            "conflict",
            f"{entry.source_kind} {entry.source_id} changed since the search (it is at version "
            f"{entry.version}): search again for its current text",
            details={
                "source_kind": entry.source_kind,
                "source_id": entry.source_id,
                "expected_version": version,
                "current_version": entry.version,
            },
            hint=Hint("search_history_again"),
        )
    pages = max(1, math.ceil(len(entry.body) / PAGE_CHARS))
    if page > pages:
        raise UsageError(
            "page_out_of_range",
            f"the source has {pages} page(s)",
            details={"page": page, "pages": pages},
        )
    text = entry.body[(page - 1) * PAGE_CHARS : page * PAGE_CHARS]
    return HistoryPage(handle=handle, page=page, pages=pages, text=text)


def _gone() -> NotFoundError:
    return NotFoundError(
        "gone",
        "the source this handle names is gone: deleted, disabled, superseded, expired or not "
        "visible to its run and workspace; no text is returned",
        hint=Hint("search_history_again"),
    )
