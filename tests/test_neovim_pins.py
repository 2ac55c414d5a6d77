"""`:RutterProposals` and `:RutterPins` in real headless Neovim 0.11 against the real server
(issue 15). One scenario (tests/neovim/pins.lua) answers a proposal waiting at start with the
prompt's "Pin", dismisses the prompt about one an agent makes meanwhile (another process, actor
`mcp`), answers it from the float with "Custom reply…" + "Pin my reply", then adds and removes
pins in the pins float. The store is checked here afterwards."""

from __future__ import annotations

from pathlib import Path

from rutter_core.app.facade import Rutter
from rutter_core.app.pins import ListPinsParams, ListProposalsParams, ProposePinParams
from rutter_core.app.runs import CreateRunParams
from rutter_core.store import open_store
from rutter_core.workspaces.service import register_workspace
from tests.neovim_client import run_nvim, ws
from tests.testing import THIS_MACHINE, acting_person

__all__ = ["ws"]  # the fixture: a private copy of the example monorepo

TARGET = "services/api/internal/parser/input.go"


def test_proposals_prompt_and_pins_float(tmp_path: Path, ws: Path) -> None:
    home = tmp_path / "rutter-home"
    with open_store(f"sqlite:///{home / 'rutter.db'}") as store:
        register_workspace(store, "monorepo", ws, cwd=ws, machine=THIS_MACHINE)
        rutter = Rutter(store)
        run = rutter.runs.create(
            CreateRunParams(goal="fix the parser", workspace_id="monorepo", target=TARGET),
            actor="cli",
        )
        first = rutter.pins.propose(
            ProposePinParams(run_id=run.run_id, text="Keep the public API stable."), actor="mcp"
        )
        person = acting_person(store)

    results = run_nvim(tmp_path, "pins", ws, {"RUTTER_NVIM_RUN": run.run_id})

    assert results["first_prompt"] == {
        "prompt": f"{person} via mcp proposes to pin to this task: Keep the public API stable.",
        "items": ["Pin", "Discuss", "Custom reply…"],
    }
    assert results["second_prompt"]["items"] == ["Pin", "Discuss", "Custom reply…"]
    second = results["second"]
    assert second.startswith("prop_")
    assert results["proposals"][0] == "1 pin proposal wait for your answer (<CR>: answer)"
    assert results["proposals"][1].split() == [second, "monorepo", "by", person, "via", "mcp"]
    assert results["proposals"][2] == "    Prefer tabs."
    assert [select["items"] for select in results["selects"][2:5]] == [
        ["Pin", "Discuss", "Custom reply…"],
        ["Pin my reply", "Reply without pinning"],
        ["Remove pin", "Keep it"],
    ]
    assert results["pins"][0].startswith(
        f"2 of 32 pins of thread {run.thread_id} (run {run.run_id})"
    )
    assert "    Keep the public API stable." in results["pins"]
    assert "    Use spaces." in results["pins"]
    assert results["pins"][-1] == "a add · e edit · d remove · R reload · q close"
    assert "    Answer in English." in results["added"]

    with open_store(f"sqlite:///{home / 'rutter.db'}") as store:
        rutter = Rutter(store)
        pins = rutter.pins.list(ListPinsParams(run_id=run.run_id)).pins
        answered = rutter.pins.proposals(ListProposalsParams(all=True)).proposals
    assert [(pin.text, pin.created_by) for pin in pins] == [
        ("Use spaces.", "lsp"),
        ("Answer in English.", "lsp"),
    ]
    assert [(p.proposal_id, p.choice, p.answered_by) for p in answered] == [
        (first.proposal_id, "pin", "lsp"),
        (second, "custom", "lsp"),
    ]
    assert answered[1].reply == "Use spaces."
