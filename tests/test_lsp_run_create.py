"""Creating a run and moving its status from an editor (issue 19): `rutter/createRun` and
`rutter/setRunStatus`, per client capability set, against the real server as a subprocess.

The run is created through the app facade as `rutter run create` creates it (same answer), is
listed by `rutter/runs`, announced with `rutter/runsChanged`, and read back by the CLI; a move
to a final status takes it off the active list; a refused move is a typed error and changes
nothing."""

from __future__ import annotations

from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from tests.lsp_client import execute, request, wait_until
from tests.runs_lsp_session import TREE, Session, session, wait_until_async

__all__ = ["session"]

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]


async def refused(session: Session, method: str, params: dict[str, Any]) -> dict[str, Any]:
    with pytest.raises(JsonRpcException) as failed:
        await request(session.client, method, params)
    data = failed.value.data
    assert isinstance(data, dict), failed.value
    return data


async def test_the_server_advertises_the_create_and_status_commands(session: Session) -> None:
    result = session.client.initialize_result
    assert result is not None
    provider = result.capabilities.execute_command_provider
    assert provider is not None
    assert {"rutter.run.create", "rutter.run.setStatus"} <= set(provider.commands)


async def test_a_run_created_from_the_editor_is_the_cli_s_run(session: Session) -> None:
    _root, workspace_id = await session.add_folder(TREE)
    before = len(session.client.runs_changes)
    created = await request(
        session.client,
        "rutter/createRun",
        {"workspace_id": workspace_id, "goal": "tidy the parser", "target": "src/main.go",
         "profile": "reviewer"},
    )  # fmt: skip
    assert set(created) >= {
        "run_id", "mission_id", "session_id", "thread_id", "root_node_id", "revision",
        "fingerprint",
    }  # fmt: skip
    assert created["revision"] == 1
    run_id = created["run_id"]
    await wait_until(
        lambda: [workspace_id] in session.client.runs_changes[before:], what="rutter/runsChanged"
    )
    [listed] = [run for run in await session.runs(workspace_id) if run["run_id"] == run_id]
    assert listed["status"] == "created"
    assert listed["target_path"] == "src/main.go"
    assert listed["goal"] == "tidy the parser"
    assert listed["fingerprint"] == created["fingerprint"]
    shown = session.cli("run", "show", run_id)
    assert shown["profile"] == "reviewer"
    assert shown["mode"] == "ask"
    inspection = await request(session.client, "rutter/runInstructions", {"run_id": run_id})
    assert [s["path"] for s in inspection["pinned"]["sources"]] == ["AGENTS.md", "src/AGENTS.md"]

    # Its command twin answers the same document.
    twin = await execute(
        session.client, "rutter.run.create", {"workspace_id": workspace_id, "goal": "second"}
    )
    assert twin["revision"] == 1
    assert session.cli("run", "show", twin["run_id"])["target_path"] == "."


async def test_the_status_moves_as_the_contract_allows(session: Session) -> None:
    _root, workspace_id = await session.add_folder(TREE)
    created = await request(
        session.client, "rutter/createRun", {"workspace_id": workspace_id, "goal": "ship it"}
    )
    run_id = created["run_id"]
    running = await request(
        session.client, "rutter/setRunStatus", {"run_id": run_id, "status": "running"}
    )
    assert running["run_id"] == run_id
    assert running["status"] == "running"
    move = {"run_id": run_id, "status": "paused"}
    paused = await execute(session.client, "rutter.run.setStatus", move)
    assert paused["status"] == "paused"
    assert session.cli("run", "show", run_id)["status"] == "paused"

    # Only a running run completes: refused, typed, nothing changed.
    data = await refused(session, "rutter/setRunStatus", {"run_id": run_id, "status": "completed"})
    assert data["code"] == "invalid_transition"
    assert data["details"]["allowed"] == ["cancelled", "failed", "running"]
    assert session.cli("run", "show", run_id)["status"] == "paused"

    before = len(session.client.runs_changes)
    cancelled = await request(
        session.client, "rutter/setRunStatus", {"run_id": run_id, "status": "cancelled"}
    )
    assert cancelled["status"] == "cancelled"
    await wait_until(
        lambda: [workspace_id] in session.client.runs_changes[before:], what="rutter/runsChanged"
    )
    await wait_until_async(
        lambda: _gone(session, workspace_id, run_id), what="the run off the active list"
    )
    data = await refused(session, "rutter/setRunStatus", {"run_id": run_id, "status": "running"})
    assert data["code"] == "run_terminal"


async def _gone(session: Session, workspace_id: str, run_id: str) -> bool:
    return all(run["run_id"] != run_id for run in await session.runs(workspace_id))


async def test_bad_create_and_status_params_are_typed_errors(session: Session) -> None:
    _root, workspace_id = await session.add_folder(TREE)
    # The server stands in no directory: the workspace must be named.
    data = await refused(session, "rutter/createRun", {"goal": "somewhere"})
    assert data["code"] == "workspace_required"
    assert data["hint"] == {"fix": "choose_workspace"}
    data = await refused(
        session, "rutter/createRun", {"workspace_id": workspace_id, "goal": "g", "agent": "x"}
    )
    assert data["code"] == "invalid_params"
    assert "unknown field" in data["message"]
    data = await refused(
        session, "rutter/createRun", {"workspace_id": workspace_id, "goal": "g", "mode": "wild"}
    )
    assert data["code"] == "invalid_mode"
    missing = {"run_id": "run_missing", "status": "paused"}
    data = await refused(session, "rutter/setRunStatus", missing)
    assert data["code"] == "run_not_found"
    assert not [run for run in await session.runs(workspace_id) if run["goal"] == "g"]
