"""Compaction, receipts and the overflow error in the language server (issue 29), per client
capability set: `rutter/session/compact` and `rutter/session/receiptRead` answer with the CLI's
JSON documents, the same operation key answers the same compaction, failures
(`nothing_to_compact`, `context_overflow` with its figures) are JSON-RPC errors carrying the
typed error, and a slow summarizer holds no other request of the editor."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from rutter_core.app.continuity import AddMessageParams
from rutter_core.app.facade import Rutter
from rutter_core.app.pins import AddPinParams
from tests.assembly_lsp_session import Session, failure
from tests.assembly_lsp_session import session as lsp_session
from tests.lsp_client import request, wait_until
from tests.model_endpoints import BODY_MARKER, SUMMARY, model_server

session = lsp_session
"""The module-scoped language server session of the assembly tests, one per client."""

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]


def seed(session: Session, thread: str, texts: list[tuple[str, str]]) -> list[str]:
    with session.app() as store:
        app = Rutter(store)
        return [
            app.continuity.add_message(
                AddMessageParams(thread_id=thread, role=role, text=text), source="cli"
            ).message_id
            for role, text in texts
        ]


async def test_compact_then_assemble_and_read_a_receipt(session: Session) -> None:
    run = session.new_run()
    output = "".join(f"row {n}\n" for n in range(1500))
    ids = seed(session, run.thread_id, [
        ("user", "fix the parser"), ("assistant", "[tool call pytest call-1]\n{}"),
        ("tool", f"[tool result call-1]\n{output}"), ("assistant", "done"),
        ("user", "now the docs"), ("assistant", "ok"),
    ])  # fmt: skip
    params: dict[str, Any] = {"thread_id": run.thread_id, "operation_key": f"lsp-{run.run_id}"}
    first = await request(session.client, "rutter/session/compact", params)
    assert (first["status"], first["summarizer"]) == ("completed", "extractive")
    assert first["kept_message_ids"] == ids[-4:]
    assert first["compacted_message_count"] == 2
    again = await request(session.client, "rutter/session/compact", params)
    assert again == first
    code, nothing = await failure(session, "rutter/session/compact", {"thread_id": run.thread_id})
    assert (code, nothing["code"]) == (-32803, "nothing_to_compact")

    assembled = await request(session.client, "rutter/contextAssemble", {"run_id": run.run_id})
    assert [e["kind"] for e in assembled["entries"]] == [
        "instruction",
        "summary",
        "receipt",
        "message",
        "message",
        "message",
    ]
    receipt = assembled["entries"][2]["id"]
    page = await request(session.client, "rutter/session/receiptRead", {"receipt_id": receipt})
    assert (page["receipt_id"], page["page"], page["pages"]) == (receipt, 1, 4)
    assert page["text"].startswith("[tool result call-1]\nrow 0\n")


async def test_overflow_is_a_typed_error_with_its_figures(session: Session) -> None:
    run = session.new_run()
    with session.app() as store:
        pin = Rutter(store).pins.add(
            AddPinParams(thread_id=run.thread_id, text="never push to main " * 10), actor="cli"
        )
    code, error = await failure(
        session, "rutter/contextAssemble", {"run_id": run.run_id, "budget": 20}
    )
    assert (code, error["code"]) == (-32803, "context_overflow")
    assert error["details"]["budget"] == 20
    assert [(r["kind"], r["id"]) for r in error["details"]["required"]] == [
        ("instruction", "AGENTS.md"), ("pin", pin.pin_id),
    ]  # fmt: skip
    assert error["details"]["needed"] == sum(r["tokens"] for r in error["details"]["required"])


# A summarizer that blocks until the test releases it: it says it started, reads its prompt,
# then waits for the file `gate` in its directory.
GATED = """
import pathlib, sys, time
here = pathlib.Path(sys.argv[1])
sys.stdin.read()
(here / "started").write_text("1")
while not (here / "gate").exists():
    time.sleep(0.05)
print("written after the gate opened")
"""


async def test_a_slow_summarizer_holds_no_other_request(session: Session, tmp_path: Path) -> None:
    run, other = session.new_run(), session.new_run()
    seed(session, run.thread_id, [("user", f"request {n}") for n in range(6)])
    script = tmp_path / "gated.py"
    script.write_text(GATED, encoding="utf-8")
    params = {
        "thread_id": run.thread_id, "summarizer": "command",
        "summarizer_command": [sys.executable, str(script), str(tmp_path)],
        "operation_key": f"gated-{run.run_id}",
    }  # fmt: skip
    compacting = asyncio.ensure_future(request(session.client, "rutter/session/compact", params))
    try:
        await wait_until((tmp_path / "started").exists, what="the summarizer")
        # While it waits, the store answers: another run's context (a write), and a second
        # compaction of the same thread, refused because the first is running.
        assembled = await request(
            session.client, "rutter/contextAssemble", {"run_id": other.run_id}
        )
        assert [e["kind"] for e in assembled["entries"]] == ["instruction"]
        code, busy = await failure(session, "rutter/session/compact", {"thread_id": run.thread_id})
        assert (code, busy["code"]) == (-32803 + 1, "compaction_in_progress") or busy["code"] == (
            "compaction_in_progress"
        )
        assert busy["details"]["operation_key"] == f"gated-{run.run_id}"
        assert not compacting.done()  # still waiting for the gate
    finally:
        (tmp_path / "gate").write_text("open")
    done = await compacting
    assert (done["status"], done["summarizer"]) == ("completed", "command")
    assert done["summary"]["text"] == "written after the gate opened"
    assert done["compacted_message_count"] == 2


async def test_a_model_summarizer_from_the_editor(session: Session) -> None:
    run = session.new_run()
    seed(session, run.thread_id, [("user", f"request {n}") for n in range(6)])
    with model_server() as endpoint:
        params = {
            "thread_id": run.thread_id, "summarizer": "anthropic",
            "summarizer_base_url": endpoint.anthropic_url, "summarizer_model": "m",
            "summarizer_key_env": "", "operation_key": f"model-{run.run_id}",
        }  # fmt: skip
        done = await request(session.client, "rutter/session/compact", params)
        assert (done["summarizer"], done["summary"]["text"]) == ("anthropic", SUMMARY)
        assert await request(session.client, "rutter/session/compact", params) == done
        assert endpoint.calls == 1
        assert "x-api-key" not in endpoint.requests[0].headers
        endpoint.mode = "429"
        seed(session, run.thread_id, [("user", "one more")])
        _, error = await failure(
            session, "rutter/session/compact", {**params, "operation_key": f"m2-{run.run_id}"}
        )
        assert (error["code"], error["details"]["reason"]) == ("summarizer_failed", "rate_limited")
        assert error["hint"] == {
            "fix": "wait_for_summarizer", "summarizer": "anthropic", "retry_after": 7,
        }  # fmt: skip
        assert BODY_MARKER not in str(error)
