"""Session continuity that the editors follow (issue 14), per client capability set, against a
real server subprocess serving a git repository:

- fork and resume ask the person first (`window/showMessageRequest`, Info) and say what the new
  run takes from the node and what it does not; accepted, they write; declined or dismissed,
  nothing is written and the answer says `cancelled`; a client that cannot ask gets
  `confirmation_unavailable` and nothing is written;
- `rutter/session/recent` lists the workspace's newest stored nodes across its sessions, as the
  tree lists them (with drift markers);
- `rutter/sessionsChanged` reaches the client when continuity data changes: written by a real
  `rutter` CLI subprocess, or by this server; reads notify nothing, and a burst of commits by
  another process is not announced commit by commit.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import attrs
import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.conftest import write_tree
from tests.lsp_client import (
    CLIENTS,
    Prompter,
    RutterClient,
    capabilities,
    effective,
    execute,
    folder,
    registered,
    request,
    start,
    stop,
    uri,
    wait_until,
)
from tests.testing import Cli

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]

BURST = """
import sys
from rutter_core.app.continuity import AddMessageParams
from rutter_core.app.facade import Rutter
from rutter_core.store import open_store

with open_store("sqlite:///" + sys.argv[1]) as store:
    for n in range(int(sys.argv[3])):
        params = AddMessageParams(thread_id=sys.argv[2], role="tool", text=f"step {n}")
        Rutter(store).continuity.add_message(params, source="cli")
"""
"""Another process adding messages one commit each, as fast as it can."""
QUIET_SECONDS = 3.0
"""Longer than the server's poll interval plus its longest settling of a burst."""


def git_repo(root: Path) -> None:
    write_tree(root, {"AGENTS.md": "rules\n", "src/main.go": "package main\n"})
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-q", "-m", "one"]):
        subprocess.run(
            ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@e.x", *args],
            check=True, capture_output=True, timeout=60,
        )  # fmt: skip


def run_cli(home: Path, *args: str) -> dict[str, Any]:
    """The real `rutter` CLI (run in this process, not the server's) writing to the same store."""
    done = Cli(home, home.parent)(*args, "--json")
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@dataclass
class Session:
    client: RutterClient
    client_name: str
    home: Path
    root: Path
    workspace_id: str
    prompter: Prompter

    def cli(self, *args: str) -> dict[str, Any]:
        return run_cli(self.home, *args)

    def checkpointed(self, title: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """A run made with the CLI, a message in its thread, and a checkpoint of it."""
        run = self.cli("run", "create", "--workspace", self.workspace_id, "--goal", "g")
        self.cli("session", "message", "add", run["thread_id"], "--role", "user", "--text", "hi")
        node = self.cli("session", "checkpoint", run["run_id"], "--title", title)
        return run, node


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=CLIENTS)
async def session(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Session]:
    client_name: str = request.param
    base = tmp_path_factory.mktemp(f"lsp-sessions-{client_name}")
    root = (base / "repo").resolve()
    git_repo(root)
    home = base / "home"
    client = await start(home, capabilities(client_name), [folder(root)])
    prompter = Prompter()
    prompter.install(client)
    await effective(client, uri(root / "AGENTS.md"))  # the folder is registered
    [workspace_id] = [ws.workspace_id for ws in registered(home)]
    yield Session(client, client_name, home, root, workspace_id, prompter)
    await stop(client)


async def call(client: RutterClient, name: str, params: Any) -> Any:
    return await request(client, f"rutter/session/{name}", params)


def runs_of(session: Session) -> set[str]:
    listed = session.cli("run", "list", "--workspace", session.workspace_id)["runs"]
    return {run["run_id"] for run in listed}


async def test_the_recent_command_is_advertised(session: Session) -> None:
    result = session.client.initialize_result
    assert result is not None
    assert result.capabilities.execute_command_provider is not None
    assert "rutter.session.recent" in result.capabilities.execute_command_provider.commands


async def test_fork_and_resume_ask_first_and_say_what_is_inherited(session: Session) -> None:
    run, node = session.checkpointed("before the refactor")
    before = runs_of(session)
    asked = len(session.prompter.asked)

    session.prompter.answers.append("Fork")
    forked = await call(session.client, "fork", {"node_id": node["node_id"], "goal": "try B"})
    assert (forked["kind"], forked["parent_node_id"]) == ("fork", node["node_id"])
    assert (forked["mode"], forked["profile"]) == ("ask", None)
    question = session.prompter.asked[asked]
    assert question.type == types.MessageType.Info
    assert [action.title for action in question.actions or []] == ["Fork", "Cancel"]
    message = question.message
    for said in (
        node["node_id"], run["run_id"], '"before the refactor"', "a new mission",
        "revision 1 of run", node["snapshot"]["instructions"]["fingerprint"][:12],
        "not the files on disk now", "its last 1 message (of 1)", "memory references",
        "does not take approvals", "credentials", "execution profile", "ask mode",
    ):  # fmt: skip
        assert said in message, said

    session.prompter.answers.append("Resume")
    resumed = await execute(session.client, "rutter.session.resume", {"node_id": node["node_id"]})
    assert resumed["kind"] == "resume"
    assert [a.title for a in session.prompter.asked[asked + 1].actions or []] == [
        "Resume",
        "Cancel",
    ]
    assert "the node's mission" in session.prompter.asked[asked + 1].message
    assert runs_of(session) == before | {forked["run_id"], resumed["run_id"]}


async def test_declined_or_dismissed_writes_nothing(session: Session) -> None:
    _, node = session.checkpointed("keep")
    before = runs_of(session)
    for answer in ("Cancel", None):  # chosen, or the message dismissed
        session.prompter.answers.append(answer)
        kept = await call(session.client, "fork", {"node_id": node["node_id"], "goal": "g"})
        assert kept == {"node_id": node["node_id"], "cancelled": True}
        session.prompter.answers.append(answer)
        kept = await execute(session.client, "rutter.session.resume", {"node_id": node["node_id"]})
        assert kept == {"node_id": node["node_id"], "cancelled": True}
    assert runs_of(session) == before
    tree = await call(session.client, "tree", {"run_id": node["run_id"]})
    assert [n["kind"] for n in tree["nodes"] if not n["projected"]] == ["root", "checkpoint"]


async def test_nothing_is_asked_about_a_node_that_cannot_be_branched(session: Session) -> None:
    asked = len(session.prompter.asked)
    with pytest.raises(JsonRpcException) as raised:
        await call(session.client, "resume", {"node_id": "node_01M8Y3HJTQYDNPR8CJ56SS1T0B"})
    assert (raised.value.data or {})["code"] == "not_found"
    _, node = session.checkpointed("fine")
    with pytest.raises(JsonRpcException) as raised:
        await call(session.client, "fork", {"node_id": node["node_id"], "goal": " "})
    assert (raised.value.data or {})["code"] == "invalid_goal"
    assert len(session.prompter.asked) == asked


async def test_a_client_that_cannot_ask_gets_confirmation_unavailable(
    session: Session, tmp_path_factory: pytest.TempPathFactory
) -> None:
    base = tmp_path_factory.mktemp(f"lsp-sessions-noask-{session.client_name}")
    root = (base / "repo").resolve()
    git_repo(root)
    caps = capabilities(session.client_name)
    assert caps.window is not None
    caps = attrs.evolve(caps, window=attrs.evolve(caps.window, show_message=None))
    client = await start(base / "home", caps, [folder(root)])
    try:
        await effective(client, uri(root / "AGENTS.md"))
        run = run_cli(base / "home", "run", "create", "--workspace", "repo", "--goal", "g")
        node = run_cli(base / "home", "session", "checkpoint", run["run_id"], "--title", "t")
        for name, params, words in (
            ("fork", {"node_id": node["node_id"], "goal": "g"},
             f"rutter session fork {node['node_id']} --goal GOAL"),
            ("resume", {"node_id": node["node_id"]}, f"rutter session resume {node['node_id']}"),
        ):  # fmt: skip
            with pytest.raises(JsonRpcException) as raised:
                await call(client, name, params)
            data: Any = raised.value.data
            assert (raised.value.code, data["code"]) == (-32803, "confirmation_unavailable")
            assert words in data["message"]
        listed = run_cli(base / "home", "run", "list")["runs"]
        assert [each["run_id"] for each in listed] == [run["run_id"]]
    finally:
        await stop(client)


async def test_recent_lists_the_newest_nodes_across_sessions(session: Session) -> None:
    _, first = session.checkpointed("first")
    other, second = session.checkpointed("second")
    answer = await call(session.client, "recent", {"limit": 3})
    assert answer["workspace_id"] == session.workspace_id
    items = answer["items"]
    assert [item["node_id"] for item in items[:2]] == [second["node_id"], other["root_node_id"]]
    assert answer["has_more"] is True
    newest = items[0]
    assert (newest["kind"], newest["title"], newest["run_id"]) == (
        "checkpoint", "second", other["run_id"],
    )  # fmt: skip
    assert newest["fingerprint"] == second["snapshot"]["fingerprint"]
    assert newest["drift"]["instructions"]["changed"] is False
    assert newest["drift"]["git"]["head_changed"] is False
    assert {"created_at", "session_id", "thread_id", "run_status", "projected"} <= set(newest)
    by_uri = await execute(
        session.client, "rutter.session.recent",
        {"uri": uri(session.root / "src/main.go"), "limit": 100},
    )  # fmt: skip
    ids = [item["node_id"] for item in by_uri["items"]]
    assert ids.index(second["node_id"]) < ids.index(first["node_id"])
    assert by_uri["has_more"] is False
    by_id = await call(session.client, "recent", {"workspace_id": session.workspace_id})
    assert len(by_id["items"]) == min(20, len(ids))

    for params, code in (
        ({"limit": 0}, "invalid_params"),
        ({"limit": 101}, "invalid_params"),
        ({"workspace_id": session.workspace_id, "actor": "cli"}, "invalid_params"),
        ({"uri": uri(session.root.parent / "elsewhere.txt")}, "workspace_required"),
    ):
        with pytest.raises(JsonRpcException) as raised:
            await call(session.client, "recent", params)
        assert (raised.value.code, (raised.value.data or {})["code"]) == (-32602, code)
    unknown = await call(session.client, "recent", {"workspace_id": "nowhere"})
    assert unknown["items"] == []


async def quiet(client: RutterClient) -> int:
    """Once no `rutter/sessionsChanged` has come for a while (the earlier tests' changes are
    all announced), how many have come."""
    while True:
        seen = len(client.sessions_changes)
        await asyncio.sleep(QUIET_SECONDS)
        if len(client.sessions_changes) == seen:
            return seen


async def test_changes_by_the_cli_and_by_the_server_are_announced(session: Session) -> None:
    client = session.client
    run = session.cli("run", "create", "--workspace", session.workspace_id, "--goal", "g")
    seen = await quiet(client)
    # Another process: the CLI checkpoints the run.
    node = session.cli("session", "checkpoint", run["run_id"], "--title", "from the CLI")
    await wait_until(lambda: len(client.sessions_changes) > seen, what="sessionsChanged (CLI)")
    assert client.sessions_changes[seen] == [session.workspace_id]
    seen = await quiet(client)

    # Reads change nothing; this server's own write is announced once.
    await call(client, "tree", {"run_id": run["run_id"]})
    await call(client, "recent", {})
    await call(client, "messages", {"thread_id": run["thread_id"]})
    await call(client, "addNote", {"thread_id": run["thread_id"], "kind": "fact", "text": "x"})
    await wait_until(lambda: len(client.sessions_changes) > seen, what="sessionsChanged (server)")
    assert client.sessions_changes[seen:] == [[session.workspace_id]]
    seen = await quiet(client)

    # A burst from another process (one commit per message) is not announced per commit.
    burst = 30
    database = str(session.home / "rutter.db")
    subprocess.run(
        [sys.executable, "-c", BURST, database, run["thread_id"], str(burst)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    await wait_until(lambda: len(client.sessions_changes) > seen, what="sessionsChanged (burst)")
    after_burst = await quiet(client)
    assert 1 <= after_burst - seen <= burst // 3, client.sessions_changes[seen:]
    seen = after_burst

    # A resume confirmed in the editor is announced too.
    session.prompter.answers.append("Resume")
    resumed = await call(client, "resume", {"node_id": node["node_id"]})
    assert resumed["kind"] == "resume"
    await wait_until(lambda: len(client.sessions_changes) > seen, what="sessionsChanged (resume)")
    assert client.sessions_changes[seen:] == [[session.workspace_id]]
