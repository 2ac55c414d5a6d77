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
from rutter_lsp.dispatch import worker_request

if TYPE_CHECKING:
    from rutter_core.app.facade import Rutter
    from rutter_lsp.server import RutterServer

SEARCH = "rutter/historySearch"
READ = "rutter/historyRead"


def register(server: RutterServer) -> None:
    @worker_request(server, SEARCH, HistorySearchParams)
    def search(app: Rutter, params: HistorySearchParams) -> dict[str, Any]:
        return app.history.search(params).to_json()

    @worker_request(server, READ, HistoryReadParams)
    def read(app: Rutter, params: HistoryReadParams) -> dict[str, Any]:
        return app.history.read(params).to_json()
