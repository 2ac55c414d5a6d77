"""Context assembly in the language server end to end (issue 16), per client capability set:
`rutter/contextAssemble` and `rutter/contextAudit` (and their commands) answer with the CLI's
JSON shapes, the actor is always "lsp", each call reloads the memories, and failures are
JSON-RPC errors carrying the typed error."""

from __future__ import annotations

import pytest

from tests.assembly_lsp_session import (
    Session,
    failure,
    session,
)
from tests.lsp_client import (
    execute,
    request,
)

__all__ = ["session"]  # the fixture

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]


async def test_commands_are_advertised(session: Session) -> None:
    result = session.client.initialize_result
    assert result is not None
    assert result.capabilities.execute_command_provider is not None
    advertised = set(result.capabilities.execute_command_provider.commands)
    assert advertised >= {"rutter.contextAssemble", "rutter.contextAudit", "rutter.contextReport"}


async def test_assemble_reloads_and_the_audit_lists(session: Session) -> None:
    run = session.new_run()
    fact = session.project_memory("the API is frozen")
    first = await request(session.client, "rutter/contextAssemble", {"run_id": run.run_id})
    assert first["created_by"] == "lsp"
    assert [(e["kind"], e["id"], e["decision"], e["text"]) for e in first["entries"]] == [
        ("instruction", "AGENTS.md", "included", "rules\n"),
        ("memory", fact.memory_id, "included", "the API is frozen"),
    ]
    session.disable(fact)
    second = await execute(
        session.client, "rutter.contextAssemble", {"run_id": run.run_id, "budget": 64}
    )
    assert (second["entries"][1]["reason"], second["budget"]["background"]) == ("disabled", 64)
    audit = await request(session.client, "rutter/contextAudit", {"run_id": run.run_id})
    assert [a["assembly_id"] for a in audit["assemblies"]] == [
        second["assembly_id"], first["assembly_id"],
    ]  # fmt: skip
    assert all("text" not in e for a in audit["assemblies"] for e in a["entries"])
    one = await execute(session.client, "rutter.contextAudit", {"run_id": run.run_id, "limit": 1})
    assert (len(one["assemblies"]), one["has_more"]) == (1, True)
    report = await request(
        session.client,
        "rutter/contextReport",
        {"assembly_id": first["assembly_id"], "followed": ["AGENTS.md", fact.memory_id]},
    )
    assert (report["followed"], report["ignored"], report["reported_by"]) == (
        ["AGENTS.md", fact.memory_id], [], "lsp",
    )  # fmt: skip
    audit = await execute(session.client, "rutter.contextAudit", {"run_id": run.run_id})
    assert [a["followed"] for a in audit["assemblies"]] == [None, report]
    code, unknown = await failure(
        session, "rutter/contextReport", {"assembly_id": first["assembly_id"], "ignored": ["x"]}
    )
    assert (code, unknown["code"]) == (-32803, "not_delivered")


async def test_failures_are_typed(session: Session) -> None:
    run = session.new_run()
    code, bad = await failure(
        session, "rutter/contextAssemble", {"run_id": run.run_id, "budget": 0}
    )
    assert (code, bad["code"]) == (-32602, "invalid_budget")
    code, missing = await failure(
        session, "rutter/contextAssemble", {"run_id": "run_01M8Y3HJTQYDNPR8CJ56SS1T0B"}
    )
    assert (code, missing["code"]) == (-32803, "run_not_found")
    code, planted = await failure(
        session, "rutter/contextAssemble", {"run_id": run.run_id, "actor": "cli"}
    )
    assert (code, planted["code"]) == (-32602, "invalid_params")
    code, limit = await failure(session, "rutter/contextAudit", {"run_id": run.run_id, "limit": 0})
    assert (code, limit["code"]) == (-32602, "invalid_limit")
