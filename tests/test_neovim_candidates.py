"""`:RutterCandidates` in real headless Neovim against the real server (issue 30).

The scenario (tests/neovim/candidates.lua) lists a workspace's experience candidates, shows a
candidate's exact text, confirms one after "Cancel" then "Confirm and Save to Project", saves a
note whose secret was cut out only after "Store with the secrets redacted", and ignores one.
The store is checked here afterwards: exactly the confirmed memories exist, made by `lsp`.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from rutter_core.app.continuity import AddNoteParams
from rutter_core.app.facade import Rutter
from rutter_core.app.runs import CreateRunParams, SetRunStatusParams
from rutter_core.memory.service import list_memories
from rutter_core.store import open_store
from rutter_core.workspaces.service import register_workspace
from tests.neovim_client import github_token, run_nvim, ws
from tests.testing import THIS_MACHINE

__all__ = ["ws"]


def test_candidates_float_show_confirm_redact_ignore(tmp_path: Path, ws: Path) -> None:
    home = tmp_path / "rutter-home"
    plain = f"Use table tests for the parser {uuid.uuid4().hex}"
    with open_store(f"sqlite:///{home / 'rutter.db'}") as store:
        register_workspace(store, "monorepo", ws, cwd=ws, machine=THIS_MACHINE)
        rutter = Rutter(store)
        run = rutter.runs.create(
            CreateRunParams(goal="g", workspace_id="monorepo", target="services"), actor="cli"
        )
        for text in (plain, f"Deploy with {github_token()}", "Keep fuzzers nightly"):
            rutter.continuity.add_note(
                AddNoteParams(
                    thread_id=run.thread_id, kind="decision", text=text,
                    references=("services/api/internal/parser/input.go",),
                ),
                actor="cli",
            )  # fmt: skip
        for status in ("running", "completed"):
            rutter.runs.set_status(
                SetRunStatusParams(run_id=run.run_id, status=status), actor="cli"
            )

    results = run_nvim(tmp_path, "candidates", ws, {"RUTTER_NVIM_PLAIN": plain})

    lines = results["first_lines"]
    assert lines[0] == "rutter · experience candidates of workspace monorepo"
    assert lines[1] == "3 to review; nothing is saved until you confirm"
    assert lines[-1].startswith("<CR> show text · c confirm and save · x ignore")
    assert f"    {plain}" in results["expanded"]
    assert any(
        "A finished" in line or "check the conclusion" in line for line in results["expanded"]
    )
    prompts = [ask["prompt"] for ask in results["asked"]]
    assert len(prompts) == 4
    assert "Save the redacted text" in prompts[3]
    assert results["confirmed"]["result"]["memory"]["content"] == plain
    assert results["confirmed"]["result"]["memory"]["created_by"] == "lsp"
    assert results["redacted"]["result"]["memory"]["redacted"] is True
    assert results["before_ignore"] == 1
    assert results["ignored"]["result"]["status"] == "ignored"
    assert results["after_ignore"]["items"] == []

    with open_store(f"sqlite:///{home / 'rutter.db'}") as store:
        saved = list_memories(store, scope="project", workspace_id="monorepo").items
    assert sorted(m.content for m in saved if not m.redacted) == [plain]
    assert len(saved) == 2
    assert all(m.created_by == "lsp" for m in saved)
