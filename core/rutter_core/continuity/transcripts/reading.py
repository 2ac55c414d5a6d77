"""A transcript read line by line into neutral entries, whole or as it grows: the JSON Lines
splitter, the agent's parser, the conversation the entries make (`conversation`: what the agent
undid is left out), and the tally of what was skipped or left out. Pure: bytes in, entries out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from rutter_core.continuity.transcripts import claude_code, codex
from rutter_core.continuity.transcripts.conversation import ClaudeTree, CodexTurns, Conversation
from rutter_core.continuity.transcripts.jsonl import LineSplitter, decode_line
from rutter_core.continuity.transcripts.records import (
    Agent,
    Entry,
    LineOutcome,
    OmitReason,
    SkipReason,
)
from rutter_core.kernel.errors import RejectedError

MAX_REPORTED_SKIPS: Final = 1000
"""Skipped lines named in an answer; the total is always counted."""
_UTF8_BOM: Final = b"\xef\xbb\xbf"


LineParser = Callable[[dict[str, Any], int], LineOutcome]


@dataclass(frozen=True, slots=True)
class _Format:
    parser: Callable[[], LineParser]
    """A new parser for one transcript (Claude Code's remembers whether the file is a
    sub-agent's)."""
    scoped_ids: bool
    """Whether the agent's IDs are unique only within its session (then the session ID is
    their prefix)."""
    conversation: Callable[[], Conversation]
    """How the agent's own undoing (rewinds, rollbacks) is read."""


FORMATS: Final[dict[Agent, _Format]] = {
    "claude-code": _Format(claude_code.Parser, scoped_ids=False, conversation=ClaudeTree),
    "codex": _Format(lambda: codex.parse_line, scoped_ids=True, conversation=CodexTurns),
}


@dataclass(frozen=True, slots=True)
class SkippedLine:
    line: int
    reason: SkipReason


class TranscriptReader:
    """Feeds bytes in order; `take` answers the entries of the conversation among the complete
    lines read so far that it did not answer before."""

    def __init__(self, agent: Agent, path: str) -> None:
        self.agent = agent
        self.path = path
        self._format = FORMATS[agent]
        self._parse = self._format.parser()
        self._conversation = self._format.conversation()
        self._splitter = LineSplitter()
        self._started = False
        self.session_id: str | None = None
        self.cwd: str | None = None
        self.skipped: list[SkippedLine] = []
        self.skipped_total = 0
        self.omitted: Counter[OmitReason] = Counter()
        self._decoded = 0
        self._undecodable = 0

    @property
    def lines(self) -> int:
        """Lines read, the partial last one included."""
        return self._splitter.pending_line() or self._splitter.lines_done

    @property
    def left_out(self) -> Counter[OmitReason]:
        """Everything left out on purpose so far, by reason (what the agent undid included)."""
        return self.omitted + self._conversation.left_out()

    def take(self) -> list[Entry]:
        return self._conversation.take()

    def feed(self, data: bytes) -> list[Entry]:
        """Read bytes; answers every entry their complete lines hold, as parsed (which of them
        the conversation keeps is `take`'s answer)."""
        if not self._started and data:
            self._started = True
            data = data.removeprefix(_UTF8_BOM)
        parsed: list[Entry] = []
        for raw in self._splitter.feed(data):
            value = decode_line(raw.data)
            if value is None:
                continue
            if isinstance(value, str):
                if value in ("invalid_utf8", "nul_byte"):
                    self._undecodable += 1
                self._skip(raw.number, value)
                continue
            self._decoded += 1
            outcome = self._parse(value, raw.number)
            if outcome.problem is not None:
                self._skip(raw.number, outcome.problem)
                continue
            if self.session_id is None and outcome.session_id is not None:
                self.session_id = outcome.session_id
            if self.cwd is None and outcome.cwd is not None:
                self.cwd = outcome.cwd
            self.omitted.update(outcome.omitted)
            self._conversation.add(outcome)
            parsed.extend(outcome.entries)
        return parsed

    def finish(self) -> None:
        """The end of what will be read: a last line without its newline is `truncated`."""
        pending = self._splitter.pending_line()
        if pending is not None:
            self._skip(pending, "truncated")
        self.require_text()

    def external_id(self, entry: Entry) -> str:
        if self._format.scoped_ids and self.session_id is not None:
            return f"{self.session_id}/{entry.local_id}"
        return entry.local_id

    def skip(self, line: int, reason: SkipReason) -> None:
        self._skip(line, reason)

    def require_text(self) -> None:
        """Fail closed on a file that is not UTF-8 text at all (every line read that is not
        blank is undecodable), rather than report each of its lines. Checked once everything
        available was read."""
        if self._decoded == 0 and self._undecodable > 0:
            raise RejectedError(
                "transcript_not_utf8",
                "the transcript is not UTF-8 JSON Lines: no line of it decodes as UTF-8 text",
                path=self.path,
            )

    def _skip(self, line: int, reason: SkipReason) -> None:
        self.skipped_total += 1
        if len(self.skipped) < MAX_REPORTED_SKIPS:
            self.skipped.append(SkippedLine(line, reason))


__all__ = ["FORMATS", "MAX_REPORTED_SKIPS", "SkippedLine", "TranscriptReader"]
