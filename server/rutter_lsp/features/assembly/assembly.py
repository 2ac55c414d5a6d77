"""Context assembly in the editor: a thin adapter over the app facade
(`server.session.app.assembly`).

- `rutter/contextAssemble` `{"run_id", "budget"?}` → the CLI's `context assemble --json`
  document (`context_assembly.v1`: the budget, what was configured, and every source's entry
  with the delivered text of the included ones); the assembly is stored in the run's audit
  with the actor "lsp", set here.
- `rutter/contextAudit` `{"run_id", "limit"?}` → the CLI's `context audit --json` document
  (`{"run_id", "assemblies", "has_more"}`, newest first, never a text; each with `followed`,
  its report or null).
- `rutter/contextReport` `{"assembly_id", "followed"?, "ignored"?}` → the CLI's `context report
  --json` document: which delivered sources were followed and which ignored, recorded once
  with `reported_by: "lsp"`.

Each has the command twin `rutter.contextAssemble` / `rutter.contextAudit` /
`rutter.contextReport` taking the same object. The store work runs on the disk worker.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from rutter_core.app.assembly import AssembleParams, AuditParams, ReportParams
from rutter_lsp.dispatch import ACTOR, worker_request

if TYPE_CHECKING:
    from rutter_core.app.facade import Rutter
    from rutter_lsp.server import RutterServer

CONTEXT_ASSEMBLE: Final = "rutter/contextAssemble"
CONTEXT_AUDIT: Final = "rutter/contextAudit"
CONTEXT_REPORT: Final = "rutter/contextReport"


def register(server: RutterServer) -> None:
    @worker_request(server, CONTEXT_ASSEMBLE, AssembleParams, command="rutter.contextAssemble")
    def assemble(app: Rutter, params: AssembleParams) -> dict[str, Any]:
        return app.assembly.assemble(params, actor=ACTOR).to_json()

    @worker_request(server, CONTEXT_AUDIT, AuditParams, command="rutter.contextAudit")
    def audit(app: Rutter, params: AuditParams) -> dict[str, Any]:
        return app.assembly.audit(params).to_json()

    @worker_request(server, CONTEXT_REPORT, ReportParams, command="rutter.contextReport")
    def report(app: Rutter, params: ReportParams) -> dict[str, Any]:
        return app.assembly.report(params, actor=ACTOR).to_json()


__all__ = ["CONTEXT_ASSEMBLE", "CONTEXT_AUDIT", "CONTEXT_REPORT", "register"]
