"""A compaction request, checked before anything is read: the thread's ID, the summarizer and
its command, the input window, the focus (cleaned and redacted) and the operation key; and the
digest that tells the same request from another under one key."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Final

from rutter_core.continuity.compaction.endpoints import Endpoint
from rutter_core.continuity.compaction.model import (
    MAX_FOCUS_BYTES,
    MAX_INPUT_TOKENS,
    MIN_INPUT_TOKENS,
    SUMMARIZERS,
    SummarizerName,
)
from rutter_core.continuity.policy import clean_text, require_thread_id
from rutter_core.discovery.fingerprint import text_sha256
from rutter_core.kernel.errors import Hint, UsageError

_OPERATION_KEY: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
Estimate = Callable[[str], int]
"""The token estimator (the app layer hands in the one context assembly uses)."""


@dataclass(frozen=True, slots=True)
class CompactionRequest:
    thread_id: str
    estimate: Estimate
    summarizer: SummarizerName
    focus: str | None = None
    command: tuple[str, ...] = ()
    endpoint: Endpoint | None = None
    """With `openai` or `anthropic`: where the prompt goes (checked by `check_endpoint`)."""
    input_tokens: int = 24_000
    operation_key: str | None = None


def require_operation_key(key: str | None) -> str | None:
    if key is None:
        return None
    if not isinstance(key, str) or _OPERATION_KEY.fullmatch(key) is None:
        raise UsageError(
            "invalid_operation_key",
            "an operation key is 1-128 characters: letters, digits and . _ : -, starting with "
            "a letter or digit",
            details={"field": "operation_key"},
        )
    return key


def check_request(request: CompactionRequest) -> CompactionRequest:
    """The request with its focus cleaned (redacted, bounded), before anything is read."""
    require_thread_id(request.thread_id)
    require_operation_key(request.operation_key)
    if request.summarizer not in SUMMARIZERS:
        raise UsageError(
            "invalid_summarizer",
            "the summarizer is extractive, command, openai or anthropic",
            details={"field": "summarizer", "allowed": list(SUMMARIZERS)},
        )
    if request.summarizer == "command" and not request.command:
        raise UsageError(
            "summarizer_command_missing",
            "the command summarizer needs the program to run (and its arguments)",
            details={"field": "summarizer_command"},
            hint=Hint("give_summarizer_command"),
        )
    if request.summarizer in ("openai", "anthropic") and (
        request.endpoint is None or request.endpoint.kind != request.summarizer
    ):
        raise UsageError(
            "summarizer_model_missing",
            f"the {request.summarizer} summarizer needs its endpoint and model",
            details={"field": "summarizer_model", "summarizer": request.summarizer},
            hint=Hint("give_summarizer_model", {"summarizer": request.summarizer}),
        )
    if not MIN_INPUT_TOKENS <= request.input_tokens <= MAX_INPUT_TOKENS:
        raise UsageError(
            "invalid_input_tokens",
            f"the summarizer's input window is {MIN_INPUT_TOKENS}-{MAX_INPUT_TOKENS} tokens",
            details={"field": "input_tokens", "min": MIN_INPUT_TOKENS, "max": MAX_INPUT_TOKENS},
        )
    focus = None
    if request.focus is not None:
        focus = clean_text("focus", request.focus, max_bytes=MAX_FOCUS_BYTES).text
    return replace(request, focus=focus)


def request_digest(request: CompactionRequest) -> str:
    return text_sha256(
        json.dumps(
            {
                "thread_id": request.thread_id,
                "summarizer": request.summarizer,
                "focus": request.focus,
                "command": list(request.command),
                **({} if request.endpoint is None else {"endpoint": request.endpoint.record()}),
                "input_tokens": request.input_tokens,
            },
            sort_keys=True,
        )
    )


__all__ = [
    "CompactionRequest",
    "Estimate",
    "check_request",
    "request_digest",
    "require_operation_key",
]
