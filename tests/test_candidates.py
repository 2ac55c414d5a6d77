"""Experience candidates (issue 30, docs/reference/memory.md) on a real store: the queue derived
from notes with references whose thread has a completion record (each kind, and a paused run
that has none), its bounds, review (confirm against a changed note or a stale version, secrets,
repeats, two processes at once) and the tombstone a resolved candidate leaves, checked on the
store's raw bytes."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from rutter_core.app.candidates import (
    ConfirmCandidateParams,
    GetCandidateParams,
    IgnoreCandidateParams,
    ListCandidatesParams,
)
from rutter_core.app.continuity import (
    AddMessageParams,
    AddNoteParams,
    CheckpointParams,
    DeliveryCheckpointParams,
    EditNoteParams,
    SupersedeNoteParams,
)
from rutter_core.app.facade import Rutter
from rutter_core.app.memory import DeleteMemoryParams, GetMemoryParams
from rutter_core.app.runs import CreateRunParams, SetRunStatusParams
from rutter_core.app.workspaces import RegisterWorkspaceParams, RemoveWorkspaceParams
from rutter_core.kernel.errors import (
    ConflictError,
    NotFoundError,
    RejectedError,
    RutterError,
    UsageError,
)
from rutter_core.store import Store
from tests.conftest import write_tree

GITHUB = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"
CANDIDATE_KEYS = [
    "candidate_id", "protocol_version", "workspace_id", "version", "fingerprint", "status",
    "title", "content", "references", "redacted", "source", "completion", "confidence_note",
    "review",
]  # fmt: skip


@dataclass
class Setup:
    rutter: Rutter
    store: Store
    root: Path

    def run(self) -> Any:
        return self.rutter.runs.create(
            CreateRunParams(goal="review", workspace_id="demo", target="src", mode="auto"),
            actor="cli",
        )

    def note(self, thread_id: str, text: str, *, kind: str = "decision", refs: Any = None) -> Any:
        references = ("src/parser.py",) if refs is None else tuple(refs)
        params = AddNoteParams(thread_id=thread_id, kind=kind, text=text, references=references)
        return self.rutter.continuity.add_note(params, actor="cli")

    def status(self, run_id: str, *statuses: str) -> None:
        for status in statuses:
            self.rutter.runs.set_status(
                SetRunStatusParams(run_id=run_id, status=status), actor="cli"
            )

    def listed(self) -> Any:
        return self.rutter.candidates.list(ListCandidatesParams(workspace_id="demo"))

    def confirm(self, candidate: Any, **changes: Any) -> Any:
        fields = {
            "id": candidate.candidate_id,
            "version": candidate.version,
            "fingerprint": candidate.fingerprint,
            "source_version": candidate.source.note_version,
            "confirm": True,
            **changes,
        }
        return self.rutter.candidates.confirm(ConfirmCandidateParams(**fields), actor="cli")

    def ignore(self, candidate: Any, version: int = 1) -> Any:
        params = IgnoreCandidateParams(id=candidate.candidate_id, version=version)
        return self.rutter.candidates.ignore(params, actor="cli")

    def memories(self) -> int:
        with self.store.read() as conn:
            return int(conn.exec_driver_sql("SELECT count(*) FROM memories").scalar_one())


@pytest.fixture
def setup(store: Store, workspace_root: Path) -> Setup:
    write_tree(workspace_root, {"AGENTS.md": "root rules\n", "src/parser.py": "x = 1\n"})
    subprocess.run(["git", "-C", str(workspace_root), "init", "-q"], check=True, timeout=60)
    rutter = Rutter(store)
    rutter.workspaces.register(
        RegisterWorkspaceParams(workspace_id="demo", root=str(workspace_root), cwd="/")
    )
    return Setup(rutter, store, workspace_root)


def refused(error: type[RutterError], code: str, call: Callable[[], Any]) -> RutterError:
    with pytest.raises(error) as raised:
        call()
    assert raised.value.code == code, raised.value
    return raised.value


# -- the queue ------------------------------------------------------------------------------------


def test_a_completed_run_makes_its_decision_a_candidate(setup: Setup) -> None:
    run = setup.run()
    note = setup.note(run.thread_id, "Use the streaming parser\nThe old one loads whole files.")
    assert setup.listed().items == ()  # the run has no completion record yet
    setup.status(run.run_id, "running", "completed")
    listed = setup.listed()
    assert (listed.scanned, listed.truncated) == (1, False)
    (item,) = listed.items
    document = item.to_json()
    assert list(document) == CANDIDATE_KEYS
    assert document["candidate_id"] == f"cand_{note.note_id[5:]}_1"
    assert document["status"] == "pending"
    assert document["version"] == 1
    assert len(document["fingerprint"]) == 64
    assert document["title"] == "Decision: Use the streaming parser"
    assert document["content"] == note.text
    assert document["references"] == ["src/parser.py"]
    assert document["source"] == {
        "note_id": note.note_id,
        "note_version": 1,
        "run_id": run.run_id,
        "thread_id": run.thread_id,
    }
    assert document["completion"]["kind"] == "run_completed"
    assert "check the conclusion and where it applies" in document["confidence_note"]
    assert document["review"] is None
    # Stable: the same note version lists the same candidate.
    assert setup.listed().items == listed.items
    shown = setup.rutter.candidates.get(GetCandidateParams(id=item.candidate_id))
    assert shown == item


def test_an_imported_finished_reply_is_a_completion_with_its_own_confidence_note(
    setup: Setup,
) -> None:
    run = setup.run()
    setup.note(run.thread_id, "Summary of the parser work", kind="summary")
    setup.rutter.continuity.add_message(
        AddMessageParams(thread_id=run.thread_id, role="user", text="please fix it"),
        source="import:codex",
    )
    assert setup.listed().items == ()  # a user turn is no finished reply
    setup.rutter.continuity.add_message(
        AddMessageParams(thread_id=run.thread_id, role="assistant", text="done: fixed"),
        source="import:codex",
    )
    (item,) = setup.listed().items
    assert item.completion.kind == "reply_completed"
    assert item.title == "Summary: Summary of the parser work"
    assert item.confidence_note.startswith("A finished reply only proves the reply ended")
    # An assistant message typed through a surface is not an imported agent turn.
    other = setup.run()
    setup.note(other.thread_id, "Another decision")
    setup.rutter.continuity.add_message(
        AddMessageParams(thread_id=other.thread_id, role="assistant", text="typed"), source="cli"
    )
    assert [i.source.thread_id for i in setup.listed().items] == [run.thread_id]


def test_a_delivery_checkpoint_is_a_completion_and_a_plain_one_is_not(setup: Setup) -> None:
    run = setup.run()
    setup.note(run.thread_id, "Keep the cache per workspace")
    setup.rutter.continuity.checkpoint(
        CheckpointParams(run_id=run.run_id, title="halfway"), actor="cli"
    )
    assert setup.listed().items == ()
    node = setup.rutter.continuity.checkpoint(
        DeliveryCheckpointParams(run_id=run.run_id, title="delivered", delivery=True), actor="cli"
    )
    (item,) = setup.listed().items
    assert (item.completion.kind, item.completion.at) == ("delivery_checkpoint", node.created_at)
    assert item.source.run_id == run.run_id


def test_a_paused_run_is_no_completion_and_only_referenced_decisions_and_summaries_count(
    setup: Setup,
) -> None:
    paused = setup.run()
    setup.note(paused.thread_id, "Paused work's decision")
    setup.status(paused.run_id, "running", "paused")
    done = setup.run()
    setup.note(done.thread_id, "A fact is no candidate", kind="fact")
    setup.note(done.thread_id, "No reference, no candidate", refs=())
    kept = setup.note(done.thread_id, "Referenced decision")
    gone = setup.note(done.thread_id, "Superseded decision")
    setup.rutter.continuity.supersede_note(
        SupersedeNoteParams(note_id=gone.note_id, version=1), actor="cli"
    )
    setup.status(done.run_id, "running", "completed")
    listed = setup.listed()
    assert [item.source.note_id for item in listed.items] == [kept.note_id]
    # Scanned: the sources (referenced active decisions and summaries), with or without a record.
    assert listed.scanned == 2


def test_listing_scans_at_most_200_sources_and_returns_at_most_50(setup: Setup) -> None:
    run = setup.run()
    for number in range(230):
        setup.note(run.thread_id, f"decision {number}")
    setup.status(run.run_id, "running", "completed")
    listed = setup.listed()
    assert (len(listed.items), listed.scanned, listed.truncated) == (50, 200, True)
    texts = [item.content for item in listed.items]
    assert texts == [f"decision {number}" for number in range(229, 179, -1)]  # newest first


def test_a_sensitive_or_secret_reference_is_refused_on_the_note(setup: Setup) -> None:
    run = setup.run()
    env = [".env"]
    refused(RejectedError, "sensitive_source", lambda: setup.note(run.thread_id, "x", refs=env))
    refused(
        RejectedError,
        "secret_detected",
        lambda: setup.note(run.thread_id, "x", refs=[f"https://x.example/?t={GITHUB}"]),
    )


# -- review ---------------------------------------------------------------------------------------


def _completed(setup: Setup, text: str = "Use the streaming parser") -> tuple[Any, Any, Any]:
    run = setup.run()
    note = setup.note(run.thread_id, text)
    setup.status(run.run_id, "running", "completed")
    (item,) = setup.listed().items
    return run, note, item


def test_confirm_saves_a_project_memory_and_leaves_a_tombstone(setup: Setup) -> None:
    _, note, item = _completed(setup)
    confirmed = setup.confirm(item)
    memory = confirmed.memory
    assert memory is not None
    assert (memory.scope, memory.scope_id, memory.source_kind) == (
        "project", "demo", "operator_explicit",
    )  # fmt: skip
    assert (memory.title, memory.content, memory.references) == (
        item.title, note.text, ("src/parser.py",),
    )  # fmt: skip
    assert (memory.created_by, memory.redacted) == ("cli", False)
    candidate = confirmed.candidate.to_json()
    assert candidate["status"] == "confirmed"
    assert (candidate["title"], candidate["content"], candidate["references"]) == (None, None, [])
    assert candidate["version"] == 2
    assert candidate["fingerprint"] == item.fingerprint
    assert candidate["review"]["memory_id"] == memory.memory_id
    assert candidate["review"]["by"] == "cli"
    assert setup.listed().items == ()  # resolved: out of the queue
    shown = setup.rutter.candidates.get(GetCandidateParams(id=item.candidate_id))
    assert shown == confirmed.candidate


def test_confirm_needs_an_explicit_yes(setup: Setup) -> None:
    _, _, item = _completed(setup)
    refused(UsageError, "confirmation_required", lambda: setup.confirm(item, confirm=False))
    assert setup.memories() == 0


def test_a_changed_note_makes_the_candidate_stale(setup: Setup) -> None:
    _, note, item = _completed(setup)
    setup.rutter.continuity.edit_note(
        EditNoteParams(note_id=note.note_id, version=1, text="Use the old parser after all"),
        actor="cli",
    )
    error = refused(ConflictError, "candidate_stale", lambda: setup.confirm(item))
    assert error.details["current_note_version"] == 2
    assert "Use the" not in error.message  # names the rule, never the text
    refused(ConflictError, "candidate_stale", lambda: setup.ignore(item))
    assert setup.memories() == 0
    # The note's new version is a new candidate.
    (fresh,) = setup.listed().items
    assert fresh.candidate_id != item.candidate_id
    assert fresh.source.note_version == 2
    assert setup.confirm(fresh).memory is not None


def test_a_fingerprint_or_source_version_not_as_read_is_stale(setup: Setup) -> None:
    _, _, item = _completed(setup)
    refused(ConflictError, "candidate_stale", lambda: setup.confirm(item, fingerprint="0" * 64))
    refused(ConflictError, "candidate_stale", lambda: setup.confirm(item, source_version=2))
    assert setup.memories() == 0


def test_a_stale_candidate_version_is_a_conflict(setup: Setup) -> None:
    _, _, item = _completed(setup)
    error = refused(ConflictError, "conflict", lambda: setup.confirm(item, version=2))
    assert error.details == {
        "candidate_id": item.candidate_id, "expected_version": 2, "current_version": 1,
    }  # fmt: skip
    refused(ConflictError, "conflict", lambda: setup.ignore(item, version=3))
    assert setup.memories() == 0


def test_a_secret_in_the_note_is_refused_unless_redaction_is_asked(setup: Setup) -> None:
    run = setup.run()
    note = setup.note(run.thread_id, f"Deploy with token {GITHUB}")
    assert note.redacted  # the note already holds the redacted text
    setup.status(run.run_id, "running", "completed")
    (item,) = setup.listed().items
    assert item.redacted
    error = refused(RejectedError, "secret_detected", lambda: setup.confirm(item))
    assert error.hint is not None
    assert error.hint.fix == "store_redacted"
    assert setup.memories() == 0
    confirmed = setup.confirm(item, redact_sensitive=True)
    assert confirmed.memory is not None
    assert confirmed.memory.redacted
    assert GITHUB not in confirmed.memory.content
    assert "[REDACTED:" in confirmed.memory.content


def test_repeating_confirm_or_ignore_writes_nothing_twice_and_answers_the_same(
    setup: Setup,
) -> None:
    _, _, item = _completed(setup)
    first = setup.confirm(item)
    again = setup.confirm(item)
    assert again == first
    assert setup.memories() == 1
    refused(ConflictError, "conflict", lambda: setup.ignore(item))

    _, _, other = _completed(setup, "Another decision")
    ignored = setup.ignore(other)
    assert ignored.to_json()["status"] == "ignored"
    assert (ignored.title, ignored.content, ignored.references) == (None, None, ())
    assert ignored.review is not None
    assert ignored.review.memory_id is None
    assert setup.ignore(other) == ignored
    assert setup.ignore(other, version=2) == ignored
    refused(ConflictError, "conflict", lambda: setup.confirm(other))
    assert setup.memories() == 1
    with setup.store.read() as conn:
        rows = conn.exec_driver_sql("SELECT count(*) FROM memory_candidates").scalar_one()
    assert rows == 2


def test_an_unknown_or_malformed_candidate(setup: Setup) -> None:
    get = setup.rutter.candidates.get
    refused(UsageError, "invalid_candidate_id", lambda: get(GetCandidateParams(id="cand_x")))
    missing = "cand_" + "0" * 26 + "_1"
    refused(NotFoundError, "candidate_not_found", lambda: get(GetCandidateParams(id=missing)))
    _, _, item = _completed(setup)
    elsewhere = GetCandidateParams(id=item.candidate_id, workspace_id="other")
    refused(NotFoundError, "candidate_not_found", lambda: get(elsewhere))


_CONFIRM = """
import json, sys
from rutter_core.app.candidates import ConfirmCandidateParams
from rutter_core.app.facade import Rutter
from rutter_core.store import open_store
store = open_store(sys.argv[1])
params = ConfirmCandidateParams.model_validate_json(sys.argv[2])
sys.stdin.readline()  # start together
answer = Rutter(store).candidates.confirm(params, actor="cli")
print(json.dumps(answer.to_json()))
"""


def test_two_processes_confirming_at_once_make_one_memory(setup: Setup) -> None:
    _, _, item = _completed(setup)
    params = json.dumps({
        "id": item.candidate_id, "version": 1, "fingerprint": item.fingerprint,
        "source_version": 1, "confirm": True,
    })  # fmt: skip
    url = str(setup.store.engine.url)
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", _CONFIRM, url, params],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    for worker in workers:
        assert worker.stdin is not None
        worker.stdin.write("go\n")
        worker.stdin.flush()
    answers = []
    for worker in workers:
        out, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err
        answers.append(json.loads(out))
    assert answers[0] == answers[1]
    assert setup.memories() == 1


# -- the tombstone --------------------------------------------------------------------------------


def _files(db_path: Path) -> dict[str, bytes]:
    found = {}
    for suffix in ("", "-wal", "-shm"):
        path = Path(f"{db_path}{suffix}")
        if path.exists():
            found[suffix or "db"] = path.read_bytes()
    return found


def test_deleting_the_memory_leaves_no_way_back_to_its_text(setup: Setup, tmp_path: Path) -> None:
    db_path = tmp_path / "store.db"
    other = sqlite3.connect(db_path)  # keeps the -wal file in place
    try:
        other.execute("SELECT count(*) FROM memories").fetchall()
        marker = uuid.uuid4().hex
        _, _, item = _completed(setup, f"Parser choice {marker}")
        confirmed = setup.confirm(item)
        assert confirmed.memory is not None
        title = f"Decision: Parser choice {marker}"  # the memory's, not the note's
        assert any(title.encode() in data for data in _files(db_path).values())
        setup.rutter.memory.delete(
            DeleteMemoryParams(id=confirmed.memory.memory_id, version=1), actor="cli"
        )
        files = _files(db_path)
        assert "-wal" in files
        for name, data in files.items():
            assert title.encode() not in data, f"the memory's title is still in {name}"
        # The candidate keeps identity, fingerprint and review, and no text to restore.
        shown = setup.rutter.candidates.get(GetCandidateParams(id=item.candidate_id))
        assert (shown.status, shown.title, shown.content, shown.references) == (
            "confirmed", None, None, (),
        )  # fmt: skip
        assert shown.fingerprint == item.fingerprint
        assert shown.review is not None
        assert shown.review.memory_id == confirmed.memory.memory_id
        gone = GetMemoryParams(id=confirmed.memory.memory_id)
        refused(NotFoundError, "not_found", lambda: setup.rutter.memory.get(gone))
        # A repeated confirm answers with what is left: no memory, and writes nothing.
        again = setup.confirm(item)
        assert (again.candidate, again.memory) == (shown, None)
        assert setup.memories() == 0
        row = other.execute("SELECT * FROM memory_candidates").fetchall()
        assert len(row) == 1
        assert not any(marker in str(value) for value in row[0])
        # The table has no column for text at all.
        columns = {r[1] for r in other.execute("PRAGMA table_info(memory_candidates)")}
        assert not columns & {"title", "content", "text", "references_json"}
        # Raw SQL cannot bring a text back into a tombstone (append-only).
        with pytest.raises(sqlite3.DatabaseError):
            other.execute("UPDATE memory_candidates SET status = 'ignored'")
    finally:
        other.close()


def test_a_workspace_removed_with_its_contents_takes_its_candidates(setup: Setup) -> None:
    run, _, item = _completed(setup)
    setup.rutter.continuity.checkpoint(
        DeliveryCheckpointParams(run_id=run.run_id, title="delivered", delivery=True), actor="cli"
    )
    setup.ignore(item)
    removed = setup.rutter.workspaces.remove(
        RemoveWorkspaceParams(workspace_id="demo", cascade=True)
    )
    assert removed.removed
    with setup.store.read() as conn:
        for table in ("memory_candidates", "checkpoint_deliveries"):
            assert conn.exec_driver_sql(f"SELECT count(*) FROM {table}").scalar_one() == 0


def test_no_agent_surface_offers_candidates() -> None:
    # The MCP tools as `tools/list` announces them (regenerated from the server's own table and
    # checked by tests/test_reference_schemas.py): none reads, lists or confirms a candidate.
    tools = (Path(__file__).resolve().parent.parent / "docs/reference/schemas/mcp.json").read_text(
        encoding="utf-8"
    )
    assert "candidate" not in tools.lower()
    assert "delivery" not in tools.lower()  # the agents' checkpoint cannot mark a delivery
