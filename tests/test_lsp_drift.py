"""The pure drift functions of the language server (server/rutter_lsp/drift.py)."""

from __future__ import annotations

from typing import Any

import pytest
from lsprotocol import types

from rutter_lsp.features.runs.drift import (
    DRIFT_CODE,
    DocumentRef,
    findings_of,
    first_difference,
    place,
)
from rutter_lsp.features.runs.review import review_summary, review_text


@pytest.mark.parametrize(
    ("pinned", "live", "expected"),
    [
        ("a\nb\nc\n", "a\nB\nc\n", (1, "b")),
        ("a\nb\n", "a\nb\nc\n", (2, None)),  # a line added at the end
        ("a\nb\nc\n", "a\nb\n", (1, "c")),  # the last line removed: reported on the new last
        ("a\nb", "a\nb\n", (1, None)),  # only the final line break differs
        ("", "x\n", (0, None)),
        ("x\n", "", (0, "x")),
    ],
)
def test_first_difference(pinned: str, live: str, expected: tuple[int, str | None]) -> None:
    assert first_difference(pinned, live) == expected


def source(path: str, content: str, ordinal: int = 1) -> dict[str, Any]:
    return {"path": path, "content": content, "ordinal": ordinal}


def inspection(**diff: Any) -> dict[str, Any]:
    pinned = [source("AGENTS.md", "root\n"), source("src/AGENTS.md", "one\ntwo\n", 2)]
    live = [source("src/AGENTS.md", "one\nTWO\n", 1), source("src/CLAUDE.md", "new\n", 2)]
    base = {
        "added": [],
        "removed": [],
        "changed": [],
        "order_changed": False,
        "ignored_changed": False,
        "from_fingerprint": "a" * 64,
        "to_fingerprint": "b" * 64,
    }
    base.update(diff)
    return {
        "run_id": "run_X",
        "revision": 3,
        "pinned": {"sources": pinned},
        "live": {"sources": live},
        "stale": True,
        "diff": base,
    }


def refs(*docs: tuple[str, str]) -> dict[tuple[str, str], DocumentRef]:
    return {("ws", rel): DocumentRef(f"file:///w/{rel}", "ws", rel, text) for rel, text in docs}


def test_changed_file_gets_a_warning_on_the_first_differing_line() -> None:
    drift = findings_of(inspection(changed=["src/AGENTS.md"]), "ws", "src/main.go")
    placed = place(
        [drift],
        refs(("src/AGENTS.md", "one\nTWO\n"), ("src/main.go", "package main\n")),
        "utf-16",
    )
    [diagnostic] = placed["file:///w/src/AGENTS.md"]
    assert diagnostic.code == DRIFT_CODE
    assert diagnostic.severity == types.DiagnosticSeverity.Warning
    assert diagnostic.range.start.line == 1
    assert diagnostic.message.startswith("src/AGENTS.md changed since run run_X pinned it")
    assert diagnostic.data == {"run_id": "run_X", "revision": 3}
    related = diagnostic.related_information or []
    assert related[0].message == "revision 3 pinned this line as: two"
    assert related[1].location.uri == "file:///w/src/main.go"
    assert "file:///w/src/main.go" not in placed  # the target has nothing of its own


def test_removed_file_goes_to_the_nearest_open_instruction_file_else_the_target() -> None:
    drift = findings_of(inspection(removed=["AGENTS.md"]), "ws", "src/main.go")
    placed = place([drift], refs(("src/AGENTS.md", "one\nTWO\n")), "utf-16")
    [diagnostic] = placed["file:///w/src/AGENTS.md"]
    assert diagnostic.message.startswith("AGENTS.md no longer applies, but run run_X pinned it")
    assert diagnostic.range.start.line == 0

    placed = place([drift], refs(("src/main.go", "package main\n")), "utf-16")
    [diagnostic] = placed["file:///w/src/main.go"]
    assert diagnostic.message.startswith("AGENTS.md no longer applies")

    assert place([drift], refs(("elsewhere.txt", "x\n")), "utf-16") == {}


def test_added_file_and_order_only_changes() -> None:
    drift = findings_of(inspection(added=["src/CLAUDE.md"]), "ws", "src/main.go")
    placed = place([drift], refs(("src/CLAUDE.md", "new\n")), "utf-16")
    [diagnostic] = placed["file:///w/src/CLAUDE.md"]
    assert diagnostic.message.startswith(
        "src/CLAUDE.md applies to src/main.go now but did not when run run_X pinned it"
    )
    reordered = findings_of(inspection(order_changed=True), "ws", "src/main.go")
    placed = place([reordered], refs(("src/main.go", "package main\n")), "utf-16")
    [diagnostic] = placed["file:///w/src/main.go"]
    assert "changed (order or ignored files)" in diagnostic.message


def test_up_to_date_and_failing_runs_show_nothing() -> None:
    fresh = dict(inspection(changed=["src/AGENTS.md"]), stale=False)
    assert (
        place([findings_of(fresh, "ws", "src/main.go")], refs(("src/AGENTS.md", "x")), "utf-8")
        == {}
    )
    failing = dict(fresh, live={"error": {"code": "symlink", "message": "no"}})
    drift = findings_of(failing, "ws", "src/main.go")
    assert drift.live_error == "symlink"
    assert drift.findings == ()


def test_a_stale_line_past_the_buffer_end_is_clamped_to_its_last_line() -> None:
    drift = findings_of(
        dict(
            inspection(changed=["src/AGENTS.md"]),
            live={"sources": [source("src/AGENTS.md", "one\ntwo\nthree\nfour\n")]},
        ),
        "ws",
        "src/main.go",
    )
    placed = place([drift], refs(("src/AGENTS.md", "one\ntwo\n")), "utf-8")
    [diagnostic] = placed["file:///w/src/AGENTS.md"]
    assert diagnostic.range.start.line == 1


def test_review_text_and_summary_name_every_change() -> None:
    data = inspection(changed=["src/AGENTS.md"], removed=["AGENTS.md"], added=["src/CLAUDE.md"])
    text = review_text(data)
    assert text.startswith("# Review: refresh run run_X to revision 4")
    assert "-two" in text
    assert "+TWO" in text
    assert "+new" in text
    assert "-root" in text
    summary = review_summary(data)
    assert summary == (
        "rutter: refresh run run_X to the instructions on disk (revision 4)? "
        "added: src/CLAUDE.md; removed: AGENTS.md; changed: src/AGENTS.md"
    )


def test_confirm_command_line_quotes_a_missing_revision() -> None:
    import shlex

    from rutter_core.app.runs import confirm_refresh_command

    line = confirm_refresh_command("run_X", None, "b" * 64)
    assert "--expected-fingerprint '' --expected-live-fingerprint" in line
    assert shlex.split(line)[-4:] == [
        "--expected-fingerprint",
        "",
        "--expected-live-fingerprint",
        "b" * 64,
    ]


@pytest.mark.parametrize(
    ("changed", "target", "expected"),
    [
        ("AGENTS.md", "src/main.go", True),  # the root reaches everything
        (".prayu/instructions.ignore", "src/main.go", True),
        ("src/AGENTS.md", "src/main.go", True),
        ("src/AGENTS.md", "src", True),
        ("src/AGENTS.md", "srcx/main.go", False),  # a sibling with a common prefix
        ("src/AGENTS.md", "docs/a.md", False),
        ("src/.prayu/rules/go/style.md", "src/a/b.go", True),
        ("src/.prayu/rules", "src/a/b.go", True),  # a directory the watcher reported
        ("src/.claude", "src/a.go", True),
        ("src/.claude/CLAUDE.md", "docs/a.go", False),
        ("src/deep/AGENTS.md", "src/main.go", False),  # below the target's directory
        ("src/AGENTS.md", ".", False),
    ],
)
def test_which_runs_a_change_can_reach(changed: str, target: str, expected: bool) -> None:
    from rutter_core.runs.model import RunRecord
    from rutter_lsp.features.runs.monitor import reaches

    run = RunRecord(
        run_id="run_X", mission_id="m", session_id="s", thread_id="t", workspace_id="ws",
        goal="g", profile=None, mode="ask", target_path=target, status="running",
        revision=1, fingerprint="f", created_by="cli", created_by_person=None,
        updated_by="cli", updated_by_person=None, created_at="", updated_at="",
    )  # fmt: skip
    assert reaches({"ws": {changed}}, run) is expected
    assert reaches({"other": {changed}}, run) is False
