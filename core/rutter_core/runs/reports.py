"""Reports on a run's delivery (docs/reference/runs.md), the operations.

A person (or the script a person runs: CI after the tests) says whether the run's delivery was
checked and `passed` or `failed`, with a summary and references. A report is appended, never
changed, and changes nothing about its run. The run's newest report that passed is a completion
record for the experience candidates of its thread (docs/reference/memory.md); a later failed
report takes that back. Only operator surfaces report: an agent's own word that its work passed
is no completion record. The summary is redacted like every text and must be readable (no
bidirectional or invisible characters): a person reads it before confirming a candidate.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, get_args

from rutter_core.continuity.policy import clean_text
from rutter_core.kernel.actors import require_operator
from rutter_core.kernel.clock import now_rfc3339
from rutter_core.kernel.errors import RejectedError
from rutter_core.kernel.ids import new_id
from rutter_core.runs import repo
from rutter_core.runs.model import (
    MAX_REPORT_SUMMARY_BYTES,
    DeliveryReport,
    DeliveryReportList,
    DeliveryResult,
)
from rutter_core.runs.reading import load_run
from rutter_core.store import Store

DELIVERY_RESULTS: Final[tuple[DeliveryResult, ...]] = get_args(DeliveryResult)


def report_delivery(
    store: Store,
    run_id: str,
    *,
    result: str,
    summary: str,
    references: Sequence[str] = (),
    actor: str,
) -> DeliveryReport:
    """Append a report on the run's delivery. `references` come checked and normalised by the
    app layer (a memory's rules, as for a note's)."""
    operator = require_operator(actor, what="report on a delivery")
    checked_result = _require_result(result)
    clean = clean_text("summary", summary, max_bytes=MAX_REPORT_SUMMARY_BYTES, readable=True)
    now = now_rfc3339()
    with store.write() as conn:
        run = load_run(conn, run_id)
        return repo.insert_delivery_report(
            conn,
            report_id=new_id("dlv"),
            run_id=run.run_id,
            result=checked_result,
            summary=clean.text,
            redacted=clean.redacted,
            references=tuple(sorted(set(references))),
            actor=operator,
            now=now,
        )


def list_delivery_reports(store: Store, run_id: str) -> DeliveryReportList:
    """The run's delivery reports, oldest first."""
    with store.read() as conn:
        run = load_run(conn, run_id)
        found = repo.select_delivery_reports(conn, run.run_id)
    return DeliveryReportList(run_id=run.run_id, reports=tuple(found))


def _require_result(result: object) -> DeliveryResult:
    for known in DELIVERY_RESULTS:
        if result == known:
            return known
    raise RejectedError(
        "invalid_result",
        "a delivery report's result is passed or failed",
        details={"field": "result", "allowed": list(DELIVERY_RESULTS)},
    )
