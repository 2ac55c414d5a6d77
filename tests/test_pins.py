"""Thread pins and pin proposals (issue 15, docs/reference/pins.md), through the app facade on a
real store: bounds, versions, redaction, inheritance by the thread's later runs and not by a new
thread, the three answers, and the store refusing pin and memory writes by `mcp` (raw SQL)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rutter_core.app.branches import ForkParams, ResumeParams
from rutter_core.app.continuity import CheckpointParams
from rutter_core.app.facade import Rutter
from rutter_core.app.memory import CreateMemoryParams
from rutter_core.app.pins import (
    AddPinParams,
    AnswerProposalParams,
    EditPinParams,
    ListPinsParams,
    ListProposalsParams,
    OwnProposalsParams,
    ProposePinParams,
    RemovePinParams,
)
from rutter_core.app.runs import CreateRunParams
from rutter_core.app.workspaces import RegisterWorkspaceParams
from rutter_core.kernel.errors import (
    ConflictError,
    NotFoundError,
    RejectedError,
    RutterError,
    UsageError,
)
from rutter_core.store import Store
from tests.conftest import write_tree
from tests.testing import sqlite_file

# The tests whose store is the `store` fixture run on SQLite and on PostgreSQL,
# but those that read or write the SQLite file itself (`sqlite_only`).
pytestmark = pytest.mark.both_dialects

GITHUB = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"
SENTINEL = "sentinel-pin-text-5b1c"
UNKNOWN_PIN = "pin_01M8Y3HJTQYDNPR8CJ56SS1T0B"
UNKNOWN_PROPOSAL = "prop_01M8Y3HJTQYDNPR8CJ56SS1T0B"
NOW = "2026-12-03T10:00:00Z"


@pytest.fixture
def rutter(store: Store, workspace_root: Path) -> Rutter:
    write_tree(workspace_root, {"AGENTS.md": "rules\n"})
    facade = Rutter(store)
    facade.workspaces.register(
        RegisterWorkspaceParams(workspace_id="demo", root=str(workspace_root), cwd="/")
    )
    return facade


@pytest.fixture
def run(rutter: Rutter) -> Any:
    return rutter.runs.create(CreateRunParams(goal="g", workspace_id="demo"), actor="cli")


def refused(error: type[RutterError], code: str, call: Any) -> RutterError:
    with pytest.raises(error) as raised:
        call()
    assert raised.value.code == code, raised.value
    assert SENTINEL not in json.dumps(raised.value.to_json())
    return raised.value


def raw(store: Store, sql: str, *params: object) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(str(sqlite_file(store)))
    try:
        with conn:
            return [tuple(row) for row in conn.execute(sql, params)]
    finally:
        conn.close()


def pin(rutter: Rutter, thread: str, text: str) -> Any:
    return rutter.pins.add(AddPinParams(thread_id=thread, text=text), actor="cli")


def test_add_list_edit_remove_with_versions(rutter: Rutter, run: Any) -> None:
    first = pin(rutter, run.thread_id, "Never touch the generated parser.")
    assert (first.version, first.created_by, first.redacted, first.proposal_id) == (
        1, "cli", False, None,
    )  # fmt: skip
    second = pin(rutter, run.thread_id, "Answer in English.")
    listed = rutter.pins.list(ListPinsParams(thread_id=run.thread_id))
    assert [p.pin_id for p in listed.pins] == [first.pin_id, second.pin_id]
    assert (listed.count, listed.total_chars) == (2, len(first.text) + len(second.text))
    assert listed.to_json()["limits"] == {
        "max_pins": 32, "max_chars": 8192, "max_total_chars": 32768,
    }  # fmt: skip

    edited = rutter.pins.edit(
        EditPinParams(pin_id=first.pin_id, version=1, text="Never edit the parser."), actor="lsp"
    )
    assert (edited.version, edited.text, edited.updated_by) == (2, "Never edit the parser.", "lsp")
    same = rutter.pins.edit(
        EditPinParams(pin_id=first.pin_id, version=2, text="Never edit the parser."), actor="cli"
    )
    assert same.version == 2  # nothing changed
    stale = refused(
        ConflictError,
        "conflict",
        lambda: rutter.pins.edit(
            EditPinParams(pin_id=first.pin_id, version=1, text=SENTINEL), actor="cli"
        ),
    )
    assert stale.details["current_version"] == 2
    assert stale.hint is not None
    assert stale.hint.fix == "reread_pin"
    refused(
        ConflictError,
        "conflict",
        lambda: rutter.pins.remove(RemovePinParams(pin_id=first.pin_id, version=1), actor="cli"),
    )
    removed = rutter.pins.remove(RemovePinParams(pin_id=first.pin_id, version=2), actor="cli")
    assert removed.to_json() == {
        "pin_id": first.pin_id, "thread_id": run.thread_id, "version": 2, "removed": True,
    }  # fmt: skip
    after = rutter.pins.list(ListPinsParams(thread_id=run.thread_id))
    assert [p.pin_id for p in after.pins] == [second.pin_id]
    refused(
        NotFoundError,
        "pin_not_found",
        lambda: rutter.pins.remove(RemovePinParams(pin_id=first.pin_id, version=2), actor="cli"),
    )


def test_bounds_32_pins_8192_chars_32768_total(rutter: Rutter, run: Any) -> None:
    thread = run.thread_id
    refused(RejectedError, "text_too_large", lambda: pin(rutter, thread, "x" * 8193))
    assert pin(rutter, thread, "é" * 8192).text == "é" * 8192  # characters, not bytes
    for index in range(3):
        pin(rutter, thread, str(index) * 8192)
    full = refused(RejectedError, "pins_too_large", lambda: pin(rutter, thread, "y"))
    assert full.details == {"thread_id": thread, "chars": 32769, "max_chars": 32768}
    listed = rutter.pins.list(ListPinsParams(thread_id=thread))
    assert (listed.count, listed.total_chars) == (4, 32768)
    # Editing one within the total is fine; growing one beyond it is not.
    last = listed.pins[-1]
    rutter.pins.edit(EditPinParams(pin_id=last.pin_id, version=1, text="short"), actor="cli")
    pin(rutter, thread, "w" * 8187)  # exactly 32768 again
    refused(
        RejectedError,
        "pins_too_large",
        lambda: rutter.pins.edit(
            EditPinParams(pin_id=last.pin_id, version=2, text="shorter"), actor="cli"
        ),
    )

    other = rutter.runs.create(CreateRunParams(goal="h", workspace_id="demo"), actor="cli")
    for index in range(32):
        pin(rutter, other.thread_id, f"rule {index}")
    refused(RejectedError, "too_many_pins", lambda: pin(rutter, other.thread_id, "one more"))
    assert rutter.pins.list(ListPinsParams(thread_id=other.thread_id)).count == 32


@pytest.mark.sqlite_only
def test_text_is_redacted_and_checked(rutter: Rutter, run: Any, store: Store) -> None:
    secret = pin(rutter, run.thread_id, f"deploy with {GITHUB}")
    assert (secret.text, secret.redacted) == ("deploy with [REDACTED:github_token]", True)
    assert GITHUB not in json.dumps(raw(store, "SELECT * FROM pins"))
    refused(RejectedError, "invalid_text", lambda: pin(rutter, run.thread_id, "  \n "))
    refused(
        RejectedError, "control_character", lambda: pin(rutter, run.thread_id, f"{SENTINEL}\x00")
    )
    refused(NotFoundError, "thread_not_found", lambda: pin(rutter, "thr_nope", "x"))
    refused(
        NotFoundError,
        "pin_not_found",
        lambda: rutter.pins.edit(
            EditPinParams(pin_id=UNKNOWN_PIN, version=1, text="x"), actor="cli"
        ),
    )
    refused(
        UsageError,
        "thread_or_run",
        lambda: rutter.pins.list(ListPinsParams(thread_id=run.thread_id, run_id=run.run_id)),
    )


def test_a_later_run_of_the_thread_carries_the_pins_and_a_new_thread_none(
    rutter: Rutter, run: Any
) -> None:
    kept = pin(rutter, run.thread_id, "Keep the public API stable.")
    later = rutter.runs.create(
        CreateRunParams(goal="continue", workspace_id="demo", thread_id=run.thread_id), actor="cli"
    )
    carried = rutter.pins.list(ListPinsParams(run_id=later.run_id))
    assert (carried.thread_id, carried.run_id) == (run.thread_id, later.run_id)
    assert [p.pin_id for p in carried.pins] == [kept.pin_id]

    fresh = rutter.runs.create(CreateRunParams(goal="other", workspace_id="demo"), actor="cli")
    assert rutter.pins.list(ListPinsParams(run_id=fresh.run_id)).pins == ()
    node = rutter.continuity.checkpoint(CheckpointParams(run_id=run.run_id, title="t"), actor="cli")
    forked = rutter.branches.fork(ForkParams(node_id=node.node_id, goal="alt"), actor="cli")
    resumed = rutter.branches.resume(ResumeParams(node_id=node.node_id), actor="cli")
    for branch in (forked, resumed):
        assert branch.thread_id != run.thread_id
        assert rutter.pins.list(ListPinsParams(run_id=branch.run_id)).pins == ()


def propose(rutter: Rutter, run: Any, text: str, actor: str = "mcp") -> Any:
    return rutter.pins.propose(ProposePinParams(run_id=run.run_id, text=text), actor=actor)  # type: ignore[arg-type]


def answer(rutter: Rutter, proposal_id: str, choice: str, **fields: Any) -> Any:
    return rutter.pins.answer(
        AnswerProposalParams(proposal_id=proposal_id, choice=choice, **fields), actor="cli"
    )


def test_proposals_never_pin_by_themselves(rutter: Rutter, run: Any) -> None:
    proposal = propose(rutter, run, f"Use {GITHUB} nowhere; keep tests green.")
    assert proposal.proposal_id.startswith("prop_")
    assert (proposal.status, proposal.proposed_by, proposal.thread_id, proposal.run_id) == (
        "pending", "mcp", run.thread_id, run.run_id,
    )  # fmt: skip
    assert proposal.text == "Use [REDACTED:github_token] nowhere; keep tests green."
    assert proposal.redacted
    assert rutter.pins.list(ListPinsParams(thread_id=run.thread_id)).pins == ()
    pending = rutter.pins.proposals(ListProposalsParams(workspace_id="demo"))
    assert [p.proposal_id for p in pending.proposals] == [proposal.proposal_id]
    assert rutter.pins.proposals(ListProposalsParams(workspace_id="other")).proposals == ()


def test_pin_pins_the_shown_text(rutter: Rutter, run: Any) -> None:
    secret = propose(rutter, run, f"Never log {GITHUB}.")
    kept = answer(rutter, secret.proposal_id, "pin").pin
    assert (kept.text, kept.redacted) == ("Never log [REDACTED:github_token].", True)
    rutter.pins.remove(RemovePinParams(pin_id=kept.pin_id, version=1), actor="cli")
    proposal = propose(rutter, run, "Run the linters before every commit.")
    answered = answer(rutter, proposal.proposal_id, "pin")
    assert answered.pin is not None
    assert (answered.pin.text, answered.pin.proposal_id, answered.pin.created_by) == (
        proposal.text, proposal.proposal_id, "cli",
    )  # fmt: skip
    assert (answered.proposal.status, answered.proposal.choice, answered.proposal.pin_id) == (
        "answered", "pin", answered.pin.pin_id,
    )  # fmt: skip
    again = refused(ConflictError, "conflict", lambda: answer(rutter, proposal.proposal_id, "pin"))
    assert again.details["choice"] == "pin"
    refused(
        ConflictError,
        "conflict",
        lambda: answer(rutter, proposal.proposal_id, "discuss", text=SENTINEL),
    )
    assert rutter.pins.list(ListPinsParams(thread_id=run.thread_id)).count == 1
    assert rutter.pins.proposals(ListProposalsParams()).proposals == ()
    everything = rutter.pins.proposals(ListProposalsParams(all=True)).proposals
    assert [p.status for p in everything] == ["answered", "answered"]


def test_discuss_and_custom(rutter: Rutter, run: Any) -> None:
    discussed = answer(rutter, propose(rutter, run, "a").proposal_id, "discuss", text="not now")
    assert (discussed.pin, discussed.proposal.choice, discussed.proposal.reply) == (
        None, "discuss", "not now",
    )  # fmt: skip
    quiet = answer(rutter, propose(rutter, run, "b").proposal_id, "discuss")
    assert (quiet.pin, quiet.proposal.reply) == (None, None)
    custom = answer(rutter, propose(rutter, run, "c").proposal_id, "custom", text="my own words")
    assert (custom.pin, custom.proposal.reply) == (None, "my own words")
    pinned = answer(
        rutter, propose(rutter, run, "d").proposal_id, "custom", text=f"mine {GITHUB}", pin=True
    )
    assert pinned.pin is not None
    assert pinned.pin.text == "mine [REDACTED:github_token]"
    assert pinned.proposal.reply_redacted
    texts = [p.text for p in rutter.pins.list(ListPinsParams(thread_id=run.thread_id)).pins]
    assert texts == ["mine [REDACTED:github_token]"]


def test_answer_shapes_and_unknowns(rutter: Rutter, run: Any) -> None:
    proposal = propose(rutter, run, "p")
    pid = proposal.proposal_id
    refused(UsageError, "invalid_answer", lambda: answer(rutter, pid, "pin", text=SENTINEL))
    refused(UsageError, "invalid_answer", lambda: answer(rutter, pid, "discuss", pin=True))
    refused(UsageError, "invalid_answer", lambda: answer(rutter, pid, "custom"))
    refused(UsageError, "invalid_choice", lambda: answer(rutter, pid, SENTINEL))
    refused(NotFoundError, "proposal_not_found", lambda: answer(rutter, UNKNOWN_PROPOSAL, "pin"))
    refused(NotFoundError, "proposal_not_found", lambda: answer(rutter, "prop_x", "pin"))
    refused(
        RejectedError,
        "actor_not_allowed",
        lambda: rutter.pins.answer(
            AnswerProposalParams(proposal_id=pid, choice="pin"),
            actor="mcp",  # type: ignore[arg-type]
        ),
    )
    assert rutter.pins.proposals(ListProposalsParams()).proposals[0].status == "pending"


def test_a_full_thread_leaves_the_proposal_pending(rutter: Rutter, run: Any) -> None:
    for index in range(32):
        pin(rutter, run.thread_id, f"rule {index}")
    proposal = propose(rutter, run, "one more")
    refused(RejectedError, "too_many_pins", lambda: answer(rutter, proposal.proposal_id, "pin"))
    listed = rutter.pins.proposals(ListProposalsParams()).proposals
    assert [(p.proposal_id, p.status) for p in listed] == [(proposal.proposal_id, "pending")]


@pytest.mark.sqlite_only
def test_mcp_may_not_write_pins_or_memories(rutter: Rutter, run: Any, store: Store) -> None:
    refused(
        RejectedError,
        "actor_not_allowed",
        lambda: rutter.pins.add(
            AddPinParams(thread_id=run.thread_id, text="x"),
            actor="mcp",  # type: ignore[arg-type]
        ),
    )
    refused(
        RejectedError,
        "actor_not_allowed",
        lambda: rutter.memory.create(
            CreateMemoryParams(scope="user", title="t", content="c"),
            actor="mcp",  # type: ignore[arg-type]
        ),
    )
    assert raw(store, "SELECT count(*) FROM pins") == [(0,)]
    assert raw(store, "SELECT count(*) FROM memories") == [(0,)]


@pytest.mark.sqlite_only
def test_the_store_refuses_pin_and_memory_writes_by_mcp(run: Any, store: Store) -> None:
    pin_row = (
        "INSERT INTO pins (pin_id, thread_id, text, redacted, proposal_id, version, created_by, "
        "updated_by, created_at, updated_at) VALUES (?, ?, 'x', 0, NULL, 1, ?, ?, ?, ?)"
    )
    pin_id = "pin_01M8Y3HJTQYDNPR8CJ56SS1T0B"
    for created, updated in (("mcp", "mcp"), ("cli", "mcp"), ("mcp", "cli")):
        with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
            raw(store, pin_row, pin_id, run.thread_id, created, updated, NOW, NOW)
    raw(store, pin_row, pin_id, run.thread_id, "cli", "cli", NOW, NOW)  # the control: accepted
    with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
        raw(store, "UPDATE pins SET updated_by = 'mcp' WHERE pin_id = ?", pin_id)
    memory_row = (
        "INSERT INTO memories (memory_id, scope, scope_id, workspace_id, title, content, "
        "content_sha256, status, source_kind, references_json, retention_until, redacted, "
        "created_by, updated_by, version, created_at, updated_at) VALUES "
        "('mem_01M8Y3HJTQYDNPR8CJ56SS1T0B', 'user', 'local-user', NULL, 't', 'c', ?, 'active', "
        "'operator_explicit', '[]', NULL, 0, ?, ?, 1, ?, ?)"
    )
    with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
        raw(store, memory_row, "0" * 64, "mcp", "mcp", NOW, NOW)
    raw(store, memory_row, "0" * 64, "cli", "cli", NOW, NOW)
    with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
        raw(store, "UPDATE memories SET updated_by = 'mcp'")
    answered_by_mcp = (
        "INSERT INTO pin_proposals (proposal_id, thread_id, workspace_id, run_id, text, redacted, "
        "proposed_by, status, choice, reply, reply_redacted, pin_id, answered_by, created_at, "
        "answered_at) VALUES ('prop_01M8Y3HJTQYDNPR8CJ56SS1T0B', ?, 'demo', NULL, 'x', 0, 'mcp', "
        "'answered', 'pin', NULL, 0, NULL, 'mcp', ?, ?)"
    )
    with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
        raw(store, answered_by_mcp, run.thread_id, NOW, NOW)
    assert raw(store, "SELECT created_by FROM pins") == [("cli",)]
    assert raw(store, "SELECT created_by FROM memories") == [("cli",)]


@pytest.mark.sqlite_only
def test_mcp_takes_checkpoints(rutter: Rutter, run: Any, store: Store) -> None:
    node = rutter.continuity.checkpoint(CheckpointParams(run_id=run.run_id, title="t"), actor="mcp")
    assert node.created_by == "mcp"
    assert raw(
        store, "SELECT created_by FROM continuity_nodes WHERE node_id = ?", node.node_id
    ) == [("mcp",)]


RACER = """
import json, sys
from rutter_core.app.facade import Rutter
from rutter_core.app.pins import AddPinParams, AnswerProposalParams
from rutter_core.kernel.errors import RutterError
from rutter_core.store import open_store

url, thread, proposal, name = sys.argv[1:5]
codes = []
with open_store(url) as store:
    pins = Rutter(store).pins
    try:
        pins.answer(AnswerProposalParams(proposal_id=proposal, choice="pin"), actor="cli")
        codes.append("answered")
    except RutterError as error:
        codes.append(error.code)
    for number in range(20):
        try:
            pins.add(AddPinParams(thread_id=thread, text=f"{name} {number}"), actor="cli")
            codes.append("added")
        except RutterError as error:
            codes.append(error.code)
print(json.dumps(codes))
"""


def test_two_processes_race_for_the_last_places_and_the_same_answer(
    rutter: Rutter, run: Any, store: Store
) -> None:
    """Two processes answer one proposal and add 20 pins each to one thread at once: the
    proposal is answered once, the thread ends with exactly 32 pins, every refusal is typed."""
    proposal = propose(rutter, run, "the proposal both answer")
    url = store.engine.url.render_as_string(hide_password=False)
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, url, run.thread_id, proposal.proposal_id, name],
            stdout=subprocess.PIPE,
            text=True,
        )
        for name in ("a", "b")
    ]
    outputs = [worker.communicate(timeout=120)[0] for worker in workers]
    assert [worker.returncode for worker in workers] == [0, 0]
    codes = [code for output in outputs for code in json.loads(output)]
    assert sorted(code for code in codes if code in ("answered", "conflict")) == [
        "answered", "conflict",
    ]  # fmt: skip
    assert codes.count("added") == 31  # and the answer's pin: 32
    assert codes.count("too_many_pins") == 9
    assert rutter.pins.list(ListPinsParams(thread_id=run.thread_id)).count == 32
    answered = rutter.pins.proposals(ListProposalsParams(all=True)).proposals
    assert [(p.status, p.choice) for p in answered] == [("answered", "pin")]


@pytest.mark.sqlite_only
def test_a_thread_and_its_run_together_propose_and_a_mismatch_is_refused(
    rutter: Rutter, run: Any
) -> None:
    both = rutter.pins.propose(
        ProposePinParams(thread_id=run.thread_id, run_id=run.run_id, text="Keep it small."),
        actor="mcp",
    )
    assert (both.thread_id, both.run_id) == (run.thread_id, run.run_id)
    other = rutter.runs.create(CreateRunParams(goal="g2", workspace_id="demo"), actor="cli")
    mismatch = refused(
        UsageError,
        "thread_run_mismatch",
        lambda: rutter.pins.propose(
            ProposePinParams(thread_id=other.thread_id, run_id=run.run_id, text=SENTINEL),
            actor="mcp",
        ),
    )
    assert run.run_id not in mismatch.message
    assert other.thread_id not in mismatch.message
    refused(
        UsageError,
        "thread_or_run",
        lambda: rutter.pins.propose(ProposePinParams(text=SENTINEL), actor="mcp"),
    )
    refused(
        NotFoundError,
        "run_not_found",
        lambda: rutter.pins.propose(
            ProposePinParams(thread_id=run.thread_id, run_id="run_01M8Y3HJTQYDNPR8CJ56SS1T0B",
                             text=SENTINEL),
            actor="mcp",
        ),
    )  # fmt: skip
    assert len(raw(rutter.store, "SELECT proposal_id FROM pin_proposals")) == 1


def test_an_actor_reads_back_only_its_own_proposals_of_the_thread(rutter: Rutter, run: Any) -> None:
    mine = propose(rutter, run, "mine")
    theirs = propose(rutter, run, "theirs", actor="lsp")
    other = rutter.runs.create(CreateRunParams(goal="g2", workspace_id="demo"), actor="cli")
    propose(rutter, other, "another thread's")
    answer(rutter, mine.proposal_id, "discuss", text="later")

    def own(**given: Any) -> list[str]:
        listed = rutter.pins.own_proposals(OwnProposalsParams(**given), actor="mcp")
        return [p.proposal_id for p in listed.proposals]

    assert own(run_id=run.run_id) == [mine.proposal_id]  # not the lsp's, not another thread's
    assert own(thread_id=run.thread_id, status="answered") == [mine.proposal_id]
    assert own(thread_id=run.thread_id, status="pending") == []
    listed = rutter.pins.own_proposals(OwnProposalsParams(run_id=run.run_id), actor="lsp")
    assert [p.proposal_id for p in listed.proposals] == [theirs.proposal_id]
    refused(
        UsageError,
        "thread_run_mismatch",
        lambda: own(thread_id=other.thread_id, run_id=run.run_id),
    )
    refused(UsageError, "thread_or_run", own)
    refused(
        NotFoundError, "thread_not_found", lambda: own(thread_id="thr_01M8Y3HJTQYDNPR8CJ56SS1T0B")
    )
