"""Neovim polish (issue 11 item 7) in real Neovim 0.11 against the real server.

The confirmations run with a real UI attached (tests/neovim/ui_client.lua, a second Neovim
speaking the UI protocol): headless Neovim alone never stops at a "Press ENTER" prompt, with a
UI it does, as for a person at a terminal. Every prompt Neovim blocks at is recorded.
"""

from __future__ import annotations

from pathlib import Path

from rutter_core.app.continuity import CheckpointParams
from rutter_core.app.facade import Rutter
from rutter_core.discovery.fsread import FileReader
from rutter_core.memory.service import get_memory
from rutter_core.runs.service import create_run, latest_revision
from rutter_core.store import open_store
from rutter_core.workspaces.service import register_workspace
from tests.neovim_client import TARGET, run_nvim, ws
from tests.testing import THIS_MACHINE

__all__ = ["ws"]  # the fixture: a private copy of the example monorepo


def test_confirmations_end_without_a_prompt_and_the_review_opens_beside(
    tmp_path: Path, ws: Path
) -> None:
    home = tmp_path / "rutter-home"
    with open_store(f"sqlite:///{home / 'rutter.db'}") as store:
        register_workspace(store, "monorepo", ws, cwd=ws, machine=THIS_MACHINE)
        created = create_run(
            store,
            workspace_id="monorepo",
            goal="harden the parser",
            reader=FileReader(),
            actor="cli",
            target=TARGET,
        )
        node = Rutter(store, FileReader()).continuity.checkpoint(
            CheckpointParams(run_id=created.run_id, title="lexer done"), actor="cli"
        )

    results = run_nvim(tmp_path, "review_ui", ws, {"RUTTER_NVIM_NODE": node.node_id})

    # Neovim's own list asked (inputlist) and the person typed the answers: refresh, goal, fork.
    prompts = results["asked"]
    assert prompts[0].startswith(f"rutter: refresh run {created.run_id} to the instructions")
    assert prompts[1] == f"Goal of the fork from {node.node_id}: "
    assert prompts[2].startswith('rutter: fork from checkpoint "lexer done"')
    # No "Press ENTER" (or any other) prompt, after the refresh nor after the fork.
    assert results["prompts_after_review"] == 0
    assert results["prompts"] == []
    assert results["mode"] == "n"

    # The review document opened in a split below; the source buffer kept its window.
    reviews = str(home / "reviews")
    assert results["review_window_buffer"].startswith(reviews)
    assert any("+Always run the fuzzers before merging." in x for x in results["review_lines"])
    windows = results["windows"]
    assert len(windows) == results["windows_before"] + 1
    [source] = [w for w in windows if w["source"]]
    assert source["buffer"] == str(ws / "services/api/internal/parser/AGENTS.md")
    [review] = [w for w in windows if w["buffer"].startswith(reviews)]
    assert review["relative"] == ""  # a split, not a float
    assert results["source_buffer"] == source["buffer"]

    # The server's message, on one line without Neovim's LSP[rutter][Info] prefix.
    assert (
        f"rutter: run {created.run_id} now uses revision 2 of its instructions"
        in (results["messages"])
    )
    assert "LSP[rutter]" not in results["messages"]
    with open_store(f"sqlite:///{home / 'rutter.db'}") as store:
        latest = latest_revision(store, created.run_id)
    assert latest is not None
    assert latest.revision == 2

    assert results["fork_error"] is None
    assert results["fork"]["parent_node_id"] == node.node_id
    assert results["fork"]["kind"] == "fork"


def test_hover_has_a_border(tmp_path: Path, ws: Path) -> None:
    results = run_nvim(tmp_path, "hover_border", ws)
    assert results["winborder"] == ""  # Neovim's default: floats have no border of their own
    assert results["k_desc"] == "rutter: hover"
    assert results["border"] == ["╭", "─", "╮", "│", "╯", "─", "╰", "│"]
    assert results["hover_first_line"].startswith("**rutter** · `AGENTS.md`")
    assert results["current_buffer_unchanged"] is True


def test_memory_header_names_the_workspace_id_and_save_trims_blank_lines(
    tmp_path: Path, ws: Path
) -> None:
    home = tmp_path / "rutter-home"
    with open_store(f"sqlite:///{home / 'rutter.db'}") as store:
        # Registered under an ID that is not the folder's name: the server serves it as such.
        register_workspace(store, "shop-api", ws, cwd=ws, machine=THIS_MACHINE)

    results = run_nvim(tmp_path, "memory_polish", ws)

    assert results["header"] == "rutter · user memory and project memory of workspace shop-api"
    assert results["error"] is None
    created = results["created"]
    assert (created["scope"], created["scope_id"]) == ("project", "shop-api")
    assert created["content"] == "Run the fuzzers.\nThen merge."
    assert results["modified"] is False
    with open_store(f"sqlite:///{home / 'rutter.db'}") as store:
        assert get_memory(store, created["id"]).content == "Run the fuzzers.\nThen merge."
