"""Importing an agent's transcript from the editor: a thin adapter over the app facade
(`server.session.app.transcripts`).

- `rutter/session/import` `{"agent", "path", "workspace_id"?, "thread_id"?}` → the CLI's
  `session import --json` document (`thread_id`, `imported`, `already_present`, `skipped`, ...)

and its command twin `rutter.session.import` taking the same object. A one-shot import of the
file as it is (the CLI's `--watch` has no editor twin: an editor re-imports, which appends only
what is new). The importer is "lsp", set here; the messages' source is `import:<agent>`, set by
core. Without `workspace_id`, the workspace is the registered one containing the directory the
transcript was recorded in (the server has no directory of its own to fall back on). The file is
read and the messages stored on the disk worker.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rutter_core.app.transcripts import ImportTranscriptParams
from rutter_lsp.dispatch import ACTOR, worker_request

if TYPE_CHECKING:
    from rutter_core.app.facade import Rutter
    from rutter_lsp.server import RutterServer


def register(server: RutterServer) -> None:
    @worker_request(
        server, "rutter/session/import", ImportTranscriptParams, command="rutter.session.import"
    )
    def handle(app: Rutter, params: ImportTranscriptParams) -> dict[str, Any]:
        return app.transcripts.import_transcript(params, actor=ACTOR).to_json()
