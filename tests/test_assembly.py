"""Context assembly and its audit (issue 16 items 2-3, docs/reference/assembly.md), through the app
facade on a real store and real files: the budget arithmetic at its edges, every omitted
reason, the authority order, the audit listing, reloading between calls, and identities kept
after an edit or a delete (never a body)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from rutter_core.app.assembly import AssembleParams, AuditParams, ReportParams
from rutter_core.app.facade import Rutter
from rutter_core.app.memory import (
    CreateMemoryParams,
    DeleteMemoryParams,
    EditMemoryParams,
    SetMemoryStatusParams,
)
from rutter_core.app.pins import AddPinParams
from rutter_core.app.runs import CreateRunParams
from rutter_core.app.workspaces import RegisterWorkspaceParams
from rutter_core.assembly.plan import Candidate, plan
from rutter_core.assembly.tokens import ESTIMATOR, BytesAndScript
from rutter_core.discovery.fingerprint import text_sha256
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

INSTRUCTION = "a" * 39 + "\n"
"""40 ASCII characters: 10 tokens."""
GITHUB = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"


def text_of(tokens: int, mark: str = "m") -> str:
    """An ASCII text the estimator counts as exactly `tokens` tokens."""
    return (mark * (4 * tokens))[: 4 * tokens]


@pytest.fixture
def rutter(store: Store, workspace_root: Path) -> Rutter:
    write_tree(workspace_root, {"AGENTS.md": INSTRUCTION})
    facade = Rutter(store)
    facade.workspaces.register(
        RegisterWorkspaceParams(workspace_id="demo", root=str(workspace_root), cwd="/")
    )
    return facade


@pytest.fixture
def run(rutter: Rutter) -> Any:
    return rutter.runs.create(CreateRunParams(goal="g", workspace_id="demo"), actor="cli")


def memory(rutter: Rutter, content: str, *, scope: str = "user", title: str = "t") -> Any:
    return rutter.memory.create(
        CreateMemoryParams(
            scope=scope,
            workspace_id="demo" if scope == "project" else None,
            title=title,
            content=content,
        ),
        actor="cli",
    )


def assemble(rutter: Rutter, run: Any, budget: int | None = None) -> dict[str, Any]:
    return rutter.assembly.assemble(
        AssembleParams(run_id=run.run_id, budget=budget), actor="cli"
    ).to_json()


def decisions(document: dict[str, Any], kind: str | None = None) -> list[tuple[str, str, Any]]:
    return [
        (entry["id"], entry["decision"], entry["reason"])
        for entry in document["entries"]
        if kind is None or entry["kind"] == kind
    ]


def raw(store: Store, sql: str, *params: object) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(str(sqlite_file(store)))
    try:
        with conn:
            return [tuple(row) for row in conn.execute(sql, params)]
    finally:
        conn.close()


# -- the estimator ------------------------------------------------------------------------------


def test_the_estimator_counts_ascii_by_four_bytes_and_cjk_by_character() -> None:
    assert ESTIMATOR.name == "bytes_and_script.v1"
    estimate = BytesAndScript().estimate
    assert [estimate(""), estimate("a"), estimate("abcd"), estimate("abcde")] == [0, 1, 1, 2]
    assert estimate("删除后不可恢复") == 7  # Han: one token each
    assert estimate("ひらがなカタカナ") == 8  # kana
    assert estimate("한국어") == 3  # Hangul
    assert estimate("Привет") == 6  # Cyrillic: two UTF-8 bytes, one token each
    assert estimate("😀") == 2  # four bytes: two
    assert estimate("abcd删") == 2  # the ASCII part and the Han character apart
    assert estimate("parse_input_stream 不可恢复") == 5 + 4
    # ASCII: at least one token per piece a BPE tokenizer keeps apart.
    assert estimate("a.b.c.d") == 7  # 4 letters, 3 dots (4 bytes would say 2)
    assert estimate("x=f(12345)") == 7  # x = f ( 123 45 )
    assert estimate("line\n\n\n") == 4  # a word and three line breaks
    assert estimate("        indented") == 4  # spaces: by bytes


# -- the arithmetic -----------------------------------------------------------------------------


def test_a_memory_that_fits_exactly_is_included_and_one_token_more_is_quota(
    rutter: Rutter, run: Any
) -> None:
    # background 400: memory cap min(2048, 100) = 100; the instruction takes 10 of 400.
    fits = memory(rutter, text_of(100))
    document = assemble(rutter, run, 400)
    assert document["budget"] == {
        "background": 400, "memory_cap": 100, "memory": 100, "required": 10, "used": 110,
    }  # fmt: skip
    assert decisions(document) == [
        ("AGENTS.md", "included", None),
        (fits.memory_id, "included", None),
    ]
    rutter.memory.edit(
        EditMemoryParams(id=fits.memory_id, version=1, content=text_of(100) + "x"), actor="cli"
    )
    over = assemble(rutter, run, 400)
    assert decisions(over, "memory") == [(fits.memory_id, "omitted", "quota")]
    assert over["entries"][1]["tokens"] == 101
    assert over["entries"][1]["version"] == 2
    assert over["budget"]["used"] == 10


def test_an_oversized_first_record_does_not_keep_smaller_ones_out(rutter: Rutter, run: Any) -> None:
    made = [memory(rutter, text_of(n)) for n in (101, 50, 50, 1)]
    order = sorted(made, key=lambda m: m.memory_id)
    document = assemble(rutter, run, 400)
    entries = {e["id"]: e for e in document["entries"] if e["kind"] == "memory"}
    assert [e["id"] for e in document["entries"] if e["kind"] == "memory"] == [
        m.memory_id for m in order
    ]
    # Whatever the ID order, 101 never fits the cap of 100, and two of the smaller three do.
    assert entries[made[0].memory_id]["reason"] == "quota"
    included = [m for m in order if entries[m.memory_id]["decision"] == "included"]
    assert sum(entries[m.memory_id]["tokens"] for m in included) <= 100
    assert len(included) == 2
    assert document["budget"]["used"] == 10 + sum(entries[m.memory_id]["tokens"] for m in included)


def test_an_oversized_record_first_by_id_then_smaller_ones(rutter: Rutter, run: Any) -> None:
    big = memory(rutter, text_of(101))
    small = [memory(rutter, text_of(30)) for _ in range(3)]
    ordered = sorted([big, *small], key=lambda m: m.memory_id)
    document = assemble(rutter, run, 400)
    got = {e["id"]: (e["decision"], e["reason"]) for e in document["entries"]}
    assert got[big.memory_id] == ("omitted", "quota")
    assert all(got[m.memory_id] == ("included", None) for m in small)
    assert [e["id"] for e in document["entries"][1:]] == [m.memory_id for m in ordered]


def test_required_context_that_spends_the_budget_leaves_memory_its_reason(
    rutter: Rutter, run: Any
) -> None:
    # background 12: cap min(2048, 3) = 3, the instruction takes 10, 2 are left.
    three = memory(rutter, text_of(3))
    four = memory(rutter, text_of(4))
    two = memory(rutter, text_of(2))
    document = assemble(rutter, run, 12)
    assert document["budget"] == {
        "background": 12, "memory_cap": 3, "memory": 2, "required": 10, "used": 12,
    }  # fmt: skip
    got = {e["id"]: (e["decision"], e["reason"]) for e in document["entries"]}
    assert got[three.memory_id] == ("omitted", "required_context")  # fits the cap, not the room
    assert got[four.memory_id] == ("omitted", "quota")  # fits neither
    assert got[two.memory_id] == ("included", None)


def test_required_context_that_does_not_fit_is_an_overflow_never_a_silent_cut(
    rutter: Rutter, run: Any
) -> None:
    pin = rutter.pins.add(AddPinParams(thread_id=run.thread_id, text="keep it short"),
                          actor="cli")  # fmt: skip
    tiny = memory(rutter, "ok")
    before = rutter.assembly.audit(AuditParams(run_id=run.run_id)).assemblies
    for budget in (9, 12, 13):
        with pytest.raises(RejectedError) as raised:
            assemble(rutter, run, budget)
        error = raised.value
        assert error.code == "context_overflow"
        assert error.details == {
            "budget": budget,
            "needed": 14,
            "required": [
                {"kind": "instruction", "id": "AGENTS.md", "tokens": 10},
                {"kind": "pin", "id": pin.pin_id, "tokens": 4},
            ],
        }
        assert error.hint is not None
        assert (error.hint.fix, error.hint.params) == ("fit_required_context", {"needed": 14})
    # Nothing was delivered, so nothing was audited.
    assert rutter.assembly.audit(AuditParams(run_id=run.run_id)).assemblies == before
    whole = assemble(rutter, run, 14)
    assert decisions(whole) == [
        ("AGENTS.md", "included", None),
        (pin.pin_id, "included", None),
        (tiny.memory_id, "omitted", "required_context"),
    ]
    assert whole["warnings"] == [
        {"kind": "memory", "reason": "required_context", "count": 1,
         "message": "1 memory source(s) left out: they did not fit what required context left "
         "of the budget"},
    ]  # fmt: skip


def test_authority_order_pinned_instructions_pins_then_user_before_project_by_id(
    rutter: Rutter, run: Any, workspace_root: Path
) -> None:
    project = [memory(rutter, "project fact", scope="project") for _ in range(2)]
    user = [memory(rutter, "user preference") for _ in range(2)]
    pins = [
        rutter.pins.add(AddPinParams(thread_id=run.thread_id, text=f"pin {n}"), actor="cli")
        for n in range(2)
    ]
    # The disk changes after the run pinned its instructions: the pinned text is delivered.
    write_tree(workspace_root, {"AGENTS.md": "changed on disk\n", "CLAUDE.md": "new\n"})
    document = assemble(rutter, run)
    assert [(e["kind"], e["id"], e["scope"]) for e in document["entries"]] == [
        ("instruction", "AGENTS.md", None),
        *(("pin", p.pin_id, None) for p in pins),
        *(("memory", m.memory_id, "user") for m in sorted(user, key=lambda m: m.memory_id)),
        *(("memory", m.memory_id, "project") for m in sorted(project, key=lambda m: m.memory_id)),
    ]
    first = document["entries"][0]
    assert (first["text"], first["version"]) == (INSTRUCTION, 1)
    assert first["sha256"] == text_sha256(INSTRUCTION)
    assert document["configured"]["instructions"]["fingerprint"] == run.fingerprint
    assert document["budget"]["background"] == 16384


def test_at_most_100_records_of_a_scope_are_considered(rutter: Rutter, run: Any) -> None:
    made = sorted((memory(rutter, "x") for _ in range(101)), key=lambda m: m.memory_id)
    project = memory(rutter, "y", scope="project")
    document = assemble(rutter, run, 1_000_000)
    listed = [e["id"] for e in document["entries"] if e["kind"] == "memory"]
    assert listed == [m.memory_id for m in made[:100]] + [project.memory_id]
    assert document["configured"]["memory"] == {
        "user": {"active": 101, "considered": 100, "inactive": 0, "inactive_listed": 0},
        "project": {"active": 1, "considered": 1, "inactive": 0, "inactive_listed": 0},
    }
    assert all(e["decision"] == "included" for e in document["entries"])


def test_delivered_text_is_redacted_and_digested_as_delivered(rutter: Rutter, run: Any) -> None:
    pin = rutter.pins.add(AddPinParams(thread_id=run.thread_id, text=f"use {GITHUB}"),
                          actor="cli")  # fmt: skip
    document = assemble(rutter, run)
    (entry,) = [e for e in document["entries"] if e["id"] == pin.pin_id]
    assert entry["text"] == "use [REDACTED:github_token]"
    assert entry["sha256"] == text_sha256(entry["text"])
    assert GITHUB not in json.dumps(document)


# -- reloading and the audit --------------------------------------------------------------------


@pytest.mark.sqlite_only
def test_each_call_reloads_disabled_and_expired_memories(
    rutter: Rutter, run: Any, store: Store
) -> None:
    kept = memory(rutter, "stays on")
    off = memory(rutter, "turned off later")
    old = memory(rutter, "expires later")
    first = assemble(rutter, run)
    assert [d for _, d, _ in decisions(first, "memory")] == ["included"] * 3
    rutter.memory.set_status(
        SetMemoryStatusParams(id=off.memory_id, version=1, status="disabled"), actor="cli"
    )
    # Its retention passes between the two calls.
    raw(store, "UPDATE memories SET retention_until = ? WHERE memory_id = ?",
        "2000-01-01T00:00:00Z", old.memory_id)  # fmt: skip
    second = assemble(rutter, run)
    got = {e["id"]: e for e in second["entries"] if e["kind"] == "memory"}
    assert (got[kept.memory_id]["decision"], got[kept.memory_id]["reason"]) == ("included", None)
    assert (got[off.memory_id]["reason"], got[off.memory_id]["tokens"]) == ("disabled", None)
    assert got[off.memory_id]["version"] == 2
    assert (got[old.memory_id]["reason"], got[old.memory_id]["text"]) == ("expired", None)
    assert got[old.memory_id]["sha256"] == old.content_sha256
    assert second["configured"]["memory"]["user"] == {
        "active": 1, "considered": 1, "inactive": 2, "inactive_listed": 2,
    }  # fmt: skip
    audit = rutter.assembly.audit(AuditParams(run_id=run.run_id)).to_json()
    assert [a["assembly_id"] for a in audit["assemblies"]] == [
        second["assembly_id"],
        first["assembly_id"],
    ]
    assert audit["has_more"] is False


@pytest.mark.sqlite_only
def test_the_audit_keeps_identities_after_an_edit_and_a_delete_but_never_a_body(
    rutter: Rutter, run: Any, store: Store
) -> None:
    secret_body = "sentinel-assembly-body-7f3a"
    delivered = memory(rutter, secret_body)
    first = assemble(rutter, run)
    (entry,) = [e for e in first["entries"] if e["kind"] == "memory"]
    assert entry["text"] == secret_body
    edited = rutter.memory.edit(
        EditMemoryParams(id=delivered.memory_id, version=1, content="rewritten"), actor="cli"
    )
    rutter.memory.delete(DeleteMemoryParams(id=edited.memory_id, version=2), actor="cli")
    audit = rutter.assembly.audit(AuditParams(run_id=run.run_id)).to_json()
    (stored,) = audit["assemblies"]
    (kept,) = [e for e in stored["entries"] if e["kind"] == "memory"]
    assert kept == {
        "kind": "memory", "id": delivered.memory_id, "version": 1, "scope": "user",
        "sha256": delivered.content_sha256, "tokens": entry["tokens"], "decision": "included",
        "reason": None,
    }  # fmt: skip
    assert "text" not in kept
    assert stored["fingerprint"] == first["fingerprint"]
    # No body in the audit row, and none anywhere in the store's files after the delete.
    (document_json,) = raw(store, "SELECT document_json FROM context_assemblies")[0]
    assert secret_body not in document_json
    assert INSTRUCTION.strip() not in document_json
    database = sqlite_file(store)
    for path in database.parent.glob(database.name + "*"):
        assert secret_body.encode() not in path.read_bytes(), path.name
    # The rows are append-only.
    with pytest.raises(sqlite3.DatabaseError):
        raw(store, "UPDATE context_assemblies SET budget = 1")
    with pytest.raises(sqlite3.DatabaseError):
        raw(store, "DELETE FROM context_assemblies")


def test_the_audit_lists_newest_first_with_a_limit(rutter: Rutter, run: Any) -> None:
    made = [assemble(rutter, run, budget)["assembly_id"] for budget in (100, 200, 300)]
    page = rutter.assembly.audit(AuditParams(run_id=run.run_id, limit=2)).to_json()
    assert [a["assembly_id"] for a in page["assemblies"]] == made[:0:-1]
    assert [a["budget"]["background"] for a in page["assemblies"]] == [300, 200]
    assert page["has_more"] is True
    assert all(a["created_by"] == "cli" for a in page["assemblies"])


@pytest.mark.sqlite_only
def test_bad_input_is_typed_and_stores_nothing(rutter: Rutter, run: Any, store: Store) -> None:
    for budget in (0, -1, 1_000_001):
        with pytest.raises(UsageError) as raised:
            assemble(rutter, run, budget)
        assert raised.value.code == "invalid_budget"
    with pytest.raises(NotFoundError) as missing:
        rutter.assembly.assemble(
            AssembleParams(run_id="run_01M8Y3HJTQYDNPR8CJ56SS1T0B"), actor="cli"
        )
    assert missing.value.code == "run_not_found"
    for limit in (0, 501):
        with pytest.raises(RutterError) as bad:
            rutter.assembly.audit(AuditParams(run_id=run.run_id, limit=limit))
        assert bad.value.code == "invalid_limit"
    assert raw(store, "SELECT count(*) FROM context_assemblies") == [(0,)]
    with pytest.raises(ValueError, match="extra"):
        AssembleParams.model_validate({"run_id": run.run_id, "budgett": 3})


@pytest.mark.sqlite_only
def test_followed_is_a_later_report_kept_apart_from_what_was_delivered(
    rutter: Rutter, run: Any, store: Store
) -> None:
    pin = rutter.pins.add(AddPinParams(thread_id=run.thread_id, text="stay on main"),
                          actor="cli")  # fmt: skip
    big = memory(rutter, text_of(101))
    first = assemble(rutter, run, 400)
    second = assemble(rutter, run, 400)
    listed = rutter.assembly.audit(AuditParams(run_id=run.run_id)).to_json()["assemblies"]
    assert [a["followed"] for a in listed] == [None, None]  # nothing claims compliance
    made = rutter.assembly.report(
        ReportParams(assembly_id=first["assembly_id"], followed=("AGENTS.md",),
                     ignored=(pin.pin_id,)),
        actor="mcp",
    ).to_json()  # fmt: skip
    assert {k: made[k] for k in ("followed", "ignored", "reported_by")} == {
        "followed": ["AGENTS.md"], "ignored": [pin.pin_id], "reported_by": "mcp",
    }  # fmt: skip
    listed = rutter.assembly.audit(AuditParams(run_id=run.run_id)).to_json()["assemblies"]
    assert [a["assembly_id"] for a in listed] == [second["assembly_id"], first["assembly_id"]]
    assert listed[0]["followed"] is None
    assert listed[1]["followed"] == made
    # The injected fact is unchanged by the report.
    assert listed[1]["entries"] == [
        {k: v for k, v in e.items() if k != "text"} for e in first["entries"]
    ]
    # Only what the assembly included, each once; one report per assembly.
    refusals: list[tuple[type[RutterError], str, ReportParams]] = [
        (RejectedError, "not_delivered",
         ReportParams(assembly_id=second["assembly_id"], followed=(big.memory_id,))),
        (RejectedError, "not_delivered",
         ReportParams(assembly_id=second["assembly_id"], followed=("AGENTS.md",),
                      ignored=("AGENTS.md",))),
        (RejectedError, "not_delivered",
         ReportParams(assembly_id=second["assembly_id"], followed=("sentinel-not-an-id",))),
        (UsageError, "nothing_to_report", ReportParams(assembly_id=second["assembly_id"])),
        (UsageError, "invalid_assembly_id", ReportParams(assembly_id="asm_x", followed=("a",))),
        (NotFoundError, "assembly_not_found",
         ReportParams(assembly_id="asm_01M8Y3HJTQYDNPR8CJ56SS1T0B", followed=("AGENTS.md",))),
        (ConflictError, "conflict",
         ReportParams(assembly_id=first["assembly_id"], followed=(pin.pin_id,))),
    ]  # fmt: skip
    for error, code, params in refusals:
        with pytest.raises(error) as raised:
            rutter.assembly.report(params, actor="mcp")
        assert raised.value.code == code
        assert "sentinel-not-an-id" not in json.dumps(raised.value.to_json())
    assert raw(store, "SELECT count(*) FROM context_assembly_reports") == [(1,)]
    with pytest.raises(sqlite3.DatabaseError):
        raw(store, "UPDATE context_assembly_reports SET followed_json = '[]'")


def test_the_plan_tries_smaller_records_after_an_oversized_first_one() -> None:
    """The arithmetic alone, with the order fixed: a 101-token record first (over the cap of
    100), then 50, 50 and 1; required context 10 of 400."""
    instruction = Candidate(kind="instruction", id="AGENTS.md", version=1, text=INSTRUCTION)
    sizes = (101, 50, 50, 1)
    memories = [
        Candidate(kind="memory", id=f"mem_{n}", version=1, text=text_of(size), scope="user")
        for n, size in enumerate(sizes)
    ]
    budget, entries = plan([instruction], [], memories, background=400, estimator=ESTIMATOR)
    assert [(e.id, e.tokens, e.decision, e.reason) for e in entries] == [
        ("AGENTS.md", 10, "included", None),
        ("mem_0", 101, "omitted", "quota"),
        ("mem_1", 50, "included", None),
        ("mem_2", 50, "included", None),
        ("mem_3", 1, "omitted", "quota"),  # the sub-budget is spent: exactly 100 of 100
    ]
    assert budget.used == 110
    # An empty budget of memory: everything after the instruction waits on required context.
    _, tight = plan([instruction], [], memories, background=10, estimator=ESTIMATOR)
    assert [e.reason for e in tight] == [None, "quota", "quota", "quota", "required_context"]
