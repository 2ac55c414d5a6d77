"""`:RutterCompact` in real headless Neovim 0.11 against the real server (issue 29): the focus is
asked, the current run's thread is compacted by the extractive summarizer, the summary opens
read-only in a split, and compacting again with nothing new shows the typed error. A pending
compaction (its process died while the summarizer ran) is offered Abandon / Retry; the tree
shows a compaction as a projected node with what it covers, and `C` compacts a node's thread."""

from __future__ import annotations

import subprocess
from pathlib import Path

from rutter_core.app.continuity import AddMessageParams, AddNoteParams
from rutter_core.app.facade import Rutter
from rutter_core.assembly.tokens import ESTIMATOR
from rutter_core.continuity.compaction import service
from rutter_core.continuity.compaction.request import CompactionRequest
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


def _pending_compaction(home: Path, thread: str) -> str:
    """A compaction whose process stopped while its summarizer ran: `pending_verification`."""
    with open_store(f"sqlite:///{home / 'rutter.db'}") as store:
        begun = service.start(
            store,
            CompactionRequest(
                thread_id=thread, estimate=ESTIMATOR.estimate, summarizer="extractive"
            ),
            actor="cli",
        )
        assert isinstance(begun, service.Started)
        service.mark_pending(store, begun)
        return begun.operation_key


def test_pending_retried_and_the_compaction_node_in_the_tree(tmp_path: Path) -> None:
    root = (tmp_path / "proj").resolve()
    write_tree(root, {"AGENTS.md": "rules\n", "svc/main.go": "package main\n"})
    subprocess.run(["git", "init", "-q", str(root)], check=True, capture_output=True)
    home = tmp_path / "rutter-home"
    cli = Cli(home, root)
    cli.json("workspace", "register", "proj", str(root))
    run = cli.json("run", "create", "--workspace", "proj", "--goal", "g")
    thread = run["thread_id"]
    with open_store(f"sqlite:///{home / 'rutter.db'}") as store:
        app = Rutter(store)
        for n in range(9):
            app.continuity.add_message(
                AddMessageParams(thread_id=thread, role="user", text=f"lexer step {n}"),
                source="cli",
            )
    key = _pending_compaction(home, thread)

    results = run_nvim(tmp_path, "compaction_tree", root)

    # The pending compaction: its code, its hint, and the two choices; Retry resolves it.
    assert results["pending_error"]["code"] == "compaction_pending"
    assert results["pending_error"]["details"]["operation_key"] == key
    assert results["pending_note"].startswith(f"rutter: no compaction of {thread}: compaction ")
    assert results["pending_note"].endswith(
        "[compaction_pending]; abandon it (nothing is stored) or retry it (the summarizer is "
        "called again on the same messages)"
    )
    assert results["asked"] == [
        {"prompt": f"rutter: compaction {key} is pending: ", "items": ["Abandon", "Retry"]}
    ]
    retried = results["retried"]
    assert (retried["operation_key"], retried["status"]) == (key, "completed")
    assert retried["compacted_message_count"] == 5
    assert results["summary_name"] == f"rutter://compaction/{retried['compaction_id']}"
    # The tree: the compaction below the root, with what it covers.
    line = results["compaction_line"]
    assert line.startswith('  ≡ compaction "Summary of 5 earlier messages')
    assert line.endswith(" · 5 messages summarized (all read) · extractive · projected")
    assert results["open_note"].startswith(
        f"rutter: compaction {retried['compaction_id']} of thread {thread}: 5 messages "
        "summarized (all read) · extractive, the newest 4 kept verbatim; summary: Summary of"
    )
    # `C` on the root: the root's thread; the focus asked; nothing new, said with its hint.
    assert results["prompts"] == ["Compaction focus (empty for none): "] * 2
    assert results["again_error"]["code"] == "nothing_to_compact"
    assert results["last_error"].endswith(
        "[nothing_to_compact]; a compaction keeps the newest 4 messages verbatim: compact "
        "again once the thread has more"
    )
    assert any(key_line.startswith("C     compact the thread") for key_line in results["help"])
