"""Session continuity across a workspace, for pickers and views that follow changes.

- `rutter/session/recent` `{"workspace_id"?, "uri"?, "limit"?}` (command twin
  `rutter.session.recent`) → `{"workspace_id", "computed_at", "items": [node], "has_more"}`:
  the workspace's newest stored nodes across all its sessions (checkpoints, roots, fork and
  resume markers), newest first, each as `rutter/session/tree` lists it (`node_id`, `kind`,
  `title`, `created_at`, `run_id`, `session_id`, `thread_id`, `run_status`, `fingerprint`,
  `drift` of now, `error` of a node failing its check). `limit` 1-100, default 20. The
  workspace: `workspace_id`, else the folder of `uri` (a document or folder URI inside a
  served folder), else the only served workspace (`workspace_required` otherwise).
- Notification `rutter/sessionsChanged` `{"workspace_ids"}` (`SessionsMonitor`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field, StrictStr

from rutter_core.app.branches import RecentLimit, RecentParams
from rutter_core.app.continuity import ContinuityParams
from rutter_core.kernel.errors import UsageError
from rutter_lsp.dispatch import custom_request, decode, on_worker, ready_app
from rutter_lsp.feature import LanguageFeature
from rutter_lsp.features.sessions.monitor import SESSIONS_CHANGED, SessionsMonitor

if TYPE_CHECKING:
    from rutter_lsp.server import RutterServer

RECENT = "rutter/session/recent"
COMMAND_RECENT = "rutter.session.recent"

__all__ = ["RECENT", "SESSIONS_CHANGED", "Sessions", "SessionsMonitor"]


class RecentRequest(ContinuityParams):
    workspace_id: StrictStr | None = None
    uri: StrictStr | None = Field(
        None, description="a document or folder URI inside a served folder: names the workspace"
    )
    limit: RecentLimit | None = None


def workspace_of(server: RutterServer, workspace_id: str | None, uri: str | None) -> str:
    """The workspace the params name: `workspace_id`, else `uri`'s served folder, else the
    only served workspace."""
    if workspace_id is not None:
        return workspace_id
    folders = list(server.session.folders.values())
    if uri is not None:
        located = server.session.locate_uri(uri)
        if located is not None:
            return located.folder.workspace_id
        for folder in folders:
            if folder.uri.rstrip("/") == uri.rstrip("/"):
                return folder.workspace_id
        raise UsageError(
            "workspace_required",
            "the URI is not inside a workspace folder rutter serves; pass 'workspace_id'",
        )
    served = {folder.workspace_id for folder in folders}
    if len(served) == 1:
        return served.pop()
    raise UsageError(
        "workspace_required",
        f"name the workspace with 'workspace_id' or 'uri' ({len(served)} workspaces are served)",
    )


class Sessions(LanguageFeature):
    def setup(self) -> None:
        self.monitor = SessionsMonitor(self.server)
        """Announces continuity changes of the served workspaces (`rutter/sessionsChanged`)."""
        self.server.session.store_watch.subscribe(self.monitor.store_changed)
        register(self.server)


def register(server: RutterServer) -> None:

    @custom_request(server, RECENT, RecentRequest, command=COMMAND_RECENT)
    async def recent(server: RutterServer, request: RecentRequest) -> dict[str, Any]:
        branches = (await ready_app(server)).branches
        fields: dict[str, Any] = {
            "workspace_id": workspace_of(server, request.workspace_id, request.uri)
        }
        if request.limit is not None:
            fields["limit"] = request.limit
        params = decode(RecentParams, fields)  # a limit out of range: invalid_params
        return await on_worker(server, lambda: branches.recent(params).to_json())
