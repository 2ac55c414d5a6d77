"""`rutter history search` for people (issue 32): what was searched is said first, hits are
numbered with their kind and source, and an empty answer without `--run` says that only
memories were searched."""

from __future__ import annotations

from pathlib import Path

from tests.testing import Cli

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
        "No hits in the memories of workspace demo and your user memories.",
        "Without --run only memories are searched: give --run RUN to search that run's notes, "
        "messages, receipts, summaries and checkpoints too.",
    ]

    found = cli("history", "search", "users", "--run", run, "--scope", "message")
    lines = found.stdout.splitlines()
    hits = cli.json("history", "search", "users", "--run", run, "--scope", "message")["hits"]
    assert len(hits) >= 2
    assert lines[0] == (
        f"{len(hits)} hits in run {run}'s lineage (its threads and those it came from) and its "
        "memories (message only):"
    )
    for number, hit in enumerate(hits, start=1):
        head = lines[3 * number - 2]
        assert head == (
            f"{number:>2}. message {hit['source_id']} v1, {hit['recorded_at']} in thread "
            f"{hit['thread_id']}"
        )
        assert lines[3 * number] == f"    read: rutter history read {hit['handle']}"
    assert "DROP TABLE" not in found.stdout  # the rolled-back turn is in no thread

    nothing = cli("history", "search", "no such words", "--run", run)
    assert nothing.stdout.splitlines() == [
        f"No hits in run {run}'s lineage (its threads and those it came from) and its memories."
    ]
