"""Issue 34: a private key whose lines are wrapped (quoted list items, Markdown table cells,
`\\n` escapes, one joined line ...) is refused or redacted on every surface that writes text:
instructions, memories, messages, notes, pins, pin proposals, run goals and transcript import.
Checked in what each surface answers and in the store's raw bytes (database, WAL and shared
memory files), since a secret that reached SQLite's pages is a leak even if no read shows it."""

from __future__ import annotations

import json
import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rutter_core.app.continuity import AddMessageParams, AddNoteParams
from rutter_core.app.facade import Rutter
from rutter_core.app.memory import CreateMemoryParams
from rutter_core.app.pins import AddPinParams, ProposePinParams
from rutter_core.app.runs import CreateRunParams
from rutter_core.app.transcripts import ImportTranscriptParams
from rutter_core.app.workspaces import RegisterWorkspaceParams
from rutter_core.discovery.fsread import FileReader
from rutter_core.discovery.snapshot import Limits
from rutter_core.discovery.walk import discover
from rutter_core.kernel.errors import RejectedError
from rutter_core.store import Store, open_store
from tests.conftest import write_tree
from tests.fixtures.redaction import secret_corpus

# Wraps that used to let a key through (issue 34), each with its own key.
WRAPS = {
    "python-list": lambda line: f"    '{line}',",
    "markdown-table": lambda line: f"| {line} |",
    "yaml-list": lambda line: f'  - "{line}"',
    "backslash": lambda line: f"{line} \\",
    "br": lambda line: f"{line}<br>",
}


def wrapped_key(name: str) -> tuple[str, list[str]]:
    """The text of a wrapped RSA key block and the key's body lines (what must never leak)."""
    lines = secret_corpus.key_lines(random.Random(name), "RSA ")
    if name == "one-line":
        return " ".join(lines), lines[1:-1]
    return "\n".join(WRAPS[name](line) for line in lines), lines[1:-1]


CASES = [*WRAPS, "one-line"]


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "rutter.db"


@pytest.fixture
def store(db_path: Path) -> Iterator[Store]:
    with open_store(f"sqlite:///{db_path}") as opened:
        yield opened


@pytest.fixture
def rutter(store: Store, workspace_root: Path, db_path: Path) -> Iterator[Rutter]:
    write_tree(workspace_root, {"AGENTS.md": "rules\n"})
    facade = Rutter(store)
    facade.workspaces.register(
        RegisterWorkspaceParams(workspace_id="demo", root=str(workspace_root), cwd="/")
    )
    # Another connection keeps the database open, so SQLite leaves the -wal and -shm files in
    # place (the last connection to close checkpoints and removes them) and the test reads
    # what the writes left there.
    holder = sqlite3.connect(db_path, isolation_level=None)
    holder.execute("SELECT count(*) FROM sqlite_master").fetchall()
    try:
        yield facade
    finally:
        holder.close()


@pytest.fixture
def run(rutter: Rutter) -> Any:
    return rutter.runs.create(CreateRunParams(goal="g", workspace_id="demo"), actor="cli")


def stored_bytes(db_path: Path) -> bytes:
    files = [Path(f"{db_path}{suffix}") for suffix in ("", "-wal", "-shm")]
    assert files[0].exists()
    assert files[1].exists()
    return b"".join(path.read_bytes() for path in files if path.exists())


def assert_nowhere(body: list[str], db_path: Path, *answers: Any) -> None:
    raw = stored_bytes(db_path)
    for line in body:
        assert line.encode() not in raw
        for answer in answers:
            assert line not in json.dumps(answer if isinstance(answer, dict) else answer.to_json())


@pytest.mark.parametrize("case", CASES)
def test_memory_refuses_a_wrapped_key_and_stores_it_only_redacted(
    rutter: Rutter, db_path: Path, case: str
) -> None:
    text, body = wrapped_key(case)
    params = {"scope": "user", "title": "old deploy key", "content": f"Key:\n{text}\nend"}
    with pytest.raises(RejectedError) as refused:
        rutter.memory.create(CreateMemoryParams(**params), actor="cli")
    assert refused.value.code == "secret_detected"
    assert refused.value.details["findings"] == [
        {"field": "content", "kind": "private_key", "count": 1}
    ]
    record = rutter.memory.create(CreateMemoryParams(**params, redact_sensitive=True), actor="cli")
    assert record.redacted is True
    assert "[REDACTED:private_key]" in record.content
    assert_nowhere(body, db_path, refused.value.to_json(), record)


@pytest.mark.parametrize("case", CASES)
def test_messages_and_notes_store_a_wrapped_key_redacted(
    rutter: Rutter, run: Any, db_path: Path, case: str
) -> None:
    text, body = wrapped_key(case)
    message = rutter.continuity.add_message(
        AddMessageParams(thread_id=run.thread_id, role="user", text=f"here:\n{text}"),
        source="mcp",
    )
    note = rutter.continuity.add_note(
        AddNoteParams(thread_id=run.thread_id, kind="fact", text=f"the key\n{text}\n"),
        actor="cli",
    )
    for stored in (message, note):
        assert stored.redacted is True
        assert stored.text.count("[REDACTED:private_key]") == 1
    assert_nowhere(body, db_path, message, note)


@pytest.mark.parametrize("case", CASES)
def test_pins_and_proposals_store_a_wrapped_key_redacted(
    rutter: Rutter, run: Any, db_path: Path, case: str
) -> None:
    text, body = wrapped_key(case)
    pinned = rutter.pins.add(AddPinParams(thread_id=run.thread_id, text=text), actor="cli")
    proposed = rutter.pins.propose(
        ProposePinParams(thread_id=run.thread_id, text=f"pin this: {text}"), actor="mcp"
    )
    assert pinned.redacted is True
    for stored in (pinned, proposed):
        assert stored.text.count("[REDACTED:private_key]") == 1
    assert_nowhere(body, db_path, pinned, proposed)


@pytest.mark.parametrize("case", CASES)
def test_a_run_goal_with_a_wrapped_key_is_refused(rutter: Rutter, db_path: Path, case: str) -> None:
    text, body = wrapped_key(case)
    with pytest.raises(RejectedError) as refused:
        rutter.runs.create(
            CreateRunParams(goal=f"rotate this key:\n{text}", workspace_id="demo"), actor="cli"
        )
    assert refused.value.code == "secret_in_goal"
    assert refused.value.details["kinds"] == ["private_key"]
    assert_nowhere(body, db_path, refused.value.to_json())


@pytest.mark.parametrize("case", CASES)
def test_transcript_import_stores_a_wrapped_key_redacted(
    rutter: Rutter, db_path: Path, tmp_path: Path, case: str
) -> None:
    text, body = wrapped_key(case)
    record = {"type": "user", "uuid": "u-1", "sessionId": "s-1", "isSidechain": False,
              "timestamp": "2026-11-30T09:00:00Z",
              "message": {"role": "user", "content": f"use this key\n{text}"}}  # fmt: skip
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps(record) + "\n", encoding="utf-8")
    done = rutter.transcripts.import_transcript(
        ImportTranscriptParams(agent="claude-code", path=str(transcript), workspace_id="demo"),
        actor="cli",
    )
    assert done.imported == 1
    raw = stored_bytes(db_path)
    assert b"[REDACTED:private_key]" in raw
    assert_nowhere(body, db_path, done)


@pytest.mark.parametrize("case", CASES)
def test_instructions_deliver_a_wrapped_key_redacted(tmp_path: Path, case: str) -> None:
    text, body = wrapped_key(case)
    write_tree(tmp_path, {"AGENTS.md": f"# Deploy\n\n{text}\n\nRotate yearly.\n", "src/x.py": ""})
    snapshot = discover("demo", str(tmp_path), "src/x.py", reader=FileReader(), limits=Limits())
    [source] = snapshot.sources
    assert [(item.kind, item.count) for item in source.redactions] == [("private_key", 1)]
    for line in body:
        assert line not in source.content
