"""Transcript import against lines nested too deep (issue 34): `rutter session import` as a real
process on a real store skips a line nested more than 64 deep as malformed, by its number and
the reason `nesting_too_deep`, and imports every other line; the pure reader does the same."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rutter_core.continuity.transcripts.reading import TranscriptReader
from tests.testing import Cli

MARK = "nesting-marker-3b7e"


def u(n: int) -> str:
    return f"00000000-0000-4000-8000-{n:012d}"


def record(n: int, text: str, tool_input: Any = None) -> bytes:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    if tool_input is not None:
        content.append({"type": "tool_use", "id": f"toolu_{n}", "name": "Bash",
                        "input": tool_input})  # fmt: skip
    line = {
        "type": "assistant", "uuid": u(n), "parentUuid": u(n - 1) if n > 1 else None,
        "sessionId": "deep", "timestamp": f"2026-11-30T09:00:0{n}Z", "isSidechain": False,
        "cwd": "/x", "message": {"role": "assistant", "content": content},
    }  # fmt: skip
    return json.dumps(line).encode()


def deep_record(n: int, levels: int) -> bytes:
    """A well-formed record whose tool input nests `levels` deep (built as text: Python's own
    encoder recurses)."""
    head, _, tail = record(n, f"deep {n}", {"command": 0}).partition(b"0}")
    return head + b"[" * levels + json.dumps(MARK).encode() + b"]" * levels + b"}" + tail


@pytest.fixture
def cli(tmp_path: Path, workspace_root: Path) -> Cli:
    made = Cli(tmp_path / "home", tmp_path)
    made.json("workspace", "register", "demo", str(workspace_root))
    return made


def test_a_line_nested_too_deep_is_skipped_by_number_and_the_rest_imported(
    cli: Cli, tmp_path: Path
) -> None:
    transcript = tmp_path / "deep.jsonl"
    transcript.write_bytes(
        b"\n".join([
            record(1, "first"),
            deep_record(2, 65),
            deep_record(3, 600),  # parsed whole by Python's own parser
            deep_record(4, 100_000),  # past Python's recursion limit
            record(5, "within the bound", {"command": json.loads("[" * 50 + "1" + "]" * 50)}),
            record(6, "last"),
        ]) + b"\n"
    )  # fmt: skip
    done = cli.json("session", "import", "claude-code", str(transcript), "--workspace", "demo")
    assert done["skipped"] == [
        {"line": 2, "reason": "nesting_too_deep"},
        {"line": 3, "reason": "nesting_too_deep"},
        {"line": 4, "reason": "nesting_too_deep"},
    ]
    assert (done["skipped_total"], done["lines"]) == (3, 6)
    listed = cli.json("session", "messages", done["thread_id"])["messages"]
    # Line 5's text and tool call are two messages (`#2`).
    assert [m["external_id"] for m in listed] == [u(1), u(5), f"{u(5)}#2", u(6)]
    assert MARK not in json.dumps(listed)
    # The person's reading names the reason in words.
    shown = cli("session", "import", "claude-code", str(transcript), "--workspace", "demo")
    assert "skipped line 2: nested more than 64 levels deep" in shown.stdout


def test_the_reader_skips_a_deep_line_fed_in_pieces() -> None:
    reader = TranscriptReader("claude-code", "deep.jsonl")
    data = record(1, "first") + b"\n" + deep_record(2, 5000) + b"\n" + record(3, "after") + b"\n"
    entries = []
    for start in range(0, len(data), 1000):  # as --watch reads a growing file
        entries += reader.feed(data[start : start + 1000])
    reader.finish()
    assert [entry.local_id for entry in entries] == [u(1), u(3)]
    assert [(s.line, s.reason) for s in reader.skipped] == [(2, "nesting_too_deep")]
