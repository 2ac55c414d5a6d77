"""What comes back out (issue 29): `context assemble` of a run delivers, in authority order, the
pinned instructions, the pins, the latest summary and the newest messages, with warnings for
what it leaves out; required context that does not fit is `context_overflow` with its figures,
never a silent cut; `session resume` and `session fork` deliver the checkpoint's summary and
messages (a resume also the task's pins), say exactly what they inherit, and answer the same
run for the same operation key. Real `rutter` processes on a real SQLite store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rutter_core.app.continuity import AddMessageParams
from rutter_core.app.facade import Rutter, open_rutter
from rutter_core.app.pins import AddPinParams
from tests.conftest import write_tree
from tests.testing import Cli


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


def say(app: Rutter, thread: str, role: str, text: str) -> str:
    return app.continuity.add_message(
        AddMessageParams(thread_id=thread, role=role, text=text), source="cli"
    ).message_id


def kinds(document: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(e["kind"], e["id"], e["decision"]) for e in document["entries"]]


def test_assemble_delivers_summary_then_newest_messages_with_warnings(
    cli: Cli, app: Rutter, run: dict[str, Any]
) -> None:
    thread = run["thread_id"]
    pin = app.pins.add(AddPinParams(thread_id=thread, text="ship by friday"), actor="cli")
    ids = [say(app, thread, "user" if n % 2 else "assistant", f"message {n}") for n in range(10)]
    before = cli.json("context", "assemble", "--run", run["run_id"])
    assert [k for k, _, _ in kinds(before)] == ["instruction", "pin", *["message"] * 10]
    assert [e["id"] for e in before["entries"][2:]] == ids
    assert before["entries"][2]["text"] == "[1 assistant]\nmessage 0"
    assert before["warnings"] == []

    compacted = cli.json("session", "compact", thread)
    document = cli.json("context", "assemble", "--run", run["run_id"])
    assert kinds(document) == [
        ("instruction", "AGENTS.md", "included"),
        ("pin", pin.pin_id, "included"),
        ("summary", compacted["compaction_id"], "included"),
        *(("message", message_id, "included") for message_id in ids[-4:]),
    ]
    assert document["entries"][2]["text"] == compacted["summary"]["text"]

    # A budget that holds required context and two messages: the person's own come first.
    required = document["budget"]["required"]
    tight = cli.json("context", "assemble", "--run", run["run_id"], "--budget",
                     str(required + 2 * document["entries"][3]["tokens"]))  # fmt: skip
    delivered = [e for e in tight["entries"] if e["kind"] == "message"]
    assert [(e["id"], e["decision"]) for e in delivered] == [
        (ids[6], "omitted"), (ids[7], "included"), (ids[8], "omitted"), (ids[9], "included"),
    ]  # fmt: skip
    assert tight["warnings"] == [
        {"kind": "message", "reason": "quota", "count": 2,
         "message": "2 message source(s) left out: they did not fit the budget; they stay in "
         "the thread's history (history search finds them)"},
    ]  # fmt: skip


def test_required_context_that_does_not_fit_is_an_overflow_with_its_figures(
    cli: Cli, app: Rutter, run: dict[str, Any]
) -> None:
    thread = run["thread_id"]
    pin = app.pins.add(AddPinParams(thread_id=thread, text="ship by friday " * 20), actor="cli")
    for n in range(6):
        say(app, thread, "user", f"request {n}")
    compacted = cli.json("session", "compact", thread)
    whole = cli.json("context", "assemble", "--run", run["run_id"])
    tokens = {e["id"]: e["tokens"] for e in whole["entries"]}
    needed = tokens["AGENTS.md"] + tokens[pin.pin_id] + tokens[compacted["compaction_id"]]
    result = cli("context", "assemble", "--run", run["run_id"], "--budget", str(needed - 1),
                 "--json")  # fmt: skip
    assert result.returncode == 3
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "context_overflow"
    assert error["details"] == {
        "budget": needed - 1,
        "needed": needed,
        "required": [
            {"kind": "instruction", "id": "AGENTS.md", "tokens": tokens["AGENTS.md"]},
            {"kind": "pin", "id": pin.pin_id, "tokens": tokens[pin.pin_id]},
            {"kind": "summary", "id": compacted["compaction_id"],
             "tokens": tokens[compacted["compaction_id"]]},
        ],
    }  # fmt: skip
    assert "remove pins" in result.stderr
    assert f"raise --budget to at least {needed}" in result.stderr
    assert "larger window" in result.stderr
    fits = cli.json("context", "assemble", "--run", run["run_id"], "--budget", str(needed))
    assert fits["budget"]["required"] == needed


def test_resume_and_fork_deliver_the_conversation(
    cli: Cli, app: Rutter, run: dict[str, Any]
) -> None:
    thread = run["thread_id"]
    pin = app.pins.add(AddPinParams(thread_id=thread, text="ship by friday"), actor="cli")
    ids = [say(app, thread, "user", f"step {n}") for n in range(9)]
    compacted = cli.json("session", "compact", thread)
    checkpoint = cli.json("session", "checkpoint", run["run_id"], "--title", "before lunch")
    summary = checkpoint["snapshot"]["compaction_summary"]
    assert (summary["source"], summary["note_id"]) == ("compaction", compacted["compaction_id"])
    assert summary["text"] == compacted["summary"]["text"]
    node = checkpoint["node_id"]

    resumed = cli.json("session", "resume", node, "--operation-key", "resume-1")
    assert resumed["inherits"] == ["workspace", "pinned_instructions", "compaction_summary",
                                   "messages", "memory_references", "pins"]  # fmt: skip
    assert (resumed["not_inherited"], resumed["operation_key"]) == ([], "resume-1")
    again = cli.json("session", "resume", node, "--operation-key", "resume-1")
    assert again == resumed
    runs = cli.json("run", "list", "--all")
    listed = runs["runs"] if isinstance(runs, dict) else runs
    assert sum(1 for r in listed if r["run_id"] == resumed["run_id"]) == 1
    assert len(listed) == 2
    reused = cli("session", "fork", node, "--goal", "other", "--operation-key", "resume-1",
                 "--json")  # fmt: skip
    assert reused.returncode == 4
    assert json.loads(reused.stdout)["error"]["code"] == "operation_key_conflict"

    document = cli.json("context", "assemble", "--run", resumed["run_id"])
    assert kinds(document) == [
        ("instruction", "AGENTS.md", "included"),
        ("pin", pin.pin_id, "included"),
        ("summary", compacted["compaction_id"], "included"),
        *(("message", message_id, "included") for message_id in ids[-4:]),
    ]
    assert document["entries"][2]["text"] == compacted["summary"]["text"]
    # The new run's own messages follow the carried ones.
    own = say(app, resumed["thread_id"], "user", "back from lunch")
    later = cli.json("context", "assemble", "--run", resumed["run_id"])
    assert [e["id"] for e in later["entries"] if e["kind"] == "message"] == [*ids[-4:], own]

    forked = cli.json("session", "fork", node, "--goal", "try the other parser")
    assert "pins" not in forked["inherits"]
    assert forked["not_inherited"] == ["pins"]
    assert "compaction_summary" in forked["inherits"]
    assert "messages" in forked["inherits"]
    text = cli("session", "fork", node, "--goal", "again")
    assert "not inherited: pins" in text.stdout
    from_fork = cli.json("context", "assemble", "--run", forked["run_id"])
    assert kinds(from_fork) == [
        ("instruction", "AGENTS.md", "included"),
        ("summary", compacted["compaction_id"], "included"),
        *(("message", message_id, "included") for message_id in ids[-4:]),
    ]


def test_an_imported_compaction_summary_is_the_latest_summary(
    cli: Cli, app: Rutter, run: dict[str, Any]
) -> None:
    thread = run["thread_id"]
    for n in range(6):
        say(app, thread, "user", f"step {n}")
    compacted = cli.json("session", "compact", thread)
    imported = say(app, thread, "system", "[compaction summary]\nThe agent refactored the parser.")
    after = say(app, thread, "user", "now the tests")
    checkpoint = cli.json("session", "checkpoint", run["run_id"], "--title", "t")
    summary = checkpoint["snapshot"]["compaction_summary"]
    assert (summary["source"], summary["note_id"], summary["text"]) == (
        "imported_compaction", imported, "The agent refactored the parser.",
    )  # fmt: skip
    document = cli.json("context", "assemble", "--run", run["run_id"])
    assert [(e["kind"], e["id"]) for e in document["entries"][1:]] == [
        ("summary", imported), ("message", after),
    ]  # fmt: skip
    assert compacted["status"] == "completed"


def test_large_tool_results_are_receipts_paged_back_within_the_run(
    cli: Cli, app: Rutter, run: dict[str, Any]
) -> None:
    thread = run["thread_id"]
    say(app, thread, "user", "run the tests")
    say(app, thread, "assistant", "[tool call pytest call-1]\n{}")
    output = "".join(f"line {n:05d} of the test output\n" for n in range(400))  # 12,800 chars
    big = say(app, thread, "tool", f"[tool result call-1]\n{output}")
    failed = say(app, thread, "tool", "[tool result call-2 error]\n" + "Traceback: boom\n" * 200)
    small = say(app, thread, "tool", "[tool result call-3]\nok")
    document = cli.json("context", "assemble", "--run", run["run_id"])
    entries = {e["id"]: e for e in document["entries"]}
    receipts = [e for e in document["entries"] if e["kind"] == "receipt"]
    assert [e["id"] for e in receipts] == [
        f"rcpt_{big.removeprefix('msg_')}_{run['run_id'].removeprefix('run_')}",
        f"rcpt_{failed.removeprefix('msg_')}_{run['run_id'].removeprefix('run_')}",
    ]
    assert "tool result of call call-1, completed" in receipts[0]["text"]
    assert "it begins: line 00000 of the test output" in receipts[0]["text"]
    assert "tool result of call call-2, failed" in receipts[1]["text"]
    assert receipts[0]["tokens"] < 200  # the result itself is over 3,000; IDs vary the count
    assert entries[small]["kind"] == "message"

    rid = receipts[0]["id"]
    pages = []
    first = cli.json("session", "receipt", "read", rid)
    assert list(first) == ["receipt_id", "page", "pages", "text"]
    assert (first["receipt_id"], first["page"], first["pages"]) == (rid, 1, 4)
    pages.append(first["text"])
    for page in (2, 3, 4):
        pages.append(cli.json("session", "receipt", "read", rid, "--page", str(page))["text"])
    assert "".join(pages) == f"[tool result call-1]\n{output}"
    beyond = cli("session", "receipt", "read", rid, "--page", "5", "--json")
    assert beyond.returncode == 2
    assert json.loads(beyond.stdout)["error"]["code"] == "page_out_of_range"

    # Another run cannot read this run's receipt by swapping its run in.
    other = cli.json("run", "create", "--workspace", "demo", "--goal", "other")
    forged = f"rcpt_{big.removeprefix('msg_')}_{other['run_id'].removeprefix('run_')}"
    refused = cli("session", "receipt", "read", forged, "--json")
    assert refused.returncode == 5
    assert json.loads(refused.stdout)["error"]["code"] == "receipt_not_found"
    bad = cli("session", "receipt", "read", "rcpt_nope", "--json")
    assert bad.returncode == 2
    assert json.loads(bad.stdout)["error"]["code"] == "invalid_receipt"

    # A resumed run reaches the receipt through its checkpoint, whole (not the cut copy).
    checkpoint = cli.json("session", "checkpoint", run["run_id"], "--title", "t")
    resumed = cli.json("session", "resume", checkpoint["node_id"])
    later = cli.json("context", "assemble", "--run", resumed["run_id"])
    carried = [e["id"] for e in later["entries"] if e["kind"] == "receipt"]
    assert len(carried) == 2
    whole = cli.json("session", "receipt", "read", carried[0], "--page", "4")
    assert whole["text"] == pages[3]


def test_a_workspace_with_compactions_and_keyed_resumes_is_removed_whole(
    cli: Cli, app: Rutter, run: dict[str, Any]
) -> None:
    thread = run["thread_id"]
    for n in range(6):
        say(app, thread, "user", f"step {n}")
    cli.json("session", "compact", thread)
    checkpoint = cli.json("session", "checkpoint", run["run_id"], "--title", "t")
    cli.json("session", "resume", checkpoint["node_id"], "--operation-key", "gone-1")
    removed = cli("workspace", "remove", "demo", "--cascade", "--json")
    assert removed.returncode == 0, removed.stderr
    assert cli("workspace", "show", "demo").returncode == 5
    again = cli("session", "compact", thread, "--json")
    assert json.loads(again.stdout)["error"]["code"] == "thread_not_found"
