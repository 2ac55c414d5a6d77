"""Importing an agent's own transcript into a thread (issue 15, docs/reference/transcripts.md): one
params model, the answer, and `TranscriptOperations` (`Rutter(store, reader).transcripts`).

The file is read first (`continuity.transcripts.source`, the one place that opens it) and every
message made storable (redacted, bounded) before the write lock is taken; then one write
transaction binds the thread and appends what is new. A one-shot import stores everything or
nothing. `follow` (`--watch`) stores each poll's complete lines in a transaction of their own,
polling at an interval between 0.2 s and 2 s (shorter while lines arrive), until `stop` is set;
then it reads what is left once more and answers the same document for the whole run, a last
line still without its newline reported `truncated`.

Which thread: the one that holds the agent's session already (a re-import), else the chosen
`thread_id`, else a new thread of the workspace: the given one, else the registered workspace
that contains the directory the transcript was recorded in (its `cwd`), else the one containing
the surface's directory.

`create_run` gives the thread a run in the same step, once the messages are stored: the
thread's newest run when it has one already (so repeating the import answers the same run),
else a new run continuing the thread (`runs.create` with the thread), its instructions pinned
from the workspace root. The import is stored first: a run that cannot be created (its
instructions fail closed, say) is an error that leaves the import in place, and repeating the
command adds no message and creates the run.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Final, get_args

from pydantic import Field, StrictBool, StrictStr

from rutter_core.app.models import NullMeansAbsent, Result, allowed
from rutter_core.app.runs import CreateRunParams
from rutter_core.continuity.service import require_external_id, require_thread_id, runs_of_thread
from rutter_core.continuity.transcripts import service
from rutter_core.continuity.transcripts.prepare import Prepared, prepare_entry
from rutter_core.continuity.transcripts.reading import TranscriptReader
from rutter_core.continuity.transcripts.records import (
    AGENTS,
    Agent,
    OmitReason,
    SkipReason,
)
from rutter_core.continuity.transcripts.source import TranscriptFile
from rutter_core.kernel.actors import OperatorActor
from rutter_core.kernel.clock import now_rfc3339
from rutter_core.kernel.errors import Hint, RejectedError, UsageError
from rutter_core.workspaces.service import (
    files_here,
    infer_workspace,
    location_of,
    project_workspace_ids,
    require_workspace,
)

if TYPE_CHECKING:
    from rutter_core.app.facade import Rutter

MIN_POLL_SECONDS: Final = 0.2
MAX_POLL_SECONDS: Final = 2.0
MAX_REPORTED_TRUNCATIONS: Final = 1000
OMIT_REASONS: Final[tuple[OmitReason, ...]] = get_args(OmitReason)


# Checked when the import starts (`invalid_agent`); stated in the schemas.
AgentName = Annotated[StrictStr, allowed(Agent)]


class ImportTranscriptParams(NullMeansAbsent):
    agent: AgentName = Field(description="whose transcript: claude-code or codex")
    path: StrictStr = Field(description="the transcript file (JSON Lines)")
    workspace_id: StrictStr | None = Field(
        None, description="the workspace of a new thread (default: the one the transcript ran in)"
    )
    thread_id: StrictStr | None = Field(
        None, description="import into this thread (default: the transcript's, or a new one)"
    )
    create_run: StrictBool = Field(
        False,
        description="give the thread a run: its newest one, else a new run continuing it",
    )
    goal: StrictStr | None = Field(
        None, description="the goal of the run create_run creates (default: names the session)"
    )


class SkippedTranscriptLine(Result):
    line: int
    reason: SkipReason
    """invalid_utf8, nul_byte, invalid_json, not_an_object, unexpected_shape, invalid_id,
    line_too_long, nesting_too_deep (over 64 levels) or truncated (a last line without its
    newline)."""


class TruncatedTranscriptMessage(Result):
    line: int
    external_id: str
    original_bytes: int
    """The message's size before it was cut to fit 64 KiB (UTF-8 bytes)."""


class TranscriptImport(Result):
    """`session import`: what went where, and what was skipped or left out."""

    agent: Agent
    thread_id: str
    workspace_id: str
    session_id: str
    """The agent's own session ID (how a re-import finds the thread)."""
    thread_created: bool
    run_id: str | None
    """With `create_run`: the run working in the thread (None without it)."""
    run_created: bool
    """Whether this import created that run (False: the thread's newest run already was)."""
    imported: int
    """Messages stored by this import."""
    already_present: int
    """Messages of the transcript the thread held already (not stored again)."""
    redacted: int
    """Stored messages in which a secret was replaced by a marker."""
    truncated: tuple[TruncatedTranscriptMessage, ...]
    omitted: dict[OmitReason, int]
    """Parts left out on purpose, by reason: reasoning, sidechain, metadata, empty, abandoned
    (messages of a Claude Code branch the person rewound away from), rolled_back (messages of
    turns Codex rolled back)."""
    skipped: tuple[SkippedTranscriptLine, ...]
    """Malformed lines, by number and reason (never their content); the first 1000."""
    skipped_total: int
    lines: int


class _Run:
    """One import (or one `--watch`): the reader, the thread once bound, and the tallies."""

    def __init__(
        self, rutter: Rutter, params: ImportTranscriptParams, actor: OperatorActor,
        cwd: Path | None,
    ) -> None:  # fmt: skip
        self.rutter = rutter
        self.params = params
        self.agent = _agent(params.agent)
        self.source = f"import:{self.agent}"
        self.actor = actor
        self.cwd = cwd
        self.reader = TranscriptReader(self.agent, params.path)
        self.ready: list[Prepared] = []
        self.present: set[str] | None = None
        self.workspace_id: str | None = None
        self.thread_id: str | None = None
        self.thread_created = False
        self.run_id: str | None = None
        self.run_created = False
        self.imported = 0
        self.already = 0
        self.redacted = 0
        self.truncated: list[TruncatedTranscriptMessage] = []
        if params.thread_id is not None:
            require_thread_id(params.thread_id)
        if params.goal is not None and not params.create_run:
            raise UsageError(
                "goal_without_run",
                "a goal names the run that create_run creates; ask for the run too",
            )

    def take(self, data: bytes) -> None:
        """Read bytes (their messages are made storable when stored: a later line can still
        undo them)."""
        self.reader.feed(data)

    def _prepare(self, session: str) -> None:
        """Make the conversation's new messages storable, except those the thread holds already
        (never redacted again)."""
        if self.present is None:
            self.present = self._present(session)
        for entry in self.reader.take():
            external_id = self.reader.external_id(entry)
            if external_id in self.present:
                self.already += 1
                continue
            self.present.add(external_id)
            prepared = prepare_entry(entry, external_id)
            if prepared is None:
                self.reader.skip(entry.line, "invalid_id")
            else:
                self.ready.append(prepared)

    def _present(self, session: str) -> set[str]:
        """The external IDs the transcript's thread (or the chosen one) holds already."""
        with self.rutter.store.read() as conn:
            known = service.known_thread(conn, self.source, session)
            if known is None and self.params.thread_id is not None:
                known = service.thread_in(conn, self.params.thread_id)
            if known is None:
                return set()
            return service.present_ids(conn, known.thread_id, self.source)

    def session_id(self) -> str:
        session = self.reader.session_id
        if session is None:
            raise RejectedError(
                "transcript_without_session",
                f"no line of the file names a {self.agent} session: it is empty, or not a "
                f"{self.agent} transcript",
                path=self.params.path,
            )
        try:
            require_external_id(session)
        except RejectedError as exc:
            raise RejectedError(
                "transcript_invalid_session",
                "the transcript's session ID cannot be stored: it is not printable text of at "
                "most 256 bytes, or looks like a secret",
                path=self.params.path,
            ) from exc
        return session

    def store(self) -> bool:
        """Store what is ready (one write transaction); True when something was."""
        session = self.session_id()
        if self.workspace_id is None:
            self.workspace_id = self._workspace(session)
        self._prepare(session)
        if self.thread_id is not None and not self.ready:
            return False
        now = now_rfc3339()
        with self.rutter.store.write() as conn:
            if self.thread_id is None:
                require_workspace(conn, self.workspace_id)
            thread_id, created = service.bind_thread(
                conn, source=self.source, session_id=session,
                chosen_thread=self.params.thread_id, workspace_id=self.workspace_id,
                actor=self.actor, now=now,
            )  # fmt: skip
            stored, already = service.append_messages(
                conn, thread_id, self.source, self.ready, now=now
            )
        self.thread_id = self.thread_id or thread_id
        self.thread_created = self.thread_created or created
        self.imported += len(stored)
        self.already += already
        self.redacted += sum(1 for message in stored if message.redacted)
        for message in stored:
            if (
                message.original_bytes is not None
                and len(self.truncated) < MAX_REPORTED_TRUNCATIONS
            ):
                self.truncated.append(
                    TruncatedTranscriptMessage(
                        line=message.line,
                        external_id=message.external_id,
                        original_bytes=message.original_bytes,
                    )
                )
        self.ready.clear()
        return bool(stored)

    def _workspace(self, session: str) -> str:
        """`_chosen_workspace`; with `create_run`, whose new run reads files here, checked
        before anything is stored: a registration of another machine named is refused
        (`workspace_on_other_machine`), one chosen for the thread is replaced by this
        machine's registration of its project (refused when there is none)."""
        chosen = self._chosen_workspace(session)
        if not self.params.create_run:
            return chosen
        named = self.params.workspace_id is not None
        with self.rutter.store.read() as conn:
            return files_here(conn, chosen, self.rutter.machine_id, named=named).workspace_id

    def _chosen_workspace(self, session: str) -> str:
        """The registration the import works through. For a thread that exists (a re-import,
        or `thread_id`): the given workspace, which must be a location of the thread's project
        (`thread_in_other_workspace` otherwise), else the registration on this machine around
        the transcript's or the surface's directory when it is one, else the thread's own
        location. For a new thread: the given workspace, else the one around those
        directories."""
        params = self.params
        store = self.rutter.store
        with store.read() as conn:
            known = service.known_thread(conn, self.source, session)
            if known is None and params.thread_id is not None:
                known = service.thread_in(conn, params.thread_id)
            if known is not None:
                members = project_workspace_ids(conn, known.workspace_id)
                if params.workspace_id is not None:
                    if params.workspace_id not in members:
                        raise RejectedError(
                            "thread_in_other_workspace",
                            f"thread {known.thread_id} belongs to another project than "
                            f"workspace {params.workspace_id!r}; leave the workspace out, or "
                            "give a registration of the thread's project",
                            details={
                                "thread_id": known.thread_id,
                                "workspace_id": known.workspace_id,
                            },
                        )
                    return require_workspace(conn, params.workspace_id).workspace_id
            elif params.workspace_id is not None:
                return require_workspace(conn, params.workspace_id).workspace_id
        here = self._around()
        if known is None:
            if here is None:
                raise UsageError(
                    "workspace_required",
                    "no workspace registered on this machine contains the directory the transcript "
                    "was recorded in, nor the current directory",
                    hint=Hint("choose_workspace"),
                )
            return here
        if here is not None and here in members:
            return here
        with store.read() as conn:
            return location_of(conn, known.workspace_id, self.rutter.machine_id).workspace_id

    def _around(self) -> str | None:
        """This machine's registration around the transcript's directory, else around the
        surface's, else None."""
        for directory in (self.reader.cwd, None if self.cwd is None else str(self.cwd)):
            if directory is None or "\x00" in directory or not Path(directory).is_absolute():
                continue
            try:
                return infer_workspace(
                    self.rutter.store, Path(directory), machine=self.rutter.machine_id
                ).workspace_id
            except (UsageError, OSError, ValueError):
                continue
        return None

    def give_run(self) -> None:
        """With `create_run`: the thread's newest run, else a new run continuing the thread."""
        if not self.params.create_run:
            return
        assert self.thread_id is not None
        assert self.workspace_id is not None
        with self.rutter.store.read() as conn:
            runs = runs_of_thread(conn, self.thread_id)
        if runs:
            self.run_id = runs[0]
            return
        goal = self.params.goal or f"Continue the {self.agent} session {self.session_id()}"
        created = self.rutter.runs.create(
            CreateRunParams(goal=goal, workspace_id=self.workspace_id, thread_id=self.thread_id),
            actor=self.actor,
            cwd=self.cwd,
        )
        self.run_id, self.run_created = created.run_id, True

    def result(self) -> TranscriptImport:
        assert self.thread_id is not None
        assert self.workspace_id is not None
        return TranscriptImport(
            agent=self.agent,
            thread_id=self.thread_id,
            workspace_id=self.workspace_id,
            session_id=self.session_id(),
            thread_created=self.thread_created,
            run_id=self.run_id,
            run_created=self.run_created,
            imported=self.imported,
            already_present=self.already,
            redacted=self.redacted,
            truncated=tuple(self.truncated),
            omitted={reason: self.reader.left_out[reason] for reason in OMIT_REASONS},
            skipped=tuple(
                SkippedTranscriptLine(line=skip.line, reason=skip.reason)
                for skip in self.reader.skipped
            ),
            skipped_total=self.reader.skipped_total,
            lines=self.reader.lines,
        )


def _agent(agent: str) -> Agent:
    for known in AGENTS:
        if agent == known:
            return known
    raise UsageError(
        "invalid_agent",
        f"transcripts are imported from {' or '.join(AGENTS)}",
        details={"allowed": list(AGENTS)},
    )


class TranscriptOperations:
    def __init__(self, rutter: Rutter) -> None:
        self._rutter = rutter

    def import_transcript(
        self, params: ImportTranscriptParams, *, actor: OperatorActor, cwd: Path | None = None
    ) -> TranscriptImport:
        """Import the whole file as it is now, in one transaction."""
        run = _Run(self._rutter, params, actor, cwd)
        with TranscriptFile(params.path) as transcript:
            while chunk := transcript.read_available():
                run.take(chunk)
        run.reader.finish()
        run.store()
        run.give_run()
        return run.result()

    def follow(
        self,
        params: ImportTranscriptParams,
        *,
        actor: OperatorActor,
        stop: threading.Event,
        cwd: Path | None = None,
        on_progress: Callable[[TranscriptImport], None] | None = None,
    ) -> TranscriptImport:
        """Import the file and then what is appended to it, until `stop` is set."""
        run = _Run(self._rutter, params, actor, cwd)
        interval = MIN_POLL_SECONDS
        with TranscriptFile(params.path) as transcript:
            while True:
                stopping = stop.is_set()
                arrived = False
                while chunk := transcript.read_available():
                    arrived = True
                    run.take(chunk)
                run.reader.require_text()
                if run.reader.session_id is not None and run.store() and on_progress:
                    on_progress(run.result())
                if stopping:
                    break
                transcript.require_unchanged()
                interval = MIN_POLL_SECONDS if arrived else min(interval * 2, MAX_POLL_SECONDS)
                stop.wait(interval)
        run.reader.finish()
        run.store()
        run.give_run()
        return run.result()


__all__ = [
    "ImportTranscriptParams",
    "SkippedTranscriptLine",
    "TranscriptImport",
    "TranscriptOperations",
    "TruncatedTranscriptMessage",
]
