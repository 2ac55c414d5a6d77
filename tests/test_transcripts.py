"""Transcript import below the CLI: the JSON Lines splitter, the agents' parsers on the awkward
records their fixtures do not hold, the text made storable (plain, redacted, bounded), and the
app operation on a real store."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from rutter_core.app.facade import Rutter
from rutter_core.app.runs import CreateRunParams
from rutter_core.app.transcripts import ImportTranscriptParams
from rutter_core.app.workspaces import RegisterWorkspaceParams
from rutter_core.continuity.model import MAX_MESSAGE_BYTES
from rutter_core.continuity.transcripts import claude_code, codex
from rutter_core.continuity.transcripts.fields import timestamp
from rutter_core.continuity.transcripts.jsonl import LineSplitter, RawLine, decode_line
from rutter_core.continuity.transcripts.prepare import prepare_text
from rutter_core.continuity.transcripts.reading import TranscriptReader
from rutter_core.continuity.transcripts.records import Entry, LineOutcome
from rutter_core.kernel.errors import RejectedError
from rutter_core.store import Store
from tests.testing import sqlite_file

TOKEN = "ghp_" + "M1n2B3v4C5x6Z7l8K9j0H1g2F3d4S5a6P7o8"


# -- JSON Lines -----------------------------------------------------------------------------------


def test_lines_are_cut_across_feeds_and_a_partial_one_waits() -> None:
    splitter = LineSplitter(max_line_bytes=16)
    assert splitter.feed(b'{"a":1}\n{"b"') == [RawLine(1, b'{"a":1}')]
    assert splitter.pending_line() == 2
    assert splitter.feed(b":2}\r\n\n") == [RawLine(2, b'{"b":2}\r'), RawLine(3, b"")]
    assert splitter.pending_line() is None
    # a line over the bound is dropped as it arrives, and reported once its newline comes
    assert splitter.feed(b"x" * 10) == []
    assert splitter.feed(b"y" * 10) == []
    assert splitter.pending_line() == 4
    assert splitter.feed(b"z\n{}\n") == [RawLine(4, None), RawLine(5, b"{}")]
    assert splitter.lines_done == 5


@pytest.mark.parametrize(
    ("data", "decoded"),
    [
        (b'{"a": 1}\r', {"a": 1}),
        (b"   ", None),
        (None, "line_too_long"),
        (b'{"a": "\x00"}', "nul_byte"),
        (b'{"a": "\xc3\x28"}', "invalid_utf8"),
        (b'{"a": ', "invalid_json"),
        (b"[" * 100_000, "nesting_too_deep"),  # refused before the parser recurses
        (b"42", "not_an_object"),
    ],
)
def test_a_line_decodes_to_an_object_or_a_reason(data: bytes | None, decoded: object) -> None:
    assert decode_line(data) == decoded


def test_times_are_utc_to_the_second() -> None:
    assert timestamp("2026-11-30T09:00:01.999Z") == "2026-11-30T09:00:01Z"
    assert timestamp("2026-11-30T11:00:01+02:00") == "2026-11-30T09:00:01Z"
    assert timestamp("2026-11-30T09:00:01") is None  # no zone: nothing certain
    assert timestamp("yesterday") is None
    assert timestamp(1701334801) is None


# -- the parsers on what the fixtures do not hold ------------------------------------------------


def _claude(**fields: Any) -> LineOutcome:
    record = {"type": "user", "uuid": "u-1", "sessionId": "s", "isSidechain": False,
              "timestamp": "2026-11-30T09:00:00Z", **fields}  # fmt: skip
    return claude_code.parse_line(record, 7)


def test_claude_code_records_that_are_not_plain_messages() -> None:
    assert _claude(message={"role": "user", "content": 42}).problem == "unexpected_shape"
    assert _claude(message="text").problem == "unexpected_shape"
    assert _claude(uuid=None, message={"content": "x"}).problem == "unexpected_shape"
    assert _claude(message={"content": "   "}).omitted == ("empty",)
    assert _claude(isSidechain=True, message={"content": "x"}).omitted == ("sidechain",)
    two_results = _claude(message={"content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "one"},
        {"type": "tool_result", "tool_use_id": "toolu_2", "content": [
            {"type": "text", "text": "two"}, {"type": "document", "source": {}}]},
        {"type": "text", "text": "and a remark"},
        {"type": "server_tool_use\u0000", "id": "x"},
    ]})  # fmt: skip
    assert two_results.entries == (
        Entry(7, "u-1", "tool", "[tool result toolu_1]\none", "2026-11-30T09:00:00Z"),
        Entry(7, "u-1#2", "tool", "[tool result toolu_2]\ntwo\n[document omitted]",
              "2026-11-30T09:00:00Z"),
        Entry(7, "u-1#3", "user", "and a remark\n[content omitted]", "2026-11-30T09:00:00Z"),
    )  # fmt: skip
    redacted_thinking = claude_code.parse_line(
        {"type": "assistant", "uuid": "a", "sessionId": "s",
         "message": {"content": [{"type": "redacted_thinking", "data": "..."}]}}, 1,
    )  # fmt: skip
    assert (redacted_thinking.entries, redacted_thinking.omitted) == ((), ("reasoning",))
    assert claude_code.parse_line({"type": "summary", "summary": 3}, 1).problem == (
        "unexpected_shape"
    )


def test_codex_items_that_are_not_plain_messages() -> None:
    def line(payload: dict[str, Any], kind: str = "response_item") -> LineOutcome:
        return codex.parse_line(
            {"timestamp": "2026-12-01T14:00:00Z", "type": kind, "payload": payload}, 3
        )

    shell = line({"type": "local_shell_call", "call_id": "c1", "status": "completed",
                  "action": {"type": "exec", "command": ["ls", "-a"]}})  # fmt: skip
    assert shell.entries[0].text == (
        '[tool call local_shell c1]\n{"type": "exec", "command": ["ls", "-a"]}'
    )
    search = line({"type": "web_search_call", "action": {"type": "search", "query": "serde"}})
    assert search.entries[0].text == '[tool call web_search]\n{"type": "search", "query": "serde"}'
    assert line({"id": None}, "session_meta").problem == "unexpected_shape"
    assert line({"type": "message", "role": "user", "content": "text"}).problem == (
        "unexpected_shape"
    )
    assert line({"type": "message", "role": "user", "content": []}).omitted == ("empty",)
    assert line({"type": "ghost_snapshot", "ghost_commit": {}}).omitted == ("metadata",)
    assert codex.parse_line({"type": "response_item", "payload": []}, 1).problem == (
        "unexpected_shape"
    )


# -- text made storable ---------------------------------------------------------------------------


def test_control_characters_and_unpaired_surrogates_become_replacement_characters() -> None:
    text, redacted, original = prepare_text("a\x00b\x1bc\ud800d\te\r\nf\x7f")
    assert (text, redacted, original) == ("a\ufffdb\ufffdc\ufffdd\te\nf\ufffd", False, None)


def test_a_long_text_is_cut_after_redaction_and_says_so() -> None:
    body = "word " * 20_000 + TOKEN  # the token lies past the final cut
    head = f"key {TOKEN}\n"
    text, redacted, original = prepare_text(head + body)
    assert redacted is True
    assert original == len((head + body).encode())
    assert len(text.encode()) <= MAX_MESSAGE_BYTES
    assert text.startswith("key [REDACTED:github_token]\nword word")
    assert text.endswith(f" of {original} bytes]")
    assert "ghp_" not in text


def test_a_secret_at_the_cut_is_never_left_half_visible() -> None:
    for shift in range(0, 64, 7):
        filler = "a" * (MAX_MESSAGE_BYTES - 1100 - shift) + " "
        text, _redacted, _original = prepare_text(filler + f"{TOKEN} tail " * 50)
        kept = text.split("\n[truncated by rutter:")[0]
        assert "ghp_" not in kept
        assert not kept.endswith("[REDACTED:"[:3])
        assert kept.count("[REDACTED:") == kept.count("[REDACTED:github_token]")


def test_one_huge_token_without_white_space_is_bounded() -> None:
    text, _redacted, original = prepare_text("x" * (300 * 1024))
    assert original == 300 * 1024
    assert len(text.encode()) <= MAX_MESSAGE_BYTES


# -- the operation on a real store -----------------------------------------------------------------


@pytest.fixture
def rutter(store: Store, tmp_path: Path) -> Rutter:
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        Rutter(store).workspaces.register(
            RegisterWorkspaceParams(workspace_id=name, root=str(tmp_path / name), cwd=str(tmp_path))
        )
    return Rutter(store)


def _write(path: Path, *records: dict[str, Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _user(uuid: str, text: str, session: str = "s-1") -> dict[str, Any]:
    message = {"role": "user", "content": text}
    return {"type": "user", "uuid": uuid, "sessionId": session, "isSidechain": False,
            "timestamp": "2026-11-30T09:00:00Z", "message": message}  # fmt: skip


def test_a_thread_of_another_workspace_is_refused(rutter: Rutter, tmp_path: Path) -> None:
    other = rutter.runs.create(CreateRunParams(goal="g", workspace_id="two"), actor="cli")
    transcript = _write(tmp_path / "t.jsonl", _user("u-1", "hello"))
    with pytest.raises(RejectedError) as refused:
        rutter.transcripts.import_transcript(
            ImportTranscriptParams(agent="claude-code", path=str(transcript),
                                   workspace_id="one", thread_id=other.thread_id),
            actor="cli",
        )  # fmt: skip
    assert refused.value.code == "thread_in_other_workspace"
    done = rutter.transcripts.import_transcript(
        ImportTranscriptParams(agent="claude-code", path=str(transcript),
                               thread_id=other.thread_id),
        actor="cli",
    )  # fmt: skip
    assert (done.workspace_id, done.thread_id, done.imported) == ("two", other.thread_id, 1)


def test_an_id_shaped_like_a_secret_is_skipped_never_stored(rutter: Rutter, tmp_path: Path) -> None:
    transcript = _write(
        tmp_path / "t.jsonl", _user("u-1", "kept"), _user(TOKEN, "its ID is a token")
    )
    done = rutter.transcripts.import_transcript(
        ImportTranscriptParams(agent="claude-code", path=str(transcript), workspace_id="one"),
        actor="cli",
    )
    assert done.imported == 1
    assert [(s.line, s.reason) for s in done.skipped] == [(2, "invalid_id")]
    assert TOKEN not in json.dumps(done.to_json())


def test_a_session_id_shaped_like_a_secret_refuses_the_import(
    rutter: Rutter, tmp_path: Path
) -> None:
    transcript = _write(tmp_path / "t.jsonl", _user("u-1", "hello", session=TOKEN))
    with pytest.raises(RejectedError) as refused:
        rutter.transcripts.import_transcript(
            ImportTranscriptParams(agent="claude-code", path=str(transcript), workspace_id="one"),
            actor="cli",
        )
    assert refused.value.code == "transcript_invalid_session"
    assert TOKEN not in json.dumps(refused.value.to_json())


def test_unknown_fields_are_refused() -> None:
    with pytest.raises(ValueError, match="source"):
        ImportTranscriptParams.model_validate(
            {"agent": "codex", "path": "x", "source": "import:other"}
        )


def test_the_record_of_an_import_is_append_only_for_any_client(
    rutter: Rutter, store: Store, tmp_path: Path
) -> None:
    transcript = _write(tmp_path / "t.jsonl", _user("u-1", f"my token {TOKEN}"))
    done = rutter.transcripts.import_transcript(
        ImportTranscriptParams(agent="claude-code", path=str(transcript), workspace_id="one"),
        actor="cli",
    )
    path = sqlite_file(store)
    conn = sqlite3.connect(path)
    try:
        for statement in (
            "UPDATE transcript_imports SET thread_id = thread_id",
            "DELETE FROM transcript_imports",
            "INSERT OR REPLACE INTO transcript_imports SELECT * FROM transcript_imports",
        ):
            with pytest.raises(sqlite3.DatabaseError):
                conn.execute(statement)
        rows = conn.execute("SELECT source, external_session_id, thread_id, created_by "
                            "FROM transcript_imports").fetchall()  # fmt: skip
        texts = [text for (text,) in conn.execute("SELECT text FROM messages")]
    finally:
        conn.close()
    assert rows == [("import:claude-code", "s-1", done.thread_id, "cli")]
    assert texts == ["my token [REDACTED:github_token]"]
    for name in ("store.db", "store.db-wal"):
        file = tmp_path / name
        assert not file.exists() or TOKEN.encode() not in file.read_bytes()


def test_following_stops_when_the_file_is_replaced(
    rutter: Rutter, store: Store, tmp_path: Path
) -> None:
    transcript = _write(tmp_path / "t.jsonl", _user("u-1", "first"))
    stop = threading.Event()
    outcome: list[object] = []

    def follow() -> None:
        try:
            outcome.append(
                rutter.transcripts.follow(
                    ImportTranscriptParams(
                        agent="claude-code", path=str(transcript), workspace_id="one"
                    ),
                    actor="cli",
                    stop=stop,
                )
            )
        except RejectedError as exc:
            outcome.append(exc)

    follower = threading.Thread(target=follow)
    follower.start()
    try:
        deadline = time.monotonic() + 60
        while _stored(store) < 1:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        replacement = _write(tmp_path / "new.jsonl", _user("u-2", "other"))
        replacement.replace(transcript)
        follower.join(60)
    finally:
        stop.set()
        follower.join(60)
    [error] = outcome
    assert isinstance(error, RejectedError)
    assert error.code == "transcript_replaced"
    assert _stored(store) == 1  # what was stored before stays


def _stored(store: Store) -> int:
    with sqlite3.connect(sqlite_file(store)) as conn:
        return int(conn.execute("SELECT count(*) FROM messages").fetchone()[0])


def test_an_older_codex_rollout_without_the_envelope() -> None:
    reader = TranscriptReader("codex", "old.jsonl")
    lines = [
        {"id": "old-1", "timestamp": "2025-05-01T10:00:00.000Z", "instructions": None},
        {"record_type": "state"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {"type": "function_call", "name": "shell", "arguments": '{"command":["ls"]}',
         "call_id": "c1"},
        {"type": "function_call_output", "call_id": "c1", "output": "README.md"},
        {"type": "reasoning", "summary": [], "encrypted_content": "gAAAA"},
    ]  # fmt: skip
    entries = reader.feed(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
    reader.finish()
    assert reader.session_id == "old-1"
    assert [(e.line, reader.external_id(e), e.role, e.text, e.timestamp) for e in entries] == [
        (3, "old-1/line:3", "user", "hi", None),
        (4, "old-1/line:4", "assistant", '[tool call shell c1]\n{"command":["ls"]}', None),
        (5, "old-1/line:5", "tool", "[tool result c1]\nREADME.md", None),
    ]
    assert (reader.omitted["metadata"], reader.omitted["reasoning"], reader.skipped) == (2, 1, [])


def test_a_byte_order_mark_before_the_first_line_is_ignored() -> None:
    reader = TranscriptReader("claude-code", "bom.jsonl")
    line = json.dumps(_user("u-1", "hello")).encode()
    entries = reader.feed(b"\xef\xbb\xbf" + line + b"\n")
    reader.finish()
    assert [(e.line, e.text) for e in entries] == [(1, "hello")]
    assert reader.skipped == []
