"""Compaction of a thread (docs/reference/continuity.md): `CompactParams` → `Compaction`,
`ResolveCompactionParams` → `Compaction`, and `CompactionOperations`
(`Rutter(store, reader).compaction`).

The operation spans no area but continuity; it is here because it runs a summarizer between two
transactions and tells the surface the operation key in between (`announce`), so the person
has it before anything leaves rutter. `compact` is `begin` (a transaction), `run` (the
summarizer's call, then `complete`, another transaction); a surface that must not hold its
store's thread while a model answers (the language server) calls the three itself and runs
`PendingCompaction.summarize` on a thread of its own.

Summarizer settings come from the params, else from this process's environment
(`RUTTER_SUMMARIZER_OPENAI_BASE_URL`, `_MODEL`, `_KEY_ENV`, and the same for `ANTHROPIC`); the
key is read from the variable `_KEY_ENV` names, when the summarizer is built, and goes nowhere
but the request's header.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Literal

from pydantic import Field, StrictInt, StrictStr

from rutter_core.app.models import NullMeansAbsent
from rutter_core.assembly.tokens import ESTIMATOR
from rutter_core.continuity.compaction import service
from rutter_core.continuity.compaction.endpoints import (
    Endpoint,
    ModelEndpoint,
    check_endpoint,
    config_env,
    read_key,
)
from rutter_core.continuity.compaction.model import (
    DEFAULT_COMMAND_TIMEOUT,
    DEFAULT_INPUT_TOKENS,
    ENDPOINT_KINDS,
    MAX_COMMAND_TIMEOUT,
    SUMMARIZERS,
    Compaction,
    EndpointKind,
    SummarizerFailed,
    SummarizerName,
)
from rutter_core.continuity.compaction.summarizers import Command, Extractive, Summarizer
from rutter_core.kernel.actors import Actor, OperatorActor
from rutter_core.kernel.errors import Hint, RutterError, UsageError

if TYPE_CHECKING:
    from rutter_core.app.facade import Rutter

Announce = Callable[[str], None]


_SUMMARIZER_HELP: Final = (
    "extractive (no model, the default), command (a program), openai (an OpenAI-compatible "
    "chat-completions endpoint) or anthropic (the Messages API)"
)


class CompactParams(NullMeansAbsent):
    thread_id: StrictStr = Field(description="the thread's ID (thr_...)")
    focus: StrictStr | None = Field(
        None, description="what the summary should keep in view (redacted; at most 2 KiB)"
    )
    summarizer: StrictStr = Field("extractive", description=_SUMMARIZER_HELP)
    summarizer_command: tuple[StrictStr, ...] = Field(
        (), description="with summarizer command: the program and its arguments (no shell)"
    )
    summarizer_timeout: StrictInt = Field(
        DEFAULT_COMMAND_TIMEOUT,
        description="with summarizer command, openai or anthropic: seconds it may take "
        f"(1-{MAX_COMMAND_TIMEOUT})",
    )
    summarizer_base_url: StrictStr | None = Field(
        None,
        description="with openai or anthropic: the endpoint's base URL (default: "
        "RUTTER_SUMMARIZER_OPENAI_BASE_URL / RUTTER_SUMMARIZER_ANTHROPIC_BASE_URL, else the "
        "vendor's)",
    )
    summarizer_model: StrictStr | None = Field(
        None,
        description="with openai or anthropic: the model (default: RUTTER_SUMMARIZER_OPENAI_MODEL"
        " / RUTTER_SUMMARIZER_ANTHROPIC_MODEL)",
    )
    summarizer_key_env: StrictStr | None = Field(
        None,
        description="with openai or anthropic: the NAME of the environment variable holding the "
        "key, never the key (default: RUTTER_SUMMARIZER_OPENAI_KEY_ENV / "
        "RUTTER_SUMMARIZER_ANTHROPIC_KEY_ENV, else OPENAI_API_KEY / ANTHROPIC_API_KEY; empty: "
        "no key is sent)",
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
    summarizer_base_url: StrictStr | None = Field(
        None, description="with retry of an openai or anthropic compaction: as for compact"
    )
    summarizer_model: StrictStr | None = Field(
        None, description="with retry of an openai or anthropic compaction: as for compact"
    )
    summarizer_key_env: StrictStr | None = Field(
        None, description="with retry of an openai or anthropic compaction: as for compact"
    )


Settings = CompactParams | ResolveCompactionParams


def _summarizer_name(name: str) -> SummarizerName:
    for known in SUMMARIZERS:
        if name == known:
            return known
    raise UsageError(
        "invalid_summarizer",
        "the summarizer is extractive, command, openai or anthropic",
        details={"field": "summarizer", "allowed": list(SUMMARIZERS)},
    )


def _setting(given: str | None, kind: EndpointKind, name: str, environ: Mapping[str, str]) -> (
    str | None
):  # fmt: skip
    """A given setting, else its `RUTTER_SUMMARIZER_<KIND>_<NAME>` variable (None: neither;
    an empty variable counts as unset, except the key's variable name, where empty means no
    key)."""
    if given is not None:
        return given
    value = environ.get(config_env(kind, name))
    if value is None or (not value.strip() and name != "KEY_ENV"):
        return None
    return value


def _endpoint(kind: EndpointKind, params: Settings, environ: Mapping[str, str]) -> Endpoint:
    return check_endpoint(
        kind,
        _setting(params.summarizer_base_url, kind, "BASE_URL", environ),
        _setting(params.summarizer_model, kind, "MODEL", environ),
        _setting(params.summarizer_key_env, kind, "KEY_ENV", environ),
    )


def _timeout(seconds: int) -> int:
    if not 1 <= seconds <= MAX_COMMAND_TIMEOUT:
        raise UsageError(
            "invalid_summarizer_timeout",
            f"the summarizer's time limit is 1-{MAX_COMMAND_TIMEOUT} seconds",
            details={"field": "summarizer_timeout", "min": 1, "max": MAX_COMMAND_TIMEOUT},
        )
    return seconds


def _summarizer(
    name: SummarizerName, params: Settings, environ: Mapping[str, str]
) -> tuple[Summarizer, Endpoint | None]:
    """The summarizer `name` as `params` (and the environment) configure it, checked before
    anything is stored: a missing command, model or key is a usage error here."""
    if name == "command":
        timeout = _timeout(params.summarizer_timeout)
        if not params.summarizer_command:
            raise UsageError(
                "summarizer_command_missing",
                "the command summarizer needs the program to run (and its arguments)",
                details={"field": "summarizer_command"},
                hint=Hint("give_summarizer_command"),
            )
        return Command(params.summarizer_command, timeout), None
    if name in ENDPOINT_KINDS:
        kind: EndpointKind = "openai" if name == "openai" else "anthropic"
        timeout = _timeout(params.summarizer_timeout)
        endpoint = _endpoint(kind, params, environ)
        return ModelEndpoint(endpoint, read_key(endpoint, environ), float(timeout)), endpoint
    return Extractive(ESTIMATOR.estimate), None


@dataclass(frozen=True, slots=True)
class PendingCompaction:
    """A compaction stored `running`, whose summarizer is still to be called: `summarize` reads
    no store, so it may run on any thread (the language server runs it off its disk worker),
    and `CompactionOperations.complete` stores its output."""

    started: service.Started
    summarizer: Summarizer = field(repr=False)

    @property
    def operation_key(self) -> str:
        return self.started.operation_key

    def summarize(self) -> str:
        return self.summarizer.summarize(self.started.given)


class CompactionOperations:
    def __init__(self, rutter: Rutter, environ: Mapping[str, str] | None = None) -> None:
        self._rutter = rutter
        self._environ = environ
        """Where summarizer settings and keys are read (None: this process's environment,
        read at each call)."""

    @property
    def environ(self) -> Mapping[str, str]:
        return os.environ if self._environ is None else self._environ

    def compact(
        self, params: CompactParams, *, actor: Actor, announce: Announce | None = None
    ) -> Compaction:
        """Compact the thread: `announce(key)` is called once the operation is stored and
        before the summarizer runs (`nothing_to_compact`, `compaction_in_progress`,
        `compaction_pending`, `summarizer_failed`, `thread_changed`, ...)."""
        begun = self.begin(params, actor=actor)
        if announce is not None:
            announce(begun.operation_key)
        if isinstance(begun, Compaction):
            return begun
        return self.run(begun)

    def begin(self, step: CompactParams, *, actor: Actor) -> Compaction | PendingCompaction:
        """Step one of `compact` (a step, not an operation of its own: the reference lists
        `compact`): the stored result of the same key, or the operation stored `running` with
        the summarizer to call (see `PendingCompaction`)."""
        params = step
        name = _summarizer_name(params.summarizer)
        summarizer, endpoint = _summarizer(name, params, self.environ)
        request = service.CompactionRequest(
            thread_id=params.thread_id,
            estimate=ESTIMATOR.estimate,
            summarizer=name,
            focus=params.focus,
            command=params.summarizer_command,
            endpoint=endpoint,
            input_tokens=params.input_tokens,
            operation_key=params.operation_key,
        )
        begun = service.start(self._rutter.store, request, actor=actor)
        if isinstance(begun, Compaction):
            return begun
        return PendingCompaction(begun, summarizer)

    def resolve(
        self, params: ResolveCompactionParams, *, actor: OperatorActor,
        announce: Announce | None = None,
    ) -> Compaction:  # fmt: skip
        """Abandon or retry a compaction awaiting verification (`compaction_not_found`,
        `compaction_not_pending`, `compaction_in_progress`, `thread_changed`, ...)."""
        begun = self.begin_resolve(params, actor=actor)
        if isinstance(begun, Compaction):
            return begun
        if announce is not None:
            announce(begun.operation_key)
        return self.run(begun)

    def begin_resolve(
        self, step: ResolveCompactionParams, *, actor: OperatorActor
    ) -> Compaction | PendingCompaction:
        """Step one of `resolve` (a step, as `begin` is): the abandoned compaction, or the retry
        to run."""
        params = step
        built: list[Summarizer] = []

        def check(name: SummarizerName) -> None:
            built.append(_summarizer(name, params, self.environ)[0])

        begun = service.resolve(
            self._rutter.store,
            params.operation_key,
            params.action,
            actor=actor,
            estimate=ESTIMATOR.estimate,
            check=check,
        )
        if isinstance(begun, Compaction):
            return begun
        return PendingCompaction(begun, built[0])

    def run(self, pending: PendingCompaction) -> Compaction:
        """Call the summarizer, then store its summary (`complete`), on this thread."""
        try:
            output = pending.summarize()
        except BaseException as error:
            self.abandon_call(pending, error)
            raise
        return self.complete(pending, output)

    def complete(self, pending: PendingCompaction, output: str) -> Compaction:
        """Store the summary and the compaction marker in one transaction (`thread_changed`
        when a message arrived meanwhile; `summarizer_failed` for a blank summary)."""
        try:
            return service.finish(self._rutter.store, pending.started, output)
        except BaseException as error:
            self.abandon_call(pending, error)
            raise

    def abandon_call(self, pending: PendingCompaction, error: BaseException) -> None:
        """Record why the summarizer's call gave no summary: a summarizer's failure is stored
        `failed`; a typed error from storing was recorded already (`thread_changed`) or
        found the operation resolved meanwhile; anything else (an interrupt, a bug, a server
        shutting down) leaves whether it answered unknown, so the operation waits for an
        operator (`pending_verification`) instead of looking like it still runs."""
        if isinstance(error, SummarizerFailed):
            service.fail(self._rutter.store, pending.started, "summarizer_failed")
        elif not isinstance(error, RutterError):
            service.mark_pending(self._rutter.store, pending.started)


__all__ = [
    "Announce",
    "CompactParams",
    "Compaction",
    "CompactionOperations",
    "PendingCompaction",
    "ResolveCompactionParams",
]
