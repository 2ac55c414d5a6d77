"""Experience candidates in the language server (issue 30): a real server subprocess over a
real store. `rutter/memory/candidates|candidate|confirmCandidate|ignoreCandidate` answer with
the CLI's JSON documents, the actor is "lsp", a confirmation needs `confirm: true`, and failures
are JSON-RPC errors carrying the typed error (a changed note `candidate_stale`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from pygls.exceptions import JsonRpcException

from rutter_core.app.continuity import AddNoteParams, EditNoteParams
from rutter_core.app.facade import Rutter
from rutter_core.app.runs import CreateRunParams, SetRunStatusParams
from rutter_core.store import open_store
from tests.conftest import write_tree
from tests.lsp_client import (
    RutterClient,
    capabilities,
    effective,
    folder,
    registered,
    request,
    start,
    stop,
    uri,
)

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]


@dataclass
class Session:
    client: RutterClient
    home: Path
    root: Path
    workspace_id: str


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def session(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Session]:
    base = tmp_path_factory.mktemp("lsp-candidates")
    root = (base / "alpha").resolve()
    write_tree(root, {"AGENTS.md": "alpha\n", "src/main.go": "package main\n"})
    home = base / "home"
    client = await start(home, capabilities("visual_studio_code"), [folder(root)])
    await effective(client, uri(root / "AGENTS.md"))  # the folder is registered
    (workspace,) = registered(home)
    yield Session(client, home, root, workspace.workspace_id)
    await stop(client)


def _finished_notes(session: Session, *texts: str) -> list[Any]:
    """Notes with a reference on a run that then completed, written by another process."""
    with open_store(f"sqlite:///{session.home / 'rutter.db'}") as store:
        rutter = Rutter(store)
        run = rutter.runs.create(
            CreateRunParams(goal="g", workspace_id=session.workspace_id, target="src"),
            actor="cli",
        )
        thread, refs = run.thread_id, ("src/main.go",)
        notes = [
            rutter.continuity.add_note(
                AddNoteParams(thread_id=thread, kind="decision", text=text, references=refs),
                actor="cli",
            )
            for text in texts
        ]
        for status in ("running", "completed"):
            rutter.runs.set_status(
                SetRunStatusParams(run_id=run.run_id, status=status), actor="cli"
            )
    return notes


async def _call(session: Session, method: str, params: Any) -> Any:
    return await request(session.client, f"rutter/memory/{method}", params)


async def _failure(session: Session, method: str, params: Any) -> dict[str, Any]:
    with pytest.raises(JsonRpcException) as raised:
        await _call(session, method, params)
    data = raised.value.data
    assert isinstance(data, dict)
    return data


async def test_list_show_confirm_and_ignore(session: Session) -> None:
    kept, dropped, changed = _finished_notes(session, "Go first", "Rust later", "Zig maybe")
    listed = await _call(session, "candidates", {"uri": uri(session.root / "src/main.go")})
    assert listed == await _call(session, "candidates", {})  # the only served folder
    by_note = {item["source"]["note_id"]: item for item in listed["items"]}
    item = by_note[kept.note_id]
    assert (item["status"], item["content"], item["references"]) == (
        "pending", "Go first", ["src/main.go"],
    )  # fmt: skip
    assert await _call(session, "candidate", {"id": item["candidate_id"]}) == item

    confirm = {
        "id": item["candidate_id"], "version": 1, "fingerprint": item["fingerprint"],
        "source_version": 1,
    }  # fmt: skip
    unconfirmed = await _failure(session, "confirmCandidate", confirm)
    assert unconfirmed["code"] == "confirmation_required"
    confirmed = await _call(session, "confirmCandidate", {**confirm, "confirm": True})
    assert confirmed["candidate"]["status"] == "confirmed"
    assert confirmed["candidate"]["content"] is None
    assert confirmed["candidate"]["review"]["by"] == "lsp"
    memory = confirmed["memory"]
    assert (memory["scope_id"], memory["created_by"], memory["content"]) == (
        session.workspace_id, "lsp", "Go first",
    )  # fmt: skip
    listed_memory = await _call(session, "list", {"scope": "project"})
    assert memory["id"] in [m["id"] for m in listed_memory["items"]]

    other = by_note[dropped.note_id]
    ignored = await _call(session, "ignoreCandidate", {"id": other["candidate_id"], "version": 1})
    assert (ignored["status"], ignored["title"]) == ("ignored", None)

    stale = by_note[changed.note_id]
    with open_store(f"sqlite:///{session.home / 'rutter.db'}") as store:
        Rutter(store).continuity.edit_note(
            EditNoteParams(note_id=changed.note_id, version=1, text="Zig after all"), actor="cli"
        )
    error = await _failure(
        session,
        "confirmCandidate",
        {"id": stale["candidate_id"], "version": 1, "fingerprint": stale["fingerprint"],
         "source_version": 1, "confirm": True},
    )  # fmt: skip
    assert error["code"] == "candidate_stale"
    remaining = await _call(session, "candidates", {})
    assert [i["content"] for i in remaining["items"]] == ["Zig after all"]
