"""An entry made ready to store: plain text, redacted, bounded, never refused.

A transcript is the agent's, not the person's input: a message is never refused for its text.
Terminal escape sequences (colours, cursor moves, window titles: ECMA-48 CSI, OSC and two-byte
escapes, and the `\ufffd[2m` a transcript holds where the ESC byte was lost on the way and
replaced by U+FFFD) are removed: they are how a terminal drew tool output, not its text.
CRLF and CR become LF; other control characters than newline and tab, and unpaired surrogates,
become U+FFFD (what `continuity.policy.clean_text` refuses, replaced instead: the stored text
obeys the same rules). Text is redacted with the one engine (`rutter_core.discovery.redaction`)
and then bounded at the 64 KiB of a message (docs/reference/continuity.md): a longer one (tool
outputs often are) keeps its beginning and ends with the marker `[truncated by rutter: kept K of N
bytes]`, and the import's answer names it.

Order matters for secrets. Redaction runs before the final cut, so a secret is never cut into a
piece the engine no longer recognises. To bound the engine's work, a text over 256 KiB is first
cut to 256 KiB at a white-space boundary (tokens contain none; private-key blocks are matched
from their header); whatever lies past the final 64 KiB cut is dropped after redaction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from rutter_core.continuity.model import MAX_MESSAGE_BYTES, Injected, Role
from rutter_core.continuity.policy import require_external_id
from rutter_core.continuity.transcripts.records import Entry
from rutter_core.discovery.redaction import redact
from rutter_core.kernel.errors import RejectedError

PRE_REDACTION_BYTES: Final = 4 * MAX_MESSAGE_BYTES
_MARKER: Final = "\n[truncated by rutter: kept {kept} of {total} bytes]"
_MARKER_ROOM: Final = 80
_SLACK: Final = 1024
"""Room left for markers that a second redaction pass might make longer than what they
replace."""
_NOT_PLAIN: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
_TERMINAL_ESCAPE: Final = re.compile(
    "(?:\x1b\\[|\x9b)[0-?]*[ -/]*[@-~]"  # CSI: colours, erasing, cursor moves
    "|(?:\x1b\\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\\\|\x9c)?"  # OSC: titles, links
    "|\x1b[()*+#%][0-~]|\x1b[=>78]"  # charset choice, keypad mode, cursor save/restore
    "|\ufffd\\[[0-9;?]*[A-HJKSTfhlmsu]"  # CSI whose ESC was lost and became U+FFFD
)


@dataclass(frozen=True, slots=True)
class Prepared:
    line: int
    external_id: str
    role: Role
    text: str
    """Stored as it is: plain, redacted, at most 64 KiB of UTF-8."""
    injected: Injected | None
    redacted: bool
    created_at: str | None
    original_bytes: int | None
    """The text's size before it was cut, when it was cut."""


def prepare_entry(entry: Entry, external_id: str) -> Prepared | None:
    """The entry as it will be stored under `external_id`; None when the ID cannot be one (not
    printable, too long, or shaped like a secret: IDs are stored as they are)."""
    try:
        checked = require_external_id(external_id)
    except RejectedError:
        return None
    assert checked is not None
    text, redacted, original = prepare_text(entry.text)
    return Prepared(
        line=entry.line,
        external_id=checked,
        role=entry.role,
        text=text,
        injected=entry.injected,
        redacted=redacted,
        created_at=entry.timestamp,
        original_bytes=original,
    )


def prepare_text(text: str) -> tuple[str, bool, int | None]:
    """(stored text, whether a secret was redacted, original size when it was cut)."""
    plain = _NOT_PLAIN.sub(
        "\ufffd", strip_terminal_escapes(text).replace("\r\n", "\n").replace("\r", "\n")
    )
    total = len(plain.encode("utf-8"))
    cut = total > MAX_MESSAGE_BYTES
    if total > PRE_REDACTION_BYTES:
        plain = _cut_at_space(plain, PRE_REDACTION_BYTES)
    found = redact(plain)
    if not cut and len(found.text.encode("utf-8")) <= MAX_MESSAGE_BYTES:
        return found.text, found.redacted, None
    limit = MAX_MESSAGE_BYTES - _MARKER_ROOM - _SLACK
    while True:
        # Redacted again: a cut can make its last line read as a secret (`name: value` now
        # ends its line), and markers can be longer than what they replace.
        again = redact(_cut(found.text, limit))
        body = again.text + _MARKER.format(kept=len(again.text.encode("utf-8")), total=total)
        if len(body.encode("utf-8")) <= MAX_MESSAGE_BYTES:
            return body, found.redacted or again.redacted, total
        limit -= 8 * _SLACK


def strip_terminal_escapes(text: str) -> str:
    """The text without terminal escape sequences (see the module's docstring)."""
    if "\x1b" not in text and "\ufffd[" not in text and "\x9b" not in text and "\x9d" not in text:
        return text
    return _TERMINAL_ESCAPE.sub("", text)


def _cut_at_space(text: str, max_bytes: int) -> str:
    head = text.encode("utf-8")[:max_bytes].decode("utf-8", errors="ignore")
    space = max(head.rfind(" "), head.rfind("\n"), head.rfind("\t"))
    return head[:space] if space > len(head) // 2 else head


def _cut(text: str, max_bytes: int) -> str:
    head = text.encode("utf-8")[:max_bytes].decode("utf-8", errors="ignore")
    opened = head.rfind("[REDACTED:")
    if opened >= 0 and head.find("]", opened) < 0:
        head = head[:opened]  # never half a marker
    return head


__all__ = [
    "PRE_REDACTION_BYTES",
    "Prepared",
    "prepare_entry",
    "prepare_text",
    "strip_terminal_escapes",
]
