"""Compaction of a thread (docs/reference/continuity.md): `CompactParams` → `Compaction`,
`ResolveCompactionParams` → `Compaction`, and `CompactionOperations`
(`Rutter(store, reader).compaction`).

The operation spans no area but continuity; it is here because it runs a summarizer between two
transactions and tells the surface the operation key in between (`announce`), so the person
has it before anything leaves rutter.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from pydantic import Field, StrictInt, StrictStr

from rutter_core.app.models import NullMeansAbsent
from rutter_core.assembly.tokens import ESTIMATOR
from rutter_core.continuity.compaction import service
from rutter_core.continuity.compaction.model import (
    DEFAULT_COMMAND_TIMEOUT,
    DEFAULT_INPUT_TOKENS,
    MAX_COMMAND_TIMEOUT,
    SUMMARIZERS,
    Compaction,
    SummarizerFailed,
    SummarizerName,
)
from rutter_core.continuity.compaction.summarizers import Command, Extractive, Summarizer
from rutter_core.kernel.actors import Actor, OperatorActor
from rutter_core.kernel.errors import RutterError, UsageError

if TYPE_CHECKING:
    from rutter_core.app.facade import Rutter

Announce = Callable[[str], None]


class CompactParams(NullMeansAbsent):
    thread_id: StrictStr = Field(description="the thread's ID (thr_...)")
    focus: StrictStr | None = Field(
        None, description="what the summary should keep in view (redacted; at most 2 KiB)"
    )
    summarizer: StrictStr = Field(
        "extractive", description="extractive (no model, the default) or command"
    )
    summarizer_command: tuple[StrictStr, ...] = Field(
        (), description="with summarizer command: the program and its arguments (no shell)"
    )
    summarizer_timeout: StrictInt = Field(
        DEFAULT_COMMAND_TIMEOUT,
        description=f"with summarizer command: seconds it may run (1-{MAX_COMMAND_TIMEOUT})",
    )
    input_tokens: StrictInt = Field(
        DEFAULT_INPUT_TOKENS,
        description="the summarizer's input window in estimated tokens: older messages beyond "
        "it are not read (and counted as unread)",
    )
    operation_key: StrictStr | None = Field(
        None,
        description="the operation's key: the same key again answers the stored result and "
        "never calls the summarizer twice (default: the compaction's ID)",
    )


class ResolveCompactionParams(NullMeansAbsent):
    operation_key: StrictStr = Field(description="the pending compaction's operation key")
    action: Literal["abandon", "retry"] = Field(
        description="abandon it, or call the summarizer again on the same messages"
    )
    summarizer_command: tuple[StrictStr, ...] = Field(
        (), description="with retry of a command compaction: the program and its arguments"
    )
    summarizer_timeout: StrictInt = Field(DEFAULT_COMMAND_TIMEOUT)


def _summarizer_name(name: str) -> SummarizerName:
    for known in SUMMARIZERS:
        if name == known:
            return known
    raise UsageError(
        "invalid_summarizer",
        "the summarizer is extractive or command",
        details={"field": "summarizer", "allowed": list(SUMMARIZERS)},
    )


def _summarizer(name: SummarizerName, command: tuple[str, ...], timeout: int) -> Summarizer:
    if name == "command":
        if not 1 <= timeout <= MAX_COMMAND_TIMEOUT:
            raise UsageError(
                "invalid_summarizer_timeout",
                f"the summarizer's time limit is 1-{MAX_COMMAND_TIMEOUT} seconds",
                details={"field": "summarizer_timeout", "min": 1, "max": MAX_COMMAND_TIMEOUT},
            )
        return Command(command, timeout)
    return Extractive(ESTIMATOR.estimate)


class CompactionOperations:
    def __init__(self, rutter: Rutter) -> None:
        self._rutter = rutter

    def compact(
        self, params: CompactParams, *, actor: Actor, announce: Announce | None = None
    ) -> Compaction:
        """Compact the thread: `announce(key)` is called once the operation is stored and
        before the summarizer runs (`nothing_to_compact`, `compaction_in_progress`,
        `compaction_pending`, `summarizer_failed`, `thread_changed`, ...)."""
        name = _summarizer_name(params.summarizer)
        summarizer = _summarizer(name, params.summarizer_command, params.summarizer_timeout)
        request = service.CompactionRequest(
            thread_id=params.thread_id,
            estimate=ESTIMATOR.estimate,
            summarizer=name,
            focus=params.focus,
            command=params.summarizer_command,
            input_tokens=params.input_tokens,
            operation_key=params.operation_key,
        )
        begun = service.start(self._rutter.store, request, actor=actor)
        if isinstance(begun, Compaction):
            if announce is not None:
                announce(begun.operation_key)
            return begun
        if announce is not None:
            announce(begun.operation_key)
        return self._run(begun, summarizer)

    def resolve(
        self, params: ResolveCompactionParams, *, actor: OperatorActor,
        announce: Announce | None = None,
    ) -> Compaction:  # fmt: skip
        """Abandon or retry a compaction awaiting verification (`compaction_not_found`,
        `compaction_not_pending`, `compaction_in_progress`, `thread_changed`, ...)."""
        begun = service.resolve(
            self._rutter.store,
            params.operation_key,
            params.action,
            actor=actor,
            estimate=ESTIMATOR.estimate,
            command_given=bool(params.summarizer_command),
        )
        if isinstance(begun, Compaction):
            return begun
        if announce is not None:
            announce(begun.operation_key)
        summarizer = _summarizer(
            begun.summarizer, params.summarizer_command, params.summarizer_timeout
        )
        return self._run(begun, summarizer)

    def _run(self, begun: service.Started, summarizer: Summarizer) -> Compaction:
        try:
            output = summarizer.summarize(begun.given)
            return service.finish(self._rutter.store, begun, output)
        except SummarizerFailed:
            service.fail(self._rutter.store, begun, "summarizer_failed")
            raise
        except RutterError:
            raise  # finish recorded it (thread_changed) or found it resolved meanwhile
        except BaseException:
            # Anything else (an interrupt, a bug) in a process that lives on, such as the
            # language server: whether the summarizer answered is unknown, so the operation
            # waits for an operator instead of looking like it still runs.
            service.mark_pending(self._rutter.store, begun)
            raise


__all__ = [
    "Announce",
    "CompactParams",
    "Compaction",
    "CompactionOperations",
    "ResolveCompactionParams",
]
