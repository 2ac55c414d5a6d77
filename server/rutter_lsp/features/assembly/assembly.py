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
from rutter_lsp.dispatch import ACTOR, custom_request, on_worker, ready_app

if TYPE_CHECKING:
    from rutter_lsp.server import RutterServer

CONTEXT_ASSEMBLE: Final = "rutter/contextAssemble"
CONTEXT_AUDIT: Final = "rutter/contextAudit"
CONTEXT_REPORT: Final = "rutter/contextReport"


def register(server: RutterServer) -> None:
    @custom_request(server, CONTEXT_ASSEMBLE, AssembleParams, command="rutter.contextAssemble")
    async def assemble(server: RutterServer, params: AssembleParams) -> dict[str, Any]:
        operations = (await ready_app(server)).assembly
        return await on_worker(server, lambda: operations.assemble(params, actor=ACTOR).to_json())

    @custom_request(server, CONTEXT_AUDIT, AuditParams, command="rutter.contextAudit")
    async def audit(server: RutterServer, params: AuditParams) -> dict[str, Any]:
        operations = (await ready_app(server)).assembly
        return await on_worker(server, lambda: operations.audit(params).to_json())

    @custom_request(server, CONTEXT_REPORT, ReportParams, command="rutter.contextReport")
    async def report(server: RutterServer, params: ReportParams) -> dict[str, Any]:
        operations = (await ready_app(server)).assembly
        return await on_worker(server, lambda: operations.report(params, actor=ACTOR).to_json())


__all__ = ["CONTEXT_ASSEMBLE", "CONTEXT_AUDIT", "CONTEXT_REPORT", "register"]
