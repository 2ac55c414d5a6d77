"""History search and read in the editor: a thin adapter over the app facade
(`server.session.app.history`), for the editors' search box and picker (docs/reference/history.md).

Requests (params decoded into the app's params models by `rutter_lsp.dispatch.custom_request`,
unknown fields refused; results: the CLI's `--json` documents; failures: JSON-RPC errors whose
`data` is the typed error, e.g. `conflict` for a changed source and `gone` for one deleted,
disabled, expired or invisible):

- `rutter/historySearch` `{"query", "run_id"?, "workspace_id"?, "scopes"?, "limit"?,
  "cursor"?}` → `{"hits": [{"handle", "source_kind", "source_id", "version", "snippet"}],
  "next_cursor"}`
- `rutter/historyRead` `{"handle", "page"?}` → `{"handle", "page", "pages", "text"}`

Both only read; they run on the session's disk worker.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rutter_core.app.history import HistoryReadParams, HistorySearchParams
from rutter_lsp.dispatch import custom_request, on_worker, ready_app

if TYPE_CHECKING:
    from rutter_lsp.server import RutterServer

SEARCH = "rutter/historySearch"
READ = "rutter/historyRead"


def register(server: RutterServer) -> None:
    @custom_request(server, SEARCH, HistorySearchParams)
    async def search(server: RutterServer, params: HistorySearchParams) -> dict[str, Any]:
        history = (await ready_app(server)).history
        return await on_worker(server, lambda: history.search(params).to_json())

    @custom_request(server, READ, HistoryReadParams)
    async def read(server: RutterServer, params: HistoryReadParams) -> dict[str, Any]:
        history = (await ready_app(server)).history
        return await on_worker(server, lambda: history.read(params).to_json())
