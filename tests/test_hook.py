"""`rutter hook session-start`: fed the JSON Claude Code and Gemini CLI give a SessionStart hook
on stdin, on a real store and workspace. The same session ID answers the same run (whatever the
start's source); a transcript import of that session lands in the same thread; every failure
still exits 0 with the agent's JSON and a short note, and creates no store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rutter_core.app.agent_sessions import DEFAULT_SESSION_BUDGET, SessionStartParams
from rutter_core.app.facade import Rutter
from rutter_core.app.workspaces import RegisterWorkspaceParams
from rutter_core.kernel.errors import RutterError
from rutter_core.store import Store
from tests.conftest import write_tree
from tests.testing import Cli

CLAUDE_SESSION = "7f3c9a52-1b2e-4c8d-9f10-2a3b4c5d6e7f"
"""The session of tests/fixtures/transcripts/claude-code-session.jsonl."""
TRANSCRIPT = Path(__file__).parent / "fixtures" / "transcripts" / "claude-code-session.jsonl"
RULES = "Run the parser tests with -race before every commit.\n"


@pytest.fixture
def cli(tmp_path: Path, workspace_root: Path) -> Cli:
    write_tree(workspace_root, {"AGENTS.md": RULES, "src/parser/a.go": "package parser\n"})
    made = Cli(tmp_path / "home", tmp_path)
    made.json("workspace", "register", "demo", str(workspace_root))
    return made


def claude_input(session_id: str, cwd: Path, source: str = "startup") -> str:
    """What Claude Code writes on a SessionStart hook's stdin."""
    return json.dumps(
        {
            "session_id": session_id,
            "transcript_path": f"/home/dev/.claude/projects/-x/{session_id}.jsonl",
            "cwd": str(cwd),
            "permission_mode": "default",
            "hook_event_name": "SessionStart",
            "source": source,
        }
    )


def gemini_input(session_id: str, cwd: Path, source: str = "startup") -> str:
    """What Gemini CLI writes on a SessionStart hook's stdin."""
    return json.dumps(
        {
            "session_id": session_id,
            "transcript_path": f"/home/dev/.gemini/tmp/x/chats/session-{session_id}.json",
            "cwd": str(cwd),
            "hook_event_name": "SessionStart",
            "timestamp": "2026-12-05T10:30:00.000Z",
            "source": source,
        }
    )


def context_of(stdout: str) -> str:
    """The hook's `additionalContext`; the whole of stdout must be that one JSON document."""
    document = json.loads(stdout)
    assert list(document) == ["hookSpecificOutput"]
    output = document["hookSpecificOutput"]
    assert output["hookEventName"] == "SessionStart"
    text = output["additionalContext"]
    assert isinstance(text, str)
    return text


def hook(cli: Cli, stdin: str, *args: str, agent: str = "claude-code") -> str:
    result = cli("hook", "session-start", "--agent", agent, *args, stdin=stdin)
    assert result.returncode == 0, (result.stdout, result.stderr)
    return context_of(result.stdout)


def runs(cli: Cli) -> list[dict[str, Any]]:
    listed: list[dict[str, Any]] = cli.json("run", "list", "--all")["runs"]
    return listed


def test_a_session_start_gets_its_runs_assembled_context(cli: Cli, workspace_root: Path) -> None:
    memory = cli.json(
        "context", "memory", "create", "--scope", "project", "--workspace", "demo",
        "--title", "Parser notes", "--content", "Feed the parser in 4 KiB chunks.",
    )  # fmt: skip
    text = hook(cli, claude_input(CLAUDE_SESSION, workspace_root / "src" / "parser"))
    [run] = runs(cli)
    assert (run["workspace_id"], run["target_path"]) == ("demo", ".")
    audit = cli.json("context", "audit", run["run_id"])["assemblies"]
    assert len(audit) == 1
    assembly = audit[0]
    assert assembly["thread_id"] == run["thread_id"]
    assert assembly["budget"]["background"] == 2048  # the hook's default
    assert text.startswith(f"# Context from rutter: run {run['run_id']}\n")
    assert f"assembly {assembly['assembly_id']}" in text
    assert f"## instruction AGENTS.md (version 1)\n\n{RULES}" in text
    assert f"## memory {memory['id']} (version 1, project)\n\n" in text
    assert "Feed the parser in 4 KiB chunks." in text
    # The budget is the command's to choose.
    hook(cli, claude_input(CLAUDE_SESSION, workspace_root), "--budget", "9000")
    assert cli.json("context", "audit", run["run_id"])["assemblies"][0]["budget"]["background"] == (
        9000
    )


def test_the_same_session_is_the_same_run_whatever_its_source(
    cli: Cli, workspace_root: Path
) -> None:
    first = hook(cli, claude_input(CLAUDE_SESSION, workspace_root))
    [run] = runs(cli)
    for source in ("resume", "compact", "clear"):
        # From another directory of the workspace, too: the session decides, not the cwd.
        again = hook(cli, claude_input(CLAUDE_SESSION, workspace_root / "src", source))
        assert again.splitlines()[0] == first.splitlines()[0]
    assert [r["run_id"] for r in runs(cli)] == [run["run_id"]]
    assert len(cli.json("context", "audit", run["run_id"])["assemblies"]) == 4
    # Another session is another thread and run; the same ID from another agent too.
    hook(cli, claude_input("0b1c2d3e-other-session", workspace_root))
    hook(cli, gemini_input(CLAUDE_SESSION, workspace_root), agent="gemini")
    listed = runs(cli)
    assert len(listed) == 3
    assert len({r["thread_id"] for r in listed}) == 3


def test_importing_the_sessions_transcript_fills_the_hooks_thread(
    cli: Cli, workspace_root: Path
) -> None:
    hook(cli, claude_input(CLAUDE_SESSION, workspace_root))
    [run] = runs(cli)
    # The transcript was recorded elsewhere (/home/dev/proj): the session's thread decides.
    done = cli.json("session", "import", "claude-code", str(TRANSCRIPT), "--create-run")
    assert (done["thread_id"], done["thread_created"]) == (run["thread_id"], False)
    assert (done["run_id"], done["run_created"]) == (run["run_id"], False)
    assert done["imported"] > 0


@pytest.mark.parametrize(
    ("stdin", "code"),
    [
        ("not json at all", "invalid_hook_input"),
        ("[1, 2]", "invalid_hook_input"),
        (json.dumps({"cwd": "/tmp", "source": "startup"}), "invalid_hook_input"),
        (json.dumps({"session_id": "s-1", "cwd": "relative/dir"}), "invalid_path"),
        (json.dumps({"session_id": " padded ", "cwd": "/tmp"}), "invalid_external_id"),
    ],
)
def test_bad_input_still_exits_0_with_a_note(cli: Cli, stdin: str, code: str) -> None:
    result = cli("hook", "session-start", "--agent", "claude-code", stdin=stdin)
    assert result.returncode == 0, result.stderr
    note = context_of(result.stdout)
    assert note.startswith("rutter: no assembled context for this session (")
    assert f"({code}: " in note
    assert "padded" not in note
    assert "not json" not in note
    assert result.stderr.strip() == note
    assert runs(cli) == []


def test_an_unknown_agent_is_a_note_too(cli: Cli, workspace_root: Path) -> None:
    result = cli(
        "hook", "session-start", "--agent", "emacs-sentinel",
        stdin=claude_input(CLAUDE_SESSION, workspace_root),
    )  # fmt: skip
    assert result.returncode == 0
    note = context_of(result.stdout)
    assert "(invalid_agent: " in note
    assert "emacs-sentinel" not in note
    assert runs(cli) == []


def test_a_directory_in_no_workspace_names_the_store_and_creates_none(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    fresh = Cli(tmp_path / "fresh-home", tmp_path)
    result = fresh("hook", "session-start", "--agent", "claude-code",
                   stdin=claude_input(CLAUDE_SESSION, elsewhere))  # fmt: skip
    assert result.returncode == 0
    note = context_of(result.stdout)
    assert "(workspace_required: " in note
    assert str(tmp_path / "fresh-home" / "rutter.db") in note
    assert not (tmp_path / "fresh-home" / "rutter.db").exists()


def test_instructions_that_fail_closed_are_a_note_and_the_next_start_recovers(
    cli: Cli, workspace_root: Path
) -> None:
    broken = workspace_root / "src" / "AGENTS.md"
    broken.write_bytes(b"- \xff\xfe\n")  # not UTF-8: discovery fails closed
    stdin = claude_input(CLAUDE_SESSION, workspace_root)
    # The run pins the workspace root, which does not load src/AGENTS.md: it still starts.
    assert hook(cli, stdin).startswith("# Context from rutter: run ")
    broken.unlink()
    (workspace_root / "AGENTS.md").write_bytes(b"\xff broken root\n")
    note = hook(cli, claude_input("second-session", workspace_root))
    assert note.startswith("rutter: no assembled context for this session (")
    assert len(runs(cli)) == 1  # nothing half-made: no run for the second session
    (workspace_root / "AGENTS.md").write_text(RULES, encoding="utf-8")
    assert hook(cli, claude_input("second-session", workspace_root)).startswith("# Context")
    assert len(runs(cli)) == 2


def test_a_real_process_answers_gemini_with_json_only(cli: Cli, workspace_root: Path) -> None:
    """Gemini CLI reads stdout as JSON and nothing else; the exit code is the process's own."""
    result = cli.subprocess(
        "hook", "session-start", "--agent", "gemini",
        stdin=gemini_input("gemini-session-1", workspace_root),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert RULES in context_of(result.stdout)
    missing = cli.subprocess("hook", "session-start", "--agent", "gemini", stdin="")
    assert missing.returncode == 0
    assert "(invalid_hook_input: " in context_of(missing.stdout)


# -- the app operation, on both engines -------------------------------------------------------


@pytest.mark.both_dialects
def test_the_operation_keys_runs_by_session_on_both_engines(
    store: Store, workspace_root: Path
) -> None:
    write_tree(workspace_root, {"AGENTS.md": RULES})
    app = Rutter(store)
    app.workspaces.register(
        RegisterWorkspaceParams(workspace_id="demo", root=str(workspace_root), cwd="/")
    )

    def start(session: str, agent: str = "claude-code", budget: int | None = None) -> Any:
        params = SessionStartParams(
            agent=agent, session_id=session, directory=str(workspace_root), budget=budget
        )
        return app.agent_sessions.start(params, actor="cli")

    first = start("s-1")
    assert (first.thread_created, first.run_created) == (True, True)
    assert first.assembly.budget.background == DEFAULT_SESSION_BUDGET
    assert [entry.id for entry in first.assembly.entries] == ["AGENTS.md"]
    again = start("s-1", budget=100)
    assert (again.thread_id, again.run_id) == (first.thread_id, first.run_id)
    assert (again.thread_created, again.run_created) == (False, False)
    assert again.assembly.budget.background == 100
    assert again.assembly.assembly_id != first.assembly.assembly_id
    other = start("s-1", agent="gemini")
    assert other.run_id != first.run_id
    with pytest.raises(RutterError) as refused:
        start("s-2", agent="codex")
    assert refused.value.code == "invalid_agent"
