"""`rutter history search` for people (issue 32): what was searched is said first, hits are
numbered with their kind and source, and an empty answer without `--run` says that only
memories were searched."""

from __future__ import annotations

from pathlib import Path

from tests.test_cli import Cli

ROLLBACK = Path(__file__).parent / "fixtures" / "transcripts" / "codex-rollback.jsonl"


def test_hits_are_numbered_and_the_scope_searched_is_stated(
    tmp_path: Path, workspace_root: Path
) -> None:
    cli = Cli(tmp_path / "home", tmp_path)
    cli.json("workspace", "register", "demo", str(workspace_root))
    run = cli.json(
        "session", "import", "codex", str(ROLLBACK), "--workspace", "demo", "--create-run"
    )["run_id"]

    memories_only = cli("history", "search", "users table", "--workspace", "demo")
    assert memories_only.returncode == 0
    assert memories_only.stdout.splitlines() == [
        "Searched your memories and workspace demo's (no run: no thread content).",
        "No hits in memories. Without --run only memories are searched; --run RUN also "
        "searches the run's notes, messages, receipts, summaries and checkpoints.",
    ]

    found = cli("history", "search", "users", "--run", run, "--scope", "message")
    lines = found.stdout.splitlines()
    assert lines[0] == (
        f"Searched your memories, the run's workspace's, and the threads of run {run}'s "
        "lineage (message only)."
    )
    hits = cli.json("history", "search", "users", "--run", run, "--scope", "message")["hits"]
    assert len(hits) >= 2
    for number, hit in enumerate(hits, start=1):
        head = lines[2 * number - 1]
        assert head.startswith(f"{number}. message {hit['source_id']} v1: ")
        assert lines[2 * number] == f"   read it: rutter history read {hit['handle']}"
    assert "DROP TABLE" not in found.stdout  # the rolled-back turn is in no thread

    nothing = cli("history", "search", "no such words", "--run", run)
    assert nothing.stdout.splitlines()[1:] == ["No hits."]
