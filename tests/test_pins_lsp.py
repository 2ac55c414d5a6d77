"""Pins and pin proposals in the language server end to end (issue 15), per client capability
set: the requests `rutter/pin/*` and their commands answer with the CLI's JSON shapes, the actor
is always "lsp", a client cannot claim another, and failures are JSON-RPC errors carrying the
typed error. (`rutter/pinProposalsChanged` from a proposal made through `rutter mcp` is in
tests/test_mcp.py.)"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from rutter_core.app.facade import Rutter
from rutter_core.app.pins import ProposePinParams
from rutter_core.app.runs import CreatedRun, CreateRunParams
from rutter_core.store import open_store
from tests.conftest import write_tree
from tests.lsp_client import (
    CLIENTS,
    RutterClient,
    capabilities,
    effective,
    execute,
    folder,
    registered,
    rejected,
    request,
    start,
    stop,
    uri,
    wait_until,
)

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]

TOKEN = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"
OPERATIONS = ("list", "add", "edit", "remove", "proposals", "answer")


@dataclass
class Session:
    client: RutterClient
    home: Path
    workspace_id: str

    def new_run(self) -> CreatedRun:
        with open_store(f"sqlite:///{self.home / 'rutter.db'}") as store:
            return Rutter(store).runs.create(
                CreateRunParams(goal="g", workspace_id=self.workspace_id), actor="cli"
            )

    def propose(self, run: CreatedRun, text: str) -> str:
        with open_store(f"sqlite:///{self.home / 'rutter.db'}") as store:
            return (
                Rutter(store)
                .pins.propose(ProposePinParams(run_id=run.run_id, text=text), actor="mcp")
                .proposal_id
            )


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=CLIENTS)
async def session(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Session]:
    client_name: str = request.param
    base = tmp_path_factory.mktemp(f"lsp-pins-{client_name}")
    root = (base / "repo").resolve()
    write_tree(root, {"AGENTS.md": "rules\n"})
    home = base / "home"
    client = await start(home, capabilities(client_name), [folder(root)])
    await effective(client, uri(root / "AGENTS.md"))
    [workspace_id] = [ws.workspace_id for ws in registered(home)]
    yield Session(client, home, workspace_id)
    await stop(client)


async def call(session: Session, name: str, params: Any) -> Any:
    return await request(session.client, f"rutter/pin/{name}", params)


async def failure(session: Session, name: str, params: Any) -> tuple[int, dict[str, Any]]:
    return await rejected(call(session, name, params))


async def test_commands_are_advertised(session: Session) -> None:
    result = session.client.initialize_result
    assert result is not None
    assert result.capabilities.execute_command_provider is not None
    advertised = set(result.capabilities.execute_command_provider.commands)
    assert advertised >= {f"rutter.pin.{name}" for name in OPERATIONS}


async def test_pins_with_versions_and_the_cli_shapes(session: Session) -> None:
    run = session.new_run()
    added = await call(session, "add", {"thread_id": run.thread_id, "text": f"k {TOKEN}"})
    assert (added["text"], added["redacted"], added["created_by"], added["version"]) == (
        "k [REDACTED:github_token]", True, "lsp", 1,
    )  # fmt: skip
    listed = await execute(session.client, "rutter.pin.list", {"run_id": run.run_id})
    assert (listed["thread_id"], listed["run_id"], listed["count"]) == (
        run.thread_id, run.run_id, 1,
    )  # fmt: skip
    edited = await call(session, "edit", {"pin_id": added["pin_id"], "version": 1, "text": "k"})
    assert (edited["version"], edited["updated_by"]) == (2, "lsp")
    code, stale = await failure(
        session, "edit", {"pin_id": added["pin_id"], "version": 1, "text": "x"}
    )
    assert (code, stale["code"], stale["hint"]["fix"]) == (-32801, "conflict", "reread_pin")
    removed = await call(session, "remove", {"pin_id": added["pin_id"], "version": 2})
    assert removed["removed"] is True
    code, missing = await failure(session, "remove", {"pin_id": added["pin_id"], "version": 2})
    assert (code, missing["code"]) == (-32803, "pin_not_found")


async def test_an_actor_cannot_be_claimed_and_one_id_is_named(session: Session) -> None:
    run = session.new_run()
    for planted in ({"actor": "cli"}, {"created_by": "mcp"}):
        code, refused = await failure(
            session, "add", {"thread_id": run.thread_id, "text": "x", **planted}
        )
        assert (code, refused["code"]) == (-32602, "invalid_params")
    code, both = await failure(session, "list", {"thread_id": run.thread_id, "run_id": run.run_id})
    assert (code, both["code"]) == (-32602, "thread_or_run")


async def test_answers_from_the_editor(session: Session) -> None:
    run = session.new_run()
    first = session.propose(run, "Keep the public API stable.")
    second = session.propose(run, "Prefer tabs.")
    pending = await call(session, "proposals", {"workspace_id": session.workspace_id})
    assert {p["proposal_id"] for p in pending["proposals"]} >= {first, second}
    pinned = await call(session, "answer", {"proposal_id": first, "choice": "pin"})
    assert (pinned["pin"]["text"], pinned["proposal"]["answered_by"]) == (
        "Keep the public API stable.", "lsp",
    )  # fmt: skip
    custom = await execute(
        session.client,
        "rutter.pin.answer",
        {"proposal_id": second, "choice": "custom", "text": "Use spaces.", "pin": False},
    )
    assert (custom["pin"], custom["proposal"]["reply"]) == (None, "Use spaces.")
    code, again = await failure(session, "answer", {"proposal_id": second, "choice": "pin"})
    assert (code, again["code"]) == (-32801, "conflict")
    texts = [p["text"] for p in (await call(session, "list", {"run_id": run.run_id}))["pins"]]
    assert texts == ["Keep the public API stable."]


async def test_one_store_watch_tells_every_feature_of_another_process_commit(
    session: Session,
) -> None:
    """Runs, sessions and pin proposals share the session's one store watch: a run created and
    a pin proposed by another process reach the editor as all three notifications."""
    client, ws = session.client, session.workspace_id

    # Until the server has read its baseline (its first tick may come after earlier tests'
    # runs), a new run is its baseline rather than a change: make runs until one is heard.
    def heard_after(count: int) -> Callable[[], bool]:
        return lambda: len(client.sessions_changes) > count

    for _ in range(20):
        heard = heard_after(len(client.sessions_changes))
        session.new_run()
        with contextlib.suppress(AssertionError):
            await wait_until(heard, timeout=3.0)
            break
    runs, sessions, proposals = (
        len(client.runs_changes), len(client.sessions_changes), len(client.pin_proposal_changes),
    )  # fmt: skip
    run = session.new_run()
    session.propose(run, "Name the store watch once.")
    await wait_until(lambda: [ws] in client.runs_changes[runs:], what="rutter/runsChanged")
    await wait_until(lambda: [ws] in client.sessions_changes[sessions:], what="sessionsChanged")
    await wait_until(
        lambda: [ws] in client.pin_proposal_changes[proposals:], what="pinProposalsChanged"
    )
    pending = await call(session, "proposals", {"workspace_id": ws})
    assert "Name the store watch once." in [p["text"] for p in pending["proposals"]]
