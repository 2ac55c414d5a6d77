"""`:RutterCompact` in real headless Neovim 0.11 against the real server (issue 29): the focus is
asked, the current run's thread is compacted by the extractive summarizer, the summary opens
read-only in a split, and compacting again with nothing new shows the typed error."""

from __future__ import annotations

import subprocess
from pathlib import Path

from rutter_core.app.continuity import AddMessageParams, AddNoteParams
from rutter_core.app.facade import Rutter
from rutter_core.store import open_store
from tests.conftest import write_tree
from tests.neovim_client import run_nvim
from tests.testing import Cli


def test_compact_asks_the_focus_and_shows_the_summary(tmp_path: Path) -> None:
    root = (tmp_path / "proj").resolve()
    write_tree(root, {"AGENTS.md": "rules\n", "svc/main.go": "package main\n"})
    subprocess.run(["git", "init", "-q", str(root)], check=True, capture_output=True)
    cli = Cli(tmp_path / "rutter-home", root)
    cli.json("workspace", "register", "proj", str(root))
    run = cli.json("run", "create", "--workspace", "proj", "--goal", "g")
    thread = run["thread_id"]
    with open_store(f"sqlite:///{tmp_path / 'rutter-home' / 'rutter.db'}") as store:
        app = Rutter(store)
        for n in range(7):
            app.continuity.add_message(
                AddMessageParams(thread_id=thread, role="user", text=f"lexer step {n}"),
                source="cli",
            )
        app.continuity.add_note(
            AddNoteParams(thread_id=thread, kind="decision", text="keep the hand-written lexer"),
            actor="cli",
        )

    results = run_nvim(tmp_path, "compaction", root)

    assert results["prompts"] == ["Compaction focus (empty for none): "]
    result = results["result"]
    assert (result["thread_id"], result["status"], result["summarizer"]) == (
        thread, "completed", "extractive",
    )  # fmt: skip
    assert result["compacted_message_count"] == 3
    view = results["view"]
    assert view["name"] == f"rutter://compaction/{result['compaction_id']}"
    assert (view["modifiable"], view["buftype"], view["split"]) == (False, "nofile", True)
    assert view["lines"][0].startswith(f"Compaction {result['compaction_id']} of thread {thread}")
    assert "- the lexer" in view["lines"]
    assert "- keep the hand-written lexer" in view["lines"]
    assert results["error"]["code"] == "nothing_to_compact"
    assert "[nothing_to_compact]" in results["last_error"]
