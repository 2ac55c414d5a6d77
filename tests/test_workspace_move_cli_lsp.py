"""A workspace whose directory moved (docs/reference/workspaces.md), end to end: the directory is
renamed, `rutter workspace move` (a real CLI process) points the workspace there, its runs keep
their ID and show drift as usual, and the language server serves the moved folder under the existing
ID. `remove` refused, then `--cascade`, through the CLI."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.conftest import write_tree
from tests.lsp_client import (
    CLIENTS,
    capabilities,
    effective,
    folder,
    registered,
    served,
    start,
    stop,
    uri,
)
from tests.testing import THIS_MACHINE, Cli

TREE: dict[str, str | bytes] = {"AGENTS.md": "root rules\n", "src/AGENTS.md": "src rules\n"}


def test_move_then_remove_through_the_cli(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "home", tmp_path)
    write_tree(tmp_path / "before", TREE)
    cli.json("workspace", "register", "demo", "before")
    run = cli.json("run", "create", "--workspace", "demo", "--goal", "fix it", "--target", "src")
    (tmp_path / "before").rename(tmp_path / "after")  # os.rename of the real directory

    gone = cli("context", "instructions", "--run", run["run_id"])
    assert "no longer exists" in gone.stdout + gone.stderr

    moved = cli("workspace", "move", "demo", "after")
    assert moved.returncode == 0, moved.stderr
    assert moved.stdout == (
        f"Moved workspace demo: {tmp_path / 'before'} -> {tmp_path / 'after'}\n"
    )
    inspected = cli.json("context", "instructions", "--run", run["run_id"])
    assert inspected["stale"] is False
    (tmp_path / "after" / "src" / "AGENTS.md").write_text("src rules v2\n", encoding="utf-8")
    assert cli.json("context", "instructions", "--run", run["run_id"])["diff"]["changed"] == [
        "src/AGENTS.md"
    ]

    refused = cli("workspace", "remove", "demo")
    assert refused.returncode == 4
    assert refused.stderr == (
        "rutter: error[conflict]: workspace 'demo' still has 1 run and 1 session; it is "
        "removed only with them; if its directory moved, point it there with `rutter "
        "workspace move demo NEWROOT`; to delete it with all of that, `rutter workspace "
        "remove demo --cascade` (see `rutter run list --workspace demo --all` first)\n"
    )
    removed = cli("workspace", "remove", "demo", "--cascade")
    assert removed.returncode == 0, removed.stderr
    assert removed.stdout == (
        f"Removed workspace demo ({tmp_path / 'after'})\n"
        "Deleted with it: 1 run, 1 mission, 1 pinned revision, 1 session, 1 thread, "
        "1 continuity node.\n"
    )
    assert cli.json("run", "show", run["run_id"], code=5)["error"]["code"] == "run_not_found"
    assert cli.json("workspace", "list") == {"machine_id": THIS_MACHINE, "workspaces": []}


@pytest.mark.asyncio
@pytest.mark.parametrize("client_name", CLIENTS)
async def test_the_server_serves_a_moved_folder_under_its_id(
    tmp_path: Path, client_name: str
) -> None:
    cli = Cli(tmp_path / "home", tmp_path)
    write_tree(tmp_path / "first", TREE)
    cli.json("workspace", "register", "demo", "first")
    run = cli.json("run", "create", "--workspace", "demo", "--goal", "fix it")
    (tmp_path / "first").rename(tmp_path / "second")
    cli.json("workspace", "move", "demo", "second")

    client = await start(tmp_path / "home", capabilities(client_name),
                         [folder(tmp_path / "second")])  # fmt: skip
    try:
        answer = await served(client, uri(tmp_path / "second" / "src" / "main.go"))
        assert answer["workspace_id"] == "demo"
        assert [s["path"] for s in answer["sources"]] == ["AGENTS.md", "src/AGENTS.md"]
        assert [(w.workspace_id, w.root) for w in registered(tmp_path / "home")] == [
            ("demo", str(tmp_path / "second"))
        ]

        # Moved again while the server runs: the editor adds the new folder after `move`.
        (tmp_path / "second").rename(tmp_path / "third")
        cli.json("workspace", "move", "demo", "third")
        client.workspace_did_change_workspace_folders(
            types.DidChangeWorkspaceFoldersParams(
                event=types.WorkspaceFoldersChangeEvent(
                    added=[folder(tmp_path / "third")], removed=[folder(tmp_path / "second")]
                )
            )
        )
        moved = await served(client, uri(tmp_path / "third" / "AGENTS.md"))
        assert moved["workspace_id"] == "demo"
        old = await effective(client, uri(tmp_path / "second" / "AGENTS.md"))
        assert old["error"]["code"] == "not_registered"
        assert [w.workspace_id for w in registered(tmp_path / "home")] == ["demo"]
        assert cli.json("run", "show", run["run_id"])["workspace_id"] == "demo"
    finally:
        await stop(client)


@pytest.mark.asyncio
@pytest.mark.parametrize("client_name", CLIENTS)
async def test_a_running_server_follows_a_move_onto_its_folder(
    tmp_path: Path, client_name: str
) -> None:
    # The editor opened the moved directory before `move`: the server registered the folder
    # under a new ID. Freeing that root and moving the workspace there is followed live.
    cli = Cli(tmp_path / "home", tmp_path)
    write_tree(tmp_path / "old", TREE)
    cli.json("workspace", "register", "demo", "old")
    run = cli.json("run", "create", "--workspace", "demo", "--goal", "fix it")
    (tmp_path / "old").rename(tmp_path / "new")
    client = await start(tmp_path / "home", capabilities(client_name), [folder(tmp_path / "new")])
    try:
        doc = uri(tmp_path / "new" / "AGENTS.md")
        assert (await served(client, doc))["workspace_id"] == "new"
        refused = cli.json("workspace", "move", "demo", "new", code=4)["error"]
        assert refused["hint"] == {"fix": "use_or_remove_holder", "workspace_id": "new"}
        assert cli.json("workspace", "remove", "new")["removed"] is True
        # The server does not take the root back in between: the move succeeds.
        assert cli.json("workspace", "move", "demo", "new")["moved"] is True

        async def served_as_demo() -> dict[str, Any]:
            while True:
                answer = await effective(client, doc)
                if answer.get("workspace_id") == "demo":
                    return answer
                await asyncio.sleep(0.05)

        answer = await asyncio.wait_for(served_as_demo(), 60)
        assert [s["path"] for s in answer["sources"]] == ["AGENTS.md"]
        assert [w.workspace_id for w in registered(tmp_path / "home")] == ["demo"]
        assert cli.json("run", "show", run["run_id"])["workspace_id"] == "demo"
    finally:
        await stop(client)
