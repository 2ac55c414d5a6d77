"""Fork, resume, the session tree and compare in the language server end to end (issue 13), per
client capability set: a real server subprocess serves a git repository; `rutter/session/fork`,
`/resume`, `/tree`, `/compare` and their `rutter.session.*` commands answer with the CLI's JSON
shapes, the actor is always "lsp", and refusals are JSON-RPC errors carrying the typed error.
Fork and resume are confirmed by the person (`Prompter`); tests/test_sessions_lsp.py covers
the question itself, declining it, and clients that cannot ask."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
import pytest_asyncio

from rutter_core.app.continuity import AddNoteParams, CheckpointParams
from rutter_core.app.facade import Rutter
from rutter_core.app.runs import CreateRunParams
from rutter_core.store import open_store
from tests.lsp_client import (
    CLIENTS,
    ServedRepo,
    execute,
    rejected,
    request,
    serve_git_repo,
    stop,
)

Session = ServedRepo

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]

OPERATIONS = ("fork", "resume", "tree", "compare")
AUTHORITY = {"approvals", "capability_grants", "credentials", "debug_sessions",
             "execution_leases", "network_authorization", "processes", "terminal_leases",
             "execution_profiles"}  # fmt: skip


@dataclass
class Made:
    """A run with a checkpoint and a decision note, made by another process (the CLI's)."""

    run_id: str
    session_id: str
    root_node_id: str
    node_id: str
    note_id: str


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=CLIENTS)
async def session(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Session]:
    client_name: str = request.param
    served = await serve_git_repo(
        tmp_path_factory.mktemp(f"lsp-branches-{client_name}"), client_name
    )
    yield served
    await stop(served.client)


def made(session: Session) -> Made:
    with open_store(f"sqlite:///{session.home / 'rutter.db'}") as store:
        rutter = Rutter(store)
        run = rutter.runs.create(
            CreateRunParams(goal="g", workspace_id=session.workspace_id, mode="full"), actor="cli"
        )
        node = rutter.continuity.checkpoint(
            CheckpointParams(run_id=run.run_id, title="from the CLI"), actor="cli"
        )
        note = rutter.continuity.add_note(
            AddNoteParams(thread_id=run.thread_id, kind="decision", text="decided"), actor="cli"
        )
    return Made(run.run_id, run.session_id, run.root_node_id, node.node_id, note.note_id)


async def call(session: Session, name: str, params: Any) -> Any:
    return await request(session.client, f"rutter/session/{name}", params)


async def failure(session: Session, name: str, params: Any) -> tuple[int, dict[str, Any]]:
    return await rejected(call(session, name, params))


async def test_commands_are_advertised(session: Session) -> None:
    result = session.client.initialize_result
    assert result is not None
    assert result.capabilities.execute_command_provider is not None
    advertised = set(result.capabilities.execute_command_provider.commands)
    assert advertised >= {f"rutter.session.{name}" for name in OPERATIONS}


async def test_fork_resume_tree_and_compare_with_the_cli_shapes(session: Session) -> None:
    source = made(session)
    session.prompter.answers.extend(["Fork", "Resume"])
    forked = await call(session, "fork", {"node_id": source.node_id, "goal": "from the editor"})
    assert (forked["kind"], forked["parent_node_id"], forked["source_run_id"]) == (
        "fork", source.node_id, source.run_id,
    )  # fmt: skip
    assert forked["authority"] == dict.fromkeys(AUTHORITY, False)
    assert (forked["mode"], forked["profile"], forked["status"]) == ("ask", None, "created")
    resumed = await execute(session.client, "rutter.session.resume", {"node_id": source.node_id})
    assert (resumed["kind"], resumed["source_run_id"]) == ("resume", source.run_id)
    with open_store(f"sqlite:///{session.home / 'rutter.db'}") as store, store.read() as conn:
        actors = conn.exec_driver_sql(
            "SELECT DISTINCT created_by FROM continuity_nodes WHERE node_id IN (?, ?)",
            (forked["node_id"], resumed["node_id"]),
        ).all()
    assert [actor for (actor,) in actors] == ["lsp"]

    tree = await call(session, "tree", {"session_id": forked["session_id"]})
    assert tree["protocol_version"] == "session_tree.v1"
    kinds = [(n["node_id"], n["kind"], n["projected"]) for n in tree["nodes"]]
    assert kinds[:2] == [
        (source.root_node_id, "root", False),
        (source.node_id, "checkpoint", False),
    ]
    rest = tree["nodes"][2:]
    assert {(n["node_id"], n["kind"], n["projected"]) for n in rest} == {
        (source.note_id, "decision", True),
        (forked["node_id"], "fork", False),
        (resumed["node_id"], "resume", False),
    }
    # In the order they were made, to the second; a projected note after the stored nodes of
    # its second (the note, the fork and the resume may fall in one second or across two).
    assert rest == sorted(rest, key=lambda n: (n["created_at"], n["projected"], n["node_id"]))
    by_run = await execute(session.client, "rutter.session.tree", {"run_id": source.run_id})
    assert [n["node_id"] for n in by_run["nodes"]] == [n["node_id"] for n in tree["nodes"]]
    checkpoint = next(n for n in tree["nodes"] if n["node_id"] == source.node_id)
    assert checkpoint["drift"]["git"]["head_changed"] is False

    compared = await call(
        session, "compare", {"node_a": source.root_node_id, "node_b": source.node_id}
    )
    assert (compared["a"]["kind"], compared["b"]["kind"]) == ("root", "checkpoint")
    assert compared["same"]["instructions"] is True
    assert (
        await execute(
            session.client,
            "rutter.session.compare",
            {"node_a": source.root_node_id, "node_b": source.node_id},
        )
        == compared
    )


async def test_refusals_are_typed_jsonrpc_errors(session: Session) -> None:
    source = made(session)
    unknown = "node_01M8Y3HJTQYDNPR8CJ56SS1T0B"
    code, error = await failure(session, "fork", {"node_id": source.note_id, "goal": "g"})
    assert (code, error["code"], error["hint"]) == (-32803, "rejected",
                                                    {"fix": "choose_stored_node"})  # fmt: skip
    code, error = await failure(session, "resume", {"node_id": unknown})
    assert (code, error["code"]) == (-32803, "not_found")
    code, error = await failure(session, "compare", {"node_a": source.node_id, "node_b": unknown})
    assert error["code"] == "not_found"
    code, error = await failure(session, "tree", {"run_id": "run_01M8Y3HJTQYDNPR8CJ56SS1T0B"})
    assert (code, error["code"]) == (-32803, "run_not_found")
    code, error = await failure(session, "tree", {"session_id": "ses_01M8Y3HJTQYDNPR8CJ56SS1T0B"})
    assert error["code"] == "session_not_found"
    code, error = await failure(session, "tree", {})
    assert (code, error["code"]) == (-32602, "invalid_params")
    code, error = await failure(session, "fork", {"node_id": source.node_id, "goal": " "})
    assert error["code"] == "invalid_goal"
    # The actor is the server's own; params are the operation's model, nothing else.
    for planted in ({"actor": "cli"}, {"mode": "full"}, {"profile": "release"},
                    {"authority": {"approvals": True}}):  # fmt: skip
        code, error = await failure(
            session, "fork", {"node_id": source.node_id, "goal": "g", **planted}
        )
        assert (code, error["code"]) == (-32602, "invalid_params")
    code, error = await failure(session, "fork", {"node_id": source.node_id})
    assert error["code"] == "invalid_params"
