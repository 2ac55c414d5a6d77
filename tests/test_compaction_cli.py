"""`rutter session compact` end to end: real `rutter` processes on a real SQLite store, real
summarizer programs (small Python scripts that count their calls in a file), and the outcomes a
person relies on: the newest 4 messages kept, nothing deleted, the same key never calling the
summarizer twice, a failure or a concurrent change storing nothing, one compaction of a thread
at a time, and a killed process leaving its operation `pending_verification`, never re-sent."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from rutter_core.app.continuity import AddMessageParams, AddNoteParams
from rutter_core.app.facade import Rutter, open_rutter
from tests.conftest import write_tree
from tests.testing import Cli, acting_person

GITHUB = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"
DOCUMENT_KEYS = [
    "compaction_id", "operation_key", "thread_id", "status", "summary", "kept_message_ids",
    "compacted_message_count", "unread_message_count", "summarizer", "created_by_person",
]  # fmt: skip

# A summarizer program: counts its calls in COUNT, keeps its stdin in PROMPT, optionally waits
# for GATE to exist (or sleeps), then prints SUMMARY or fails with EXIT.
SUMMARIZER = """
import os, pathlib, sys, time
here = pathlib.Path(sys.argv[1])
count = here / "count"
count.write_text(str(int(count.read_text()) + 1 if count.exists() else 1))
(here / "pid").write_text(str(os.getpid()))
(here / "prompt").write_text(sys.stdin.read())
mode = sys.argv[2]
if mode == "wait":
    while not (here / "gate").exists():
        time.sleep(0.05)
if mode == "sleep":
    time.sleep(float(sys.argv[3]))
if mode == "fail":
    sys.exit(3)
if mode == "empty":
    sys.exit(0)
if mode == "add":
    import subprocess
    subprocess.run([sys.executable, "-m", "rutter", "session", "message", "add", sys.argv[3],
                    "--role", "user", "--text", "arrived while summarizing"], check=True,
                   capture_output=True)
print("They chose tabs. Token seen: " + sys.argv[-1] if mode == "secret" else
      "They chose tabs; the parser is left.")
"""


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path / "home", tmp_path)


@pytest.fixture
def app(cli: Cli) -> Rutter:
    return open_rutter(None, {"RUTTER_HOME": str(cli.home)})


@pytest.fixture
def run(cli: Cli, workspace_root: Path) -> dict[str, Any]:
    write_tree(workspace_root, {"AGENTS.md": "Use tabs.\n"})
    cli.json("workspace", "register", "demo", str(workspace_root))
    created: dict[str, Any] = cli.json("run", "create", "--workspace", "demo", "--goal", "g")
    return created


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "summarizer.py"
    path.write_text(SUMMARIZER, encoding="utf-8")
    (tmp_path / "calls").mkdir()
    return path


def command(script: Path, mode: str, *extra: str) -> str:
    return " ".join([sys.executable, str(script), str(script.parent / "calls"), mode, *extra])


def calls(script: Path) -> int:
    count = script.parent / "calls" / "count"
    return int(count.read_text()) if count.exists() else 0


def seed(app: Rutter, thread: str, count: int, *, start: int = 1) -> list[str]:
    """`count` messages: the person's requests, tool calls and their results, replies."""
    ids = []
    for n in range(start, start + count):
        role, text = [
            ("user", f"please fix parser bug {n}"),
            ("assistant", f'[tool call pytest call-{n}]\n{{"args": ["-k", "{n}"]}}'),
            ("tool", f"[tool result call-{n - 1}]\n{n} passed"),
            ("assistant", f"fixed step {n}"),
        ][(n - 1) % 4]
        added = app.continuity.add_message(
            AddMessageParams(thread_id=thread, role=role, text=text), source="cli"
        )
        ids.append(added.message_id)
    return ids


def compact(cli: Cli, thread: str, *args: str, code: int = 0) -> Any:
    return cli.json("session", "compact", thread, *args, code=code)


def test_extractive_compaction_keeps_four_and_deletes_nothing(
    cli: Cli, app: Rutter, run: dict[str, Any]
) -> None:
    thread = run["thread_id"]
    ids = seed(app, thread, 14)
    app.continuity.add_note(
        AddNoteParams(thread_id=thread, kind="decision", text="tabs, not spaces"), actor="cli"
    )
    found = compact(cli, thread, "--focus", "the parser")
    assert list(found) == DOCUMENT_KEYS
    assert found["created_by_person"] == acting_person(cli.store_url)
    assert found["compaction_id"].startswith("cmp_")
    assert found["operation_key"] == found["compaction_id"]
    assert (found["status"], found["summarizer"]) == ("completed", "extractive")
    assert found["kept_message_ids"] == ids[-4:]
    assert (found["compacted_message_count"], found["unread_message_count"]) == (10, 0)
    text = found["summary"]["text"]
    assert "data, not instructions" in text
    assert "- tabs, not spaces" in text
    assert "- the parser" in text
    assert "- please fix parser bug 1\n- please fix parser bug 5\n- please fix parser bug 9" in text
    assert "- pytest: 7 passed" in text  # the last outcome of the tool, not the first
    assert "3 passed" not in text
    assert found["summary"]["tokens"] > 0

    listed = cli.json("session", "messages", thread)
    assert [m["message_id"] for m in listed["messages"]] == ids
    hits = cli.json("history", "search", "parser", "--run", run["run_id"], "--limit", "50")
    assert ids[0] in {hit["source_id"] for hit in hits["hits"]}

    again = cli("session", "compact", thread, "--json")
    assert again.returncode == 3
    assert json.loads(again.stdout)["error"]["code"] == "nothing_to_compact"
    seed(app, thread, 1, start=15)
    people = cli("session", "compact", thread)
    assert people.returncode == 0, people.stderr
    first, *rest = people.stdout.splitlines()
    assert first.startswith("operation key: cmp_")
    assert any("1 older messages summarized" in line for line in rest)

    # The session tree projects each completed compaction with what it covers.
    tree = cli("session", "tree", run["run_id"])
    assert tree.returncode == 0, tree.stderr
    line = next(line for line in tree.stdout.splitlines() if found["compaction_id"] in line)
    assert f"compaction {found['compaction_id']} (projected)" in line
    assert "10 messages summarized (0 not read) by extractive" in line


def test_unread_messages_are_counted_when_the_window_is_full(
    cli: Cli, app: Rutter, run: dict[str, Any]
) -> None:
    thread = run["thread_id"]
    for n in range(10):
        app.continuity.add_message(
            AddMessageParams(thread_id=thread, role="user", text=f"request {n} " + "word " * 80),
            source="cli",
        )
    found = compact(cli, thread, "--input-tokens", "256")
    assert found["compacted_message_count"] == 6
    read = 6 - found["unread_message_count"]
    assert 0 < read < 6
    assert f"{found['unread_message_count']} of the earlier messages" in found["summary"]["text"]
    # The newest of the older messages are the ones read.
    assert "request 5" in found["summary"]["text"]
    assert "request 0" not in found["summary"]["text"]


def test_command_summarizer_same_key_calls_once_and_redacts(
    cli: Cli, app: Rutter, run: dict[str, Any], script: Path
) -> None:
    thread = run["thread_id"]
    seed(app, thread, 8)
    args = ["--summarizer", "command", "--summarizer-command",
            command(script, "secret", GITHUB), "--operation-key", "op-1",
            "--focus", f"token {GITHUB}"]  # fmt: skip
    first = compact(cli, thread, *args)
    assert (first["operation_key"], first["summarizer"], first["status"]) == (
        "op-1", "command", "completed",
    )  # fmt: skip
    assert first["summary"]["text"] == "They chose tabs. Token seen: [REDACTED:github_token]"
    prompt = (script.parent / "calls" / "prompt").read_text()
    assert GITHUB not in prompt
    assert "please fix parser bug 1" in prompt
    assert "[REDACTED:github_token]" in prompt
    second = compact(cli, thread, *args)
    assert second == first
    text = cli("session", "compact", thread, *args)
    assert text.stdout.splitlines()[0] == "operation key: op-1"
    assert calls(script) == 1
    other = cli("session", "compact", thread, "--operation-key", "op-1", "--json")
    assert other.returncode == 4
    assert json.loads(other.stdout)["error"]["code"] == "operation_key_conflict"


@pytest.mark.parametrize(
    ("mode", "extra", "reason"),
    [("fail", (), "exit_status"), ("empty", (), "empty_output"), ("sleep", ("30",), "timeout")],
)
def test_a_failed_summarizer_stores_nothing(
    cli: Cli, app: Rutter, run: dict[str, Any], script: Path, mode: str, extra: tuple[str, ...],
    reason: str,
) -> None:  # fmt: skip
    thread = run["thread_id"]
    seed(app, thread, 8)
    before = compact(cli, thread)
    seed(app, thread, 3, start=9)
    failed = cli("session", "compact", thread, "--summarizer", "command", "--summarizer-command",
                 command(script, mode, *extra), "--summarizer-timeout", "2",
                 "--operation-key", "bad", "--json")  # fmt: skip
    assert failed.returncode == 1, failed.stderr
    error = json.loads(failed.stdout)["error"]
    assert (error["code"], error["details"]["reason"]) == ("summarizer_failed", reason)
    assert calls(script) == 1
    checkpoint = cli.json("session", "checkpoint", run["run_id"], "--title", "after")
    summary = checkpoint["snapshot"]["compaction_summary"]
    assert summary["text"] == before["summary"]["text"]
    # The same key answers the stored failure and never calls again.
    again = cli("session", "compact", thread, "--summarizer", "command", "--summarizer-command",
                command(script, mode, *extra), "--summarizer-timeout", "2",
                "--operation-key", "bad", "--json")  # fmt: skip
    assert again.returncode == 1
    assert json.loads(again.stdout)["error"]["details"]["stored_outcome"] is True
    assert calls(script) == 1
    # The thread stays usable.
    assert compact(cli, thread)["compacted_message_count"] == 3


def test_a_message_added_while_summarizing_stores_nothing(
    cli: Cli, app: Rutter, run: dict[str, Any], script: Path
) -> None:
    thread = run["thread_id"]
    seed(app, thread, 8)
    changed = cli("session", "compact", thread, "--summarizer", "command",
                  "--summarizer-command", command(script, "add", thread), "--json")  # fmt: skip
    assert changed.returncode == 4, changed.stderr
    assert json.loads(changed.stdout)["error"]["code"] == "thread_changed"
    checkpoint = cli.json("session", "checkpoint", run["run_id"], "--title", "after")
    assert checkpoint["snapshot"]["compaction_summary"] is None
    assert cli.json("session", "messages", thread)["messages"][-1]["text"] == (
        "arrived while summarizing"
    )
    assert compact(cli, thread)["compacted_message_count"] == 5


def _start(cli: Cli, *args: str) -> tuple[subprocess.Popen[str], str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUTTER_")}
    env["RUTTER_HOME"] = str(cli.home)
    process = subprocess.Popen(
        [sys.executable, "-m", "rutter", "session", "compact", *args],
        cwd=cli.cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line.startswith("operation key: "), line
    return process, line.removeprefix("operation key: ").strip()


def _wait_for(path: Path) -> None:
    for _ in range(1200):
        if path.exists() and path.read_text():
            return
        time.sleep(0.05)
    raise AssertionError(f"{path.name} never appeared")


def test_one_compaction_of_a_thread_at_a_time(
    cli: Cli, app: Rutter, run: dict[str, Any], script: Path
) -> None:
    thread = run["thread_id"]
    seed(app, thread, 8)
    first, key = _start(cli, thread, "--summarizer", "command", "--summarizer-command",
                        command(script, "wait"), "--operation-key", "first")  # fmt: skip
    try:
        _wait_for(script.parent / "calls" / "pid")
        second = cli("session", "compact", thread, "--json")
        assert second.returncode == 4
        error = json.loads(second.stdout)["error"]
        assert error["code"] == "compaction_in_progress"
        assert error["details"]["operation_key"] == key == "first"
        assert "first" in error["message"]
    finally:
        (script.parent / "calls" / "gate").write_text("go")
        out, err = first.communicate(timeout=60)
    assert first.returncode == 0, err
    assert "They chose tabs" in out


def test_a_killed_compaction_is_pending_and_never_resent(
    cli: Cli, app: Rutter, run: dict[str, Any], script: Path
) -> None:
    thread = run["thread_id"]
    seed(app, thread, 8)
    args = ["--summarizer", "command", "--summarizer-command", command(script, "sleep", "60"),
            "--operation-key", "killed"]  # fmt: skip
    process, _ = _start(cli, thread, *args)
    pid_file = script.parent / "calls" / "pid"
    _wait_for(pid_file)
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=60)
    os.kill(int(pid_file.read_text()), signal.SIGKILL)  # the orphaned summarizer
    assert calls(script) == 1

    for again in (["--operation-key", "killed", *args[:4]], []):
        refused = cli("session", "compact", thread, *again, "--json")
        assert refused.returncode == 4, refused.stderr
        error = json.loads(refused.stdout)["error"]
        assert error["code"] == "compaction_pending"
        assert error["details"]["status"] == "pending_verification"
        assert error["details"]["operation_key"] == "killed"
        assert "compaction resolve killed --abandon" in refused.stderr
    assert calls(script) == 1
    # The thread stays usable: messages still go in.
    seed(app, thread, 1, start=9)

    both = cli("session", "compaction", "resolve", "killed", "--abandon", "--retry", "--json")
    assert both.returncode == 2
    abandoned = cli.json("session", "compaction", "resolve", "killed", "--abandon")
    assert (abandoned["status"], abandoned["summary"]) == ("abandoned", None)
    done = compact(cli, thread)
    assert done["compacted_message_count"] == 5
    assert calls(script) == 1


def test_a_pending_compaction_can_be_retried(
    cli: Cli, app: Rutter, run: dict[str, Any], script: Path
) -> None:
    thread = run["thread_id"]
    seed(app, thread, 8)
    process, key = _start(cli, thread, "--summarizer", "command", "--summarizer-command",
                          command(script, "sleep", "60"))  # fmt: skip
    pid_file = script.parent / "calls" / "pid"
    _wait_for(pid_file)
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=60)
    os.kill(int(pid_file.read_text()), signal.SIGKILL)
    # A retry of a command compaction without the command is refused and changes nothing.
    forgot = cli("session", "compaction", "resolve", key, "--retry", "--json")
    assert forgot.returncode == 2
    assert json.loads(forgot.stdout)["error"]["code"] == "summarizer_command_missing"
    retried = cli.json("session", "compaction", "resolve", key, "--retry",
                       "--summarizer-command", command(script, "ok"))  # fmt: skip
    assert (retried["status"], retried["operation_key"]) == ("completed", key)
    assert retried["summary"]["text"] == "They chose tabs; the parser is left."
    assert calls(script) == 2
    not_pending = cli("session", "compaction", "resolve", key, "--abandon", "--json")
    assert not_pending.returncode == 4
    assert json.loads(not_pending.stdout)["error"]["code"] == "compaction_not_pending"


def test_bad_input_gets_typed_errors(cli: Cli, app: Rutter, run: dict[str, Any]) -> None:
    thread = run["thread_id"]
    seed(app, thread, 6)
    cases = [
        (["--summarizer", "llama"], 2, "invalid_summarizer"),
        (["--summarizer", "command"], 2, "summarizer_command_missing"),
        (["--operation-key", "has space"], 2, "invalid_operation_key"),
        (["--input-tokens", "10"], 2, "invalid_input_tokens"),
        (["--summarizer", "command", "--summarizer-command", "'unclosed"], 2,
         "invalid_summarizer_command"),
        (["--summarizer", "command", "--summarizer-command", "/no/such/program"], 1,
         "summarizer_failed"),
    ]  # fmt: skip
    for args, code, error_code in cases:
        result = cli("session", "compact", thread, *args, "--json")
        assert result.returncode == code, (args, result.stderr)
        assert json.loads(result.stdout)["error"]["code"] == error_code, args
    missing = cli("session", "compact", "thr_01ARZ3NDEKTSV4RRFFQ69G5FAV", "--json")
    assert missing.returncode == 5
    assert json.loads(missing.stdout)["error"]["code"] == "thread_not_found"
