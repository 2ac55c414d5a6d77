"""The history area's records: what a search finds and what a read returns
(docs/reference/history.md), one JSON shape for every surface."""

from __future__ import annotations

from typing import Any, Final, Literal, get_args

from pydantic import BaseModel, ConfigDict

SourceKind = Literal["memory", "note", "message", "receipt", "summary", "checkpoint"]
SCOPES: Final[tuple[SourceKind, ...]] = get_args(SourceKind)
"""Every scope, in the order a search visits them (memories first, then the thread's
content, newest first)."""

THREAD_SCOPES: Final[tuple[SourceKind, ...]] = SCOPES[1:]
"""The scopes a thread holds: searched only for a run (its lineage's threads)."""

MAX_LIMIT: Final = 50
DEFAULT_LIMIT: Final = 20
MAX_QUERY_CHARS: Final = 256
PAGE_CHARS: Final = 4000
"""Characters of a source's text per `history read` page."""
SCAN_BOUND: Final = 500
"""Visible entries a query shorter than the index's minimum examines per page (the bounded
scan)."""
SNIPPET_CHARS: Final = 160


class HistoryDocument(BaseModel):
    """Base of the history documents: frozen, no unknown fields, `to_json` is the dump."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class HistoryHit(HistoryDocument):
    handle: str
    """Signed and versioned: bound to the run, workspace, source version and content hash."""
    source_kind: SourceKind
    source_id: str
    version: int
    thread_id: str | None
    """The thread holding a note, message, receipt, summary or checkpoint (None: a memory)."""
    recorded_at: str | None
    """When the source was first stored in rutter (RFC 3339 UTC; an imported message: when it
    was imported); an edit keeps it."""
    snippet: str
    """Up to 160 characters of the text around the first match (the text start when the
    match is not found verbatim, e.g. after case folding changes a length)."""


class HistoryHits(HistoryDocument):
    hits: tuple[HistoryHit, ...]
    next_cursor: str | None
    """Opaque; None when there is nothing further."""


class HistoryPage(HistoryDocument):
    handle: str
    page: int
    pages: int
    text: str
