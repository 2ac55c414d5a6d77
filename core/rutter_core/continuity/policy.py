"""What a thread's content may be: roles, kinds, sources, external IDs, IDs, and text (bounded,
plain, redacted per docs/reference/redaction.md).

Text goes through the one redaction engine (`rutter_core.discovery.redaction`) and is stored
redacted: a transcript is kept, with every secret replaced by `[REDACTED:<kind>]`. Every refusal
is a typed `RejectedError` (exit 3) naming the field, never echoing the text itself: errors are
printed and logged, and the text may hold anything.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Final

from rutter_core.continuity.model import (
    IMPORT_PREFIX,
    MAX_EXTERNAL_ID_BYTES,
    MAX_LIST_LIMIT,
    NOTE_KINDS,
    ROLES,
    SURFACE_SOURCES,
    NoteKind,
    Role,
)
from rutter_core.discovery.redaction import redact
from rutter_core.kernel.errors import Hint, NotFoundError, RejectedError, UsageError
from rutter_core.kernel.text import require_readable

_ULID = "[0-9A-HJKMNP-TV-Z]{26}"
THREAD_ID: Final = re.compile(f"thr_{_ULID}")
NOTE_ID: Final = re.compile(f"note_{_ULID}")
NODE_ID: Final = re.compile(f"node_{_ULID}")
_AGENT: Final = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")


@dataclass(frozen=True, slots=True)
class CleanText:
    """Text as it is stored: normalised, checked, redacted, bounded."""

    text: str
    redacted: bool


def clean_text(
    field: str, text: object, *, max_bytes: int, one_line: bool = False, readable: bool = False
) -> CleanText:
    """`text` normalised (CRLF and CR to LF), non-blank, without control characters other than
    newline and tab (none at all when `one_line`), redacted, and at most `max_bytes` UTF-8
    bytes both before redaction (bounded work) and after it (markers can be longer than what
    they replace). `readable`: text a person reads before it takes effect (a pin, a proposal,
    a checkpoint's title and summary), which must also hold no bidirectional or invisible
    character (`kernel.text.require_readable`, `control_character`)."""
    if not isinstance(text, str):
        raise RejectedError("invalid_text", f"the {field} must be text", details={"field": field})
    normal = text.replace("\r\n", "\n").replace("\r", "\n")
    if one_line:
        normal = normal.strip()
    _bounded(field, normal, max_bytes)
    if not normal.strip():
        raise RejectedError(
            "invalid_text", f"the {field} is empty or blank", details={"field": field}
        )
    allowed = "\t" if one_line else "\n\t"
    if readable:
        if one_line and "\n" in normal:
            raise RejectedError(
                "invalid_text", f"the {field} must be one line", details={"field": field}
            )
        require_readable(field, normal, allowed=allowed)
    for offset, char in enumerate(normal):
        if char not in allowed and unicodedata.category(char) == "Cc":
            what = "one line of text" if one_line else "text with newlines and tabs"
            raise RejectedError(
                "invalid_text",
                f"the {field} contains the control character U+{ord(char):04X} at offset "
                f"{offset}; it must be {what}, without other control characters",
                details={"field": field, "codepoint": f"U+{ord(char):04X}", "offset": offset},
            )
    found = redact(normal)
    _bounded(field, found.text, max_bytes, redacted=True)
    return CleanText(found.text, found.redacted)


def _bounded(field: str, text: str, max_bytes: int, *, redacted: bool = False) -> None:
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError as exc:  # a lone surrogate, e.g. "\ud800" sent as JSON
        raise RejectedError(
            "invalid_text",
            f"the {field} is not valid Unicode text (an unpaired surrogate at offset "
            f"{exc.start}); send UTF-8 text",
            details={"field": field, "offset": exc.start},
        ) from exc
    if size > max_bytes:
        after = " once its secrets are replaced by markers" if redacted else ""
        raise RejectedError(
            "text_too_large",
            f"the {field} is {size} bytes{after}; the limit is {max_bytes} bytes (UTF-8)",
            details={"field": field, "bytes": size, "max_bytes": max_bytes},
        )


def require_role(role: object) -> Role:
    for known in ROLES:
        if role == known:
            return known
    raise RejectedError(
        "invalid_role",
        f"a message's role is one of {', '.join(ROLES)}",
        details={"allowed": list(ROLES)},
    )


def require_kind(kind: object) -> NoteKind:
    for known in NOTE_KINDS:
        if kind == known:
            return known
    raise RejectedError(
        "invalid_kind",
        f"a note's kind is one of {', '.join(NOTE_KINDS)}",
        details={"allowed": list(NOTE_KINDS)},
    )


def require_source(source: object) -> str:
    """A message's provenance: a surface (`cli`, `lsp`, `mcp`, `http`) or `import:<agent>`.
    Set by the surface itself, never by a client: a bad one is a bug in the caller."""
    if isinstance(source, str):
        if source in SURFACE_SOURCES:
            return source
        agent = source.removeprefix(IMPORT_PREFIX)
        if agent != source and _AGENT.fullmatch(agent) is not None:
            return source
    raise RejectedError(
        "invalid_source",
        "a message's source is cli, lsp, mcp, http or import:<agent> (agent: 1-64 of a-z, "
        "0-9, '.', '_', '-')",
        details={"allowed": [*SURFACE_SOURCES, "import:<agent>"]},
    )


def require_external_id(external_id: object) -> str | None:
    """An external ID as given (exact: never trimmed), one line of printable text up to 256
    bytes, with no secret in it (it is stored and shown as it is)."""
    if external_id is None:
        return None
    if not isinstance(external_id, str) or not external_id or external_id != external_id.strip():
        raise RejectedError(
            "invalid_external_id",
            "an external ID is non-empty text without leading or trailing white space",
            details={"field": "external_id"},
        )
    try:
        size = len(external_id.encode("utf-8"))
    except UnicodeEncodeError:
        size = MAX_EXTERNAL_ID_BYTES + 1
    printable = all(unicodedata.category(char)[0] != "C" for char in external_id)
    if size > MAX_EXTERNAL_ID_BYTES or not printable:
        raise RejectedError(
            "invalid_external_id",
            f"an external ID is at most {MAX_EXTERNAL_ID_BYTES} bytes of printable UTF-8 text",
            details={"field": "external_id", "max_bytes": MAX_EXTERNAL_ID_BYTES},
        )
    if redact(external_id).redacted:
        raise RejectedError(
            "invalid_external_id",
            "the external ID looks like a secret; IDs are stored as they are, never redacted",
            details={"field": "external_id"},
        )
    return external_id


def _require_id(
    value: object, pattern: re.Pattern[str], *, code: str, noun: str, prefix: str, hint: str
) -> str:
    """An ID of the right form; anything else names nothing (`code`, not found)."""
    if isinstance(value, str) and pattern.fullmatch(value) is not None:
        return value
    raise NotFoundError(
        code,
        f"no such {noun}: a {noun.rsplit(maxsplit=1)[-1]} ID is {prefix} followed by 26 ULID "
        "characters",
        hint=Hint(hint),
    )


def require_thread_id(thread_id: object) -> str:
    return _require_id(
        thread_id, THREAD_ID, code="thread_not_found", noun="thread", prefix="thr_",
        hint="find_thread",
    )  # fmt: skip


def require_note_id(note_id: object) -> str:
    return _require_id(
        note_id, NOTE_ID, code="note_not_found", noun="note", prefix="note_", hint="find_note"
    )


def require_node_id(node_id: object) -> str:
    return _require_id(
        node_id, NODE_ID, code="not_found", noun="continuity node", prefix="node_",
        hint="find_node",
    )  # fmt: skip


def require_version(version: object) -> int:
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise UsageError(
            "invalid_version",
            "a version is a whole number from 1 (the note's version as last read)",
        )
    return version


def require_limit(limit: object) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIST_LIMIT:
        raise UsageError(
            "invalid_limit",
            f"a limit is a whole number from 1 to {MAX_LIST_LIMIT}",
            details={"max": MAX_LIST_LIMIT},
        )
    return limit


def require_position(before_seq: object) -> int | None:
    if before_seq is None:
        return None
    if isinstance(before_seq, bool) or not isinstance(before_seq, int) or before_seq < 1:
        raise UsageError("invalid_position", "a message position (seq) is a whole number from 1")
    return before_seq
