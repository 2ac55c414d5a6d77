"""Compaction in the editor: a thin adapter over the app facade (`server.session.app`), for an
editor's "Compact Thread…" and for reading a tool receipt (docs/reference/continuity.md).

Requests (params decoded into the app's params models, unknown fields refused; results: the
CLI's `--json` documents; failures: JSON-RPC errors whose `data` is the typed error, such as
`compaction_in_progress`, `compaction_pending`, `summarizer_failed` or `thread_changed`):

- `rutter/session/compact` `{"thread_id", "focus"?, "summarizer"?, "summarizer_command"?,
  "summarizer_timeout"?, "input_tokens"?, "operation_key"?}` → the compaction. An editor that
  wants to show the key before the summarizer runs passes its own `operation_key`.
- `rutter/session/compactionResolve` `{"operation_key", "action": "abandon"|"retry",
  "summarizer_command"?}` → the compaction.
- `rutter/session/receiptRead` `{"receipt_id", "page"?}` → `{"receipt_id", "page", "pages",
  "text"}`.

They run on the session's disk worker like every store operation, so a `command` summarizer
holds it for as long as it runs (at most its time limit).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rutter_core.app.compaction import CompactParams, ResolveCompactionParams
from rutter_core.app.receipts import ReceiptReadParams
from rutter_lsp.dispatch import ACTOR, worker_request

if TYPE_CHECKING:
    from rutter_core.app.facade import Rutter
    from rutter_lsp.server import RutterServer

COMPACT = "rutter/session/compact"
RESOLVE = "rutter/session/compactionResolve"
RECEIPT = "rutter/session/receiptRead"


def register(server: RutterServer) -> None:
    @worker_request(server, COMPACT, CompactParams)
    def compact(app: Rutter, params: CompactParams) -> dict[str, Any]:
        return app.compaction.compact(params, actor=ACTOR).to_json()

    @worker_request(server, RESOLVE, ResolveCompactionParams)
    def resolve(app: Rutter, params: ResolveCompactionParams) -> dict[str, Any]:
        return app.compaction.resolve(params, actor=ACTOR).to_json()

    @worker_request(server, RECEIPT, ReceiptReadParams)
    def receipt(app: Rutter, params: ReceiptReadParams) -> dict[str, Any]:
        return app.receipts.read(params).to_json()
