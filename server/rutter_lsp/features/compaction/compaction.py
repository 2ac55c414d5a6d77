"""Compaction in the editor: a thin adapter over the app facade (`server.session.app`), for an
editor's "Compact Thread…" and for reading a tool receipt (docs/reference/continuity.md).

Requests (params decoded into the app's params models, unknown fields refused; results: the
CLI's `--json` documents; failures: JSON-RPC errors whose `data` is the typed error, such as
`compaction_in_progress`, `compaction_pending`, `summarizer_failed` or `thread_changed`):

- `rutter/session/compact` `{"thread_id", "focus"?, "summarizer"?, "summarizer_command"?,
  "summarizer_timeout"?, "summarizer_base_url"?, "summarizer_model"?, "summarizer_key_env"?,
  "input_tokens"?, "operation_key"?}` → the compaction. An editor that wants to show the key
  before the summarizer runs passes its own `operation_key`. A model summarizer's settings not
  given are read from the server's environment (`RUTTER_SUMMARIZER_OPENAI_*`, ...), and so is
  its key.
- `rutter/session/compactionResolve` `{"operation_key", "action": "abandon"|"retry",
  "summarizer_command"?, ...}` → the compaction.
- `rutter/session/receiptRead` `{"receipt_id", "page"?}` → `{"receipt_id", "page", "pages",
  "text"}`.

A compaction's store parts run on the session's disk worker like every store operation (the
operation stored `running`, then the summary stored in one transaction), but its summarizer is
called on a thread of its own (`on_thread`): a model or a program that takes minutes holds
neither the worker nor the event loop, so every other request of the editor is answered
meanwhile. Once stored `running`, the compaction is carried to its end even when the editor
cancels the request (the same operation key then answers its outcome); a server that stops
mid-call leaves it `pending_verification`, as a killed CLI does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from rutter_core.app.compaction import (
    Compaction,
    CompactParams,
    PendingCompaction,
    ResolveCompactionParams,
)
from rutter_core.app.receipts import ReceiptReadParams
from rutter_lsp.dispatch import (
    ACTOR,
    custom_request,
    on_thread,
    on_worker,
    ready_app,
    worker_request,
)

if TYPE_CHECKING:
    from rutter_core.app.facade import Rutter
    from rutter_lsp.server import RutterServer

COMPACT = "rutter/session/compact"
RESOLVE = "rutter/session/compactionResolve"
RECEIPT = "rutter/session/receiptRead"

Begin = Callable[["Rutter"], "Compaction | PendingCompaction"]


async def _summarize_and_store(
    server: RutterServer, app: Rutter, pending: PendingCompaction
) -> Compaction:
    try:
        output = await on_thread(pending.summarize, name="rutter-summarizer")
    except BaseException as error:
        await on_worker(server, partial(app.compaction.abandon_call, pending, error))
        raise
    return await on_worker(server, lambda: app.compaction.complete(pending, output))


def _settled(carried: set[asyncio.Task[Compaction]]) -> Callable[[asyncio.Task[Compaction]], None]:
    def settled(task: asyncio.Task[Compaction]) -> None:
        carried.discard(task)
        if not task.cancelled():
            task.exception()  # retrieved: a request cancelled meanwhile no longer awaits it

    return settled


def register(server: RutterServer) -> None:
    carried: set[asyncio.Task[Compaction]] = set()
    """Compactions carried to their end (a cancelled request does not stop them)."""

    async def compaction(begin: Begin) -> dict[str, Any]:
        app = await ready_app(server)
        begun = await on_worker(server, lambda: begin(app))
        if isinstance(begun, Compaction):
            return begun.to_json()
        task = asyncio.ensure_future(_summarize_and_store(server, app, begun))
        carried.add(task)
        task.add_done_callback(_settled(carried))
        return (await asyncio.shield(task)).to_json()

    @custom_request(server, COMPACT, CompactParams)
    async def compact(server: RutterServer, params: CompactParams) -> dict[str, Any]:
        return await compaction(lambda app: app.compaction.begin(params, actor=ACTOR))

    @custom_request(server, RESOLVE, ResolveCompactionParams)
    async def resolve(server: RutterServer, params: ResolveCompactionParams) -> dict[str, Any]:
        return await compaction(lambda app: app.compaction.begin_resolve(params, actor=ACTOR))

    @worker_request(server, RECEIPT, ReceiptReadParams)
    def receipt(app: Rutter, params: ReceiptReadParams) -> dict[str, Any]:
        return app.receipts.read(params).to_json()
