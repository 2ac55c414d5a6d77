"""Tool receipts (docs/reference/assembly.md): a large tool result in a run's assembled context
is a short receipt, and `ReceiptReadParams` → `ReceiptPage` pages the original back.

A receipt ID names the message and the run it was delivered to (`rcpt_<message>_<run>`), so
every page re-checks, now, that the run still exists and that the message is still within what
that run's context can reach: its own thread, or the threads of the checkpoints it was resumed
or forked from. A result the transcript marked as an error is a `failed` receipt; a tool call
without its result is never turned into one (it stays a message, as it was said).
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Final

from pydantic import Field, StrictInt, StrictStr
from sqlalchemy.engine import Connection

from rutter_core.app.models import NullMeansAbsent
from rutter_core.assembly.plan import Candidate
from rutter_core.assembly.tokens import ESTIMATOR
from rutter_core.continuity.compaction.latest import find_message
from rutter_core.continuity.model import ContinuityDocument, Message
from rutter_core.continuity.service import branch_origin
from rutter_core.kernel.errors import NotFoundError, UsageError
from rutter_core.runs import service as runs

if TYPE_CHECKING:
    from rutter_core.app.facade import Rutter

RECEIPT_MIN_TOKENS: Final = 256
"""A tool result estimated above this is delivered as a receipt."""
PAGE_CHARS: Final = 4000
MAX_HOPS: Final = 32
_ULID = "[0-9A-HJKMNP-TV-Z]{26}"
_RECEIPT: Final = re.compile(f"rcpt_({_ULID})_({_ULID})")
_RESULT_HEAD: Final = re.compile(r"\[tool result(?: (\S+?))?( error)?\]")


class ReceiptReadParams(NullMeansAbsent):
    receipt_id: StrictStr = Field(description="the receipt's ID (rcpt_...), from an assembly")
    page: StrictInt = Field(1, description="the page to read, from 1")


class ReceiptPage(ContinuityDocument):
    receipt_id: str
    page: int
    pages: int
    text: str


def receipt_id(message_id: str, run_id: str) -> str:
    return f"rcpt_{message_id.removeprefix('msg_')}_{run_id.removeprefix('run_')}"


def as_receipt(message: Message | None, message_id: str, seq: int, role: str, text: str,
               run_id: str) -> Candidate | None:  # fmt: skip
    """The receipt a delivered tool result becomes when it is large (None: delivered as it
    is). `text` is what the message says where it is read from (a checkpoint may carry it cut);
    `message` the stored original, when there is one."""
    original = text if message is None else message.text
    if role != "tool" or ESTIMATOR.estimate(original) <= RECEIPT_MIN_TOKENS:
        return None
    head = _RESULT_HEAD.fullmatch(original.partition("\n")[0].strip())
    outcome = "failed" if head is not None and head.group(2) else "completed"
    call = f" of call {head.group(1)}" if head is not None and head.group(1) else ""
    first = next((line.strip() for line in original.splitlines()[1:] if line.strip()), "")
    rid = receipt_id(message_id, run_id)
    return Candidate(
        kind="receipt",
        id=rid,
        version=1,
        text=(
            f"[{seq} tool] receipt {rid}: tool result{call}, {outcome}, about "
            f"{ESTIMATOR.estimate(original)} tokens; it begins: {first[:160]}\n"
            f"(read it whole with `rutter session receipt read {rid}`)"
        ),
    )


def _reachable_threads(conn: Connection, run_id: str, thread_id: str) -> set[str]:
    threads = {thread_id}
    for _ in range(MAX_HOPS):
        origin = branch_origin(conn, run_id)
        if origin is None:
            break
        threads.add(origin[1].thread_id)
        run_id = origin[1].run_id
    return threads


def _gone() -> NotFoundError:
    return NotFoundError(
        "receipt_not_found",
        "no tool result this receipt names is within its run's reach now: the run, the "
        "message or the link between them is gone; no text is returned",
    )


class ReceiptOperations:
    def __init__(self, rutter: Rutter) -> None:
        self._rutter = rutter

    def read(self, params: ReceiptReadParams) -> ReceiptPage:
        """Page `page` of the tool result the receipt names, re-checked (`invalid_receipt`,
        `receipt_not_found`, `invalid_page`, `page_out_of_range`)."""
        matched = _RECEIPT.fullmatch(params.receipt_id)
        if matched is None:
            raise UsageError(
                "invalid_receipt",
                "not a receipt ID: rcpt_ and two IDs, as an assembly delivers them",
                details={"field": "receipt_id"},
            )
        if params.page < 1:
            raise UsageError("invalid_page", "a page is a whole number from 1", details={"min": 1})
        message_id, run_id = f"msg_{matched.group(1)}", f"run_{matched.group(2)}"
        with self._rutter.store.read() as conn:
            try:
                run = runs.load_run(conn, run_id)
            except NotFoundError:
                raise _gone() from None
            message = find_message(conn, message_id)
            if message is None or message.role != "tool":
                raise _gone()
            if message.thread_id not in _reachable_threads(conn, run.run_id, run.thread_id):
                raise _gone()
        pages = max(1, math.ceil(len(message.text) / PAGE_CHARS))
        if params.page > pages:
            raise UsageError(
                "page_out_of_range",
                f"the receipt has {pages} page(s)",
                details={"page": params.page, "pages": pages},
            )
        start = (params.page - 1) * PAGE_CHARS
        return ReceiptPage(
            receipt_id=params.receipt_id,
            page=params.page,
            pages=pages,
            text=message.text[start : start + PAGE_CHARS],
        )


__all__ = [
    "PAGE_CHARS",
    "RECEIPT_MIN_TOKENS",
    "ReceiptOperations",
    "ReceiptPage",
    "ReceiptReadParams",
    "as_receipt",
    "receipt_id",
]
