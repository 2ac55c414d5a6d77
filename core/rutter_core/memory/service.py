"""Explicit user and project long-term memory (`context_memory.v1`, contract section 9).

Only an operator surface writes memory: every write names its `actor`, which the surface sets
itself ("cli", "lsp", later "http_control"); anything else is refused here and by the store's
CHECK constraints. Title and content go through the one redaction engine: a secret is refused
unless the operator asks for the redacted text to be stored (`redact_sensitive`), and a record
once redacted stays marked so. References (and the file content is imported from) that name a
sensitive source (.env files, credential and secret stores, private keys, stdin, terminal
input, keystrokes) are refused whatever the options.

Every change names the version it was read at and runs as `UPDATE ... WHERE id = ? AND
version = ?` inside one write transaction: a stale version is a conflict that states the
current version, a missing memory is not found, never the same answer for both. Delete is
physical: the row goes, SQLite zeroes its bytes (`secure_delete`) and the WAL is checkpointed
and truncated, so the text is in neither the database file nor its WAL afterwards. No history
table, no full-text index and no audit row keeps a title or a body.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import posixpath
import re
import stat
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path, PurePath
from typing import Any, Final, Literal, cast
from urllib.parse import unquote, urlsplit

from sqlalchemy import and_, delete, func, insert, or_, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.sql.elements import ColumnElement

from rutter_core.discovery.redaction import redact
from rutter_core.kernel.actors import OPERATOR_ACTORS, OperatorActor, is_operator_actor
from rutter_core.kernel.clock import rfc3339, utc_now
from rutter_core.kernel.errors import ConflictError, NotFoundError, RejectedError, UsageError
from rutter_core.kernel.ids import new_id
from rutter_core.store import Store
from rutter_core.store.schema import memories as memories_table
from rutter_core.store.schema import workspaces as workspaces_table

PROTOCOL_VERSION: Final = "context_memory.v1"
EXPORT_PROTOCOL_VERSION: Final = "context_memory_export.v1"
USER_SCOPE_ID: Final = "local-user"

MAX_TITLE_BYTES: Final = 256
MAX_CONTENT_BYTES: Final = 16 * 1024
MAX_REFERENCES: Final = 32
MAX_REFERENCE_BYTES: Final = 512
DEFAULT_LIST_LIMIT: Final = 100
MAX_LIST_LIMIT: Final = 500
MAX_RETENTION_YEARS: Final = 10
RETENTION_NONE: Final = "none"
"""`retention` value that removes a memory's retention on edit."""

Scope = Literal["user", "project"]
Status = Literal["active", "disabled"]
SourceKind = Literal["operator_explicit", "operator_import_explicit"]
SCOPES: Final[tuple[Scope, ...]] = ("user", "project")
STATUSES: Final[tuple[Status, ...]] = ("active", "disabled")

_MEMORY_ID = re.compile(r"mem_[0-9A-HJKMNP-TV-Z]{26}")
_TIME_FORMAT: Final = "%Y-%m-%dT%H:%M:%SZ"
# Reading more than this many references is refused before any is normalised (bounded work).
_MAX_RAW_REFERENCES: Final = 1024


# -- the record -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MemoryRecord:
    """One memory as stored, plus `expired`, which is derived when it is read."""

    memory_id: str
    scope: Scope
    scope_id: str
    title: str
    content: str
    content_sha256: str
    status: Status
    source_kind: SourceKind
    references: tuple[str, ...]
    retention_until: str | None
    expired: bool
    redacted: bool
    created_by: OperatorActor
    updated_by: OperatorActor
    version: int
    created_at: str
    updated_at: str

    @property
    def workspace_id(self) -> str | None:
        return self.scope_id if self.scope == "project" else None

    def to_json(self) -> dict[str, Any]:
        """Exactly the fields of `context_memory.v1`."""
        return {
            "id": self.memory_id,
            "protocol_version": PROTOCOL_VERSION,
            "scope": self.scope,
            "scope_id": self.scope_id,
            "title": self.title,
            "content": self.content,
            "content_sha256": self.content_sha256,
            "status": self.status,
            "source_kind": self.source_kind,
            "references": list(self.references),
            "retention_until": self.retention_until,
            "expired": self.expired,
            "redacted": self.redacted,
            "created_by": self.created_by,
            "updated_by": self.updated_by,
            "version": self.version,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }


@dataclass(frozen=True, slots=True)
class MemoryList:
    items: tuple[MemoryRecord, ...]
    has_more: bool
    """More records matched than `limit`."""

    def to_json(self) -> dict[str, Any]:
        return {"items": [item.to_json() for item in self.items], "has_more": self.has_more}


@dataclass(frozen=True, slots=True)
class DeletedMemory:
    memory_id: str
    version: int
    purged: bool
    """The WAL checkpoint completed: no copy of the text is left in the database files.
    False only when another process held a read open for longer than the busy timeout; the
    next checkpoint (any later delete or edit, or the last connection closing) finishes it."""

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.memory_id,
            "version": self.version,
            "deleted": True,
            "recoverable": False,
            "purged": self.purged,
        }


@dataclass(frozen=True, slots=True)
class MemoryExport:
    exported_at: str
    scope: Scope
    scope_id: str
    items: tuple[MemoryRecord, ...]

    def to_json(self) -> dict[str, Any]:
        """`context_memory_export.v1`: memory is context, never a grant."""
        return {
            "protocol_version": EXPORT_PROTOCOL_VERSION,
            "exported_at": self.exported_at,
            "scope": self.scope,
            "scope_id": self.scope_id,
            "items": [item.to_json() for item in self.items],
            "capability_grant": False,
        }


@dataclass(frozen=True, slots=True)
class ContentFile:
    """Text read by `read_content_file`, and the path it came from (checked, not stored)."""

    text: str
    source_ref: str


# -- sensitive sources ----------------------------------------------------------------------------
# Matched on whole path segments and file names (case-folded), never on raw substrings:
# `docs/api.keys.md` and `secretary-notes.md` are fine, `config/.env.local` is not.

_TERMINAL_WHOLE: Final = frozenset(
    {
        "-",
        "stdin",
        "<stdin>",
        "tty",
        "pty",
        "terminal",
        "terminal input",
        "terminal-input",
        "keyboard",
        "keyboard input",
        "keystroke",
        "keystrokes",
        "keylog",
    }
)
_TERMINAL_SCHEMES: Final = frozenset({"stdin", "tty", "pty", "terminal", "keyboard", "keystrokes"})
# `conin$`: the Windows console's input (`\\.\CONIN$`).
_TERMINAL_STEMS: Final = frozenset(
    {"stdin", "<stdin>", "keystroke", "keystrokes", "keylog", "conin$"}
)
_DEVICE_NAMES: Final = frozenset({"stdin", "tty", "console", "pts", "fd", "ptmx"})
_SECRET_STORE_DIRS: Final = frozenset({".ssh", ".gnupg", ".password-store"})
_SECRET_STORE_STEMS: Final = frozenset(
    {"credentials", ".credentials", "secret", "secrets", ".secret", ".secrets"}
)
# A secret store in a data or config format; `secrets.md` (prose about secrets) is fine.
_STORE_FORMATS: Final = frozenset(
    {"", "json", "yaml", "yml", "toml", "ini", "xml", "txt", "cfg", "conf", "properties", "env"}
)
_CREDENTIAL_FILES: Final = frozenset(
    {
        ".netrc",
        "_netrc",
        ".pgpass",
        ".git-credentials",
        ".npmrc",
        ".pypirc",
        ".htpasswd",
        ".dockercfg",
    }
)
_CREDENTIAL_PAIRS: Final = frozenset({(".docker", "config.json"), (".kube", "config")})
_PRIVATE_KEY_NAMES: Final = frozenset(
    {"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk"}
)
_PRIVATE_KEY_SUFFIXES: Final = frozenset(
    {"pem", "key", "p12", "pfx", "kdbx", "ppk", "jks", "keystore", "keychain", "keychain-db"}
)
_URL_SCHEME = re.compile(r"([a-z][a-z0-9+.-]*):")

SensitiveKind = Literal["env_file", "credential_store", "private_key", "terminal_input"]

_SENSITIVE_WHAT: Final[dict[SensitiveKind, str]] = {
    "env_file": "an environment (.env) file",
    "credential_store": "a credential or secret store",
    "private_key": "a private key",
    "terminal_input": "stdin, terminal input or keystrokes",
}


def _segments(text: str) -> list[str]:
    """Path segments of a path, a `file://` URI or a URL (query and fragment dropped, the
    rest percent-decoded: `%2Eenv` is `.env`)."""
    if "://" in text:
        text = unquote(re.split(r"[?#]", text.split("://", 1)[1], maxsplit=1)[0])
    return [part for part in re.split(r"[/\\]+", text) if part not in ("", ".")]


def _local_device_segments(text: str) -> list[str] | None:
    """Segments of the absolute local path `text` names (a path or a `file:` URI), with `.`
    and `..` resolved lexically, so `/dev/../dev/tty` and `file:///proc/self/fd/0` are the
    devices they name; None when `text` names no absolute local path."""
    if text.startswith("file:"):
        path = unquote(urlsplit(text).path)
    elif text.startswith("/"):
        path = text
    else:
        return None
    return [part for part in posixpath.normpath("/" + path.lstrip("/")).split("/") if part]


def _segment_kind(name: str, parent: str | None) -> SensitiveKind | None:
    if name in _SECRET_STORE_DIRS or name in _CREDENTIAL_FILES:
        return "credential_store"
    if parent is not None and (parent, name) in _CREDENTIAL_PAIRS:
        return "credential_store"
    if name == ".env" or name.startswith(".env.") or name == ".envrc" or name.endswith(".env"):
        return "env_file"
    # Stem and suffix as for file names: a leading dot starts no suffix (`.secrets` has none).
    head, dot, tail = name[1:].rpartition(".")
    stem, suffix = (name[0] + head, tail) if dot else (name, "")
    if name.split(".", 1)[0] in _PRIVATE_KEY_NAMES:  # id_rsa, id_rsa.pub, id_ed25519.old ...
        return "private_key"
    if suffix in _PRIVATE_KEY_SUFFIXES:
        return "private_key"
    if stem in _SECRET_STORE_STEMS and suffix in _STORE_FORMATS:
        return "credential_store"
    if stem in _TERMINAL_STEMS or stem.endswith("_history"):
        return "terminal_input"  # shell and REPL histories are recorded terminal input
    return None


def sensitive_source_kind(reference: str) -> SensitiveKind | None:
    """What sensitive source `reference` names, if any (None: it names none)."""
    text = reference.strip().casefold()
    if text in _TERMINAL_WHOLE:
        return "terminal_input"
    scheme = _URL_SCHEME.match(text)
    if scheme is not None and scheme.group(1) in _TERMINAL_SCHEMES:
        return "terminal_input"
    segments = _segments(text)
    local = _local_device_segments(text)
    if local is not None and len(local) >= 2:
        device = local[1]
        if local[0] == "dev" and (device in _DEVICE_NAMES or device.startswith("tty")):
            return "terminal_input"
        if local[0] == "proc" and len(local) >= 3 and local[2] == "fd":
            return "terminal_input"
        if local[0] == "proc" and len(local) == 3 and local[2] == "environ":
            return "env_file"  # a process's environment: what .env files are loaded into
    parent: str | None = None
    for name in segments:
        kind = _segment_kind(name, parent)
        if kind is not None:
            return kind
        parent = name
    return None


def _shown(text: str) -> str:
    """`text` as an error may echo it: a refused reference can hold a credential too
    (`https://user:token@host/.env`), and errors are printed and logged."""
    return redact(text).text


def check_source_ref(reference: str, *, field: str = "reference") -> None:
    """Refuse a reference or source path that names a sensitive source (never redactable)."""
    kind = sensitive_source_kind(reference)
    if kind is not None:
        shown = _shown(reference)
        raise RejectedError(
            "sensitive_source",
            f"{field} {shown!r} names {_SENSITIVE_WHAT[kind]}; memory never records "
            "sensitive sources, with or without --redact-sensitive: remove it",
            details={"field": field, "reference": shown, "kind": kind},
        )


# -- text validation ------------------------------------------------------------------------------


def _utf8_size(field: str, text: str) -> int:
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError as exc:  # a lone surrogate, e.g. "\ud800" sent as JSON
        raise RejectedError(
            "invalid_text",
            f"{field} is not valid Unicode text (an unpaired surrogate at offset {exc.start}); "
            "send UTF-8 text",
            details={"field": field, "offset": exc.start},
        ) from exc


def _refuse_controls(field: str, text: str, *, allowed: str) -> None:
    for offset, char in enumerate(text):
        if char not in allowed and unicodedata.category(char) == "Cc":
            raise RejectedError(
                "control_character",
                f"{field} contains the control character U+{ord(char):04X} at offset {offset}; "
                "memory text may contain newlines and tabs but no other control characters",
                details={"field": field, "codepoint": f"U+{ord(char):04X}", "offset": offset},
            )


def _bounded(field: str, text: str, *, code: str, max_bytes: int) -> None:
    size = _utf8_size(field, text)
    if size > max_bytes:
        raise RejectedError(
            code,
            f"{field} is {size} bytes; the limit is {max_bytes} bytes (UTF-8): shorten it",
            details={"field": field, "bytes": size, "max_bytes": max_bytes},
        )


def _clean_title(title: str) -> str:
    text = title.strip()
    if not text:
        raise RejectedError(
            "invalid_title", "the title is empty; give a short title (1-256 bytes)",
            details={"field": "title"},
        )  # fmt: skip
    if "\n" in text or "\r" in text:
        raise RejectedError(
            "invalid_title", "the title must be one line; put the rest in the content",
            details={"field": "title"},
        )  # fmt: skip
    _utf8_size("title", text)
    _refuse_controls("title", text, allowed="\t")
    _bounded("title", text, code="invalid_title", max_bytes=MAX_TITLE_BYTES)
    return text


def _clean_content(content: str) -> str:
    # Line ends as written on any platform; a CR left alone would be a control character.
    text = content.replace("\r\n", "\n").replace("\r", "\n")
    _utf8_size("content", text)
    # Bound the work before scanning: the redacted text is bounded again after redaction.
    _bounded("content", text, code="invalid_content", max_bytes=MAX_CONTENT_BYTES)
    if not text.strip():
        raise RejectedError(
            "invalid_content",
            "the content is empty or blank; write what the memory should say",
            details={"field": "content"},
        )
    _refuse_controls("content", text, allowed="\n\t")
    return text


def normalize_references(references: Iterable[str]) -> tuple[str, ...]:
    """Trimmed, de-duplicated, sorted (by code point, which is UTF-8 byte order), bounded, and
    free of sensitive sources and secrets."""
    raw = list(references)
    if len(raw) > _MAX_RAW_REFERENCES:
        raise RejectedError(
            "too_many_references",
            f"{len(raw)} references given; at most {MAX_REFERENCES} are kept per memory",
            details={"count": len(raw), "max": MAX_REFERENCES},
        )
    cleaned: set[str] = set()
    for item in raw:
        if not isinstance(item, str):
            raise RejectedError(
                "invalid_reference",
                f"a reference must be text, got {type(item).__name__}",
                details={"field": "reference"},
            )
        text = item.strip()
        if not text:
            raise RejectedError(
                "invalid_reference",
                "a reference is empty; give a path, URL or other identifier, or leave it out",
                details={"field": "reference"},
            )
        if "\n" in text or "\t" in text:
            shown = _shown(text)
            raise RejectedError(
                "invalid_reference",
                f"reference {shown!r} spans several lines or holds a tab; one identifier each",
                details={"field": "reference", "reference": shown},
            )
        _utf8_size("reference", text)
        _refuse_controls("reference", text, allowed="")
        _bounded("reference", text, code="invalid_reference", max_bytes=MAX_REFERENCE_BYTES)
        check_source_ref(text)
        found = redact(text)
        if found.redacted:
            kinds = ", ".join(kind for kind, _ in found.counts())
            # Not redactable: a reference with a hole in it identifies nothing.
            raise RejectedError(
                "secret_detected",
                f"a reference contains a secret ({kinds}); remove the credential from it "
                "(references are never stored redacted)",
                details={"field": "reference", "kinds": [k for k, _ in found.counts()]},
            )
        cleaned.add(text)
    if len(cleaned) > MAX_REFERENCES:
        raise RejectedError(
            "too_many_references",
            f"{len(cleaned)} distinct references given; at most {MAX_REFERENCES} are kept per "
            "memory",
            details={"count": len(cleaned), "max": MAX_REFERENCES},
        )
    return tuple(sorted(cleaned))


@dataclass(frozen=True, slots=True)
class _Scanned:
    title: str | None
    content: str | None
    redacted: bool


def _scan_secrets(title: str | None, content: str | None, *, redact_sensitive: bool) -> _Scanned:
    """The shared redaction engine on title and content: refuse, or keep the redacted text."""
    findings: list[dict[str, Any]] = []
    results = {}
    for field, text in (("title", title), ("content", content)):
        if text is None:
            continue
        result = redact(text)
        results[field] = result
        findings.extend({"field": field, "kind": k, "count": n} for k, n in result.counts())
    if findings and not redact_sensitive:
        listed = ", ".join(f"{f['kind']} x{f['count']} in the {f['field']}" for f in findings)
        raise RejectedError(
            "secret_detected",
            f"secrets found ({listed}); memory never keeps a secret: remove it, or pass "
            "--redact-sensitive (redact_sensitive: true in the editor) to store the text with "
            "each secret replaced by [REDACTED:<kind>]",
            details={"findings": findings},
        )
    new_title = results["title"].text if "title" in results else None
    new_content = results["content"].text if "content" in results else None
    if new_title is not None:
        _bounded("title", new_title, code="invalid_title", max_bytes=MAX_TITLE_BYTES)
    if new_content is not None:
        _bounded("content", new_content, code="invalid_content", max_bytes=MAX_CONTENT_BYTES)
    return _Scanned(new_title, new_content, bool(findings))


# -- retention ------------------------------------------------------------------------------------

_DURATION = re.compile(r"(?:\d{1,9}[wdhms])+")
_DURATION_PART = re.compile(r"(\d{1,9})([wdhms])")
_UNIT_SECONDS: Final = {"w": 7 * 86400, "d": 86400, "h": 3600, "m": 60, "s": 1}
_RFC3339 = re.compile(r"\d{4}-\d\d-\d\d[Tt]\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:[Zz]|[+-]\d\d:\d\d)")


def _parse_time(text: str) -> datetime:
    return datetime.strptime(text, _TIME_FORMAT).replace(tzinfo=UTC)


def _add_years(moment: datetime, years: int) -> datetime:
    try:
        return moment.replace(year=moment.year + years)
    except ValueError:  # 29 February: the bound falls on 28 February
        return moment.replace(year=moment.year + years, day=28)


def parse_retention(text: str, *, created_at: datetime, now: datetime) -> datetime:
    """The moment `text` names: a duration from `now` (`720h`, `30d`, `1h30m`; units w d h m s)
    or an RFC 3339 time. It must be after `created_at` and at most ten years after it."""
    raw = text.strip()
    if _DURATION.fullmatch(raw):
        seconds = sum(
            int(amount) * _UNIT_SECONDS[unit] for amount, unit in _DURATION_PART.findall(raw)
        )
        try:
            until = now + timedelta(seconds=seconds)
        except OverflowError:
            raise _retention_out_of_bounds(text, created_at) from None
    elif _RFC3339.fullmatch(raw):
        try:
            until = datetime.fromisoformat(raw.upper().replace("Z", "+00:00"))
        except ValueError as exc:
            raise RejectedError(
                "invalid_retention",
                f"retention {text!r} is not a valid time ({exc}); use e.g. 2027-06-30T00:00:00Z",
                details={"retention": text},
            ) from exc
    else:
        shown = _shown(text)  # free text: it may be a secret pasted into the wrong option
        raise RejectedError(
            "invalid_retention",
            f"retention {shown!r} is neither a duration (e.g. 720h, 30d, 1h30m) nor an RFC 3339 "
            "time (e.g. 2027-06-30T00:00:00Z)",
            details={"retention": shown},
        )
    try:
        until = until.astimezone(UTC).replace(microsecond=0)  # stored at second precision
    except OverflowError:  # e.g. 9999-12-31T23:59:59-01:00: past datetime's range in UTC
        raise _retention_out_of_bounds(text, created_at) from None
    if until <= created_at or until > _add_years(created_at, MAX_RETENTION_YEARS):
        raise _retention_out_of_bounds(text, created_at, until)
    return until


def _retention_out_of_bounds(
    text: str, created_at: datetime, until: datetime | None = None
) -> RejectedError:
    latest = _add_years(created_at, MAX_RETENTION_YEARS)
    ends = f"ends {rfc3339(until)}" if until is not None else "is too long"
    return RejectedError(
        "retention_out_of_bounds",
        f"retention {text!r} {ends}; it must end after the memory's creation "
        f"({rfc3339(created_at)}) and at most {MAX_RETENTION_YEARS} years after it "
        f"({rfc3339(latest)})",
        details={"retention": text, "created_at": rfc3339(created_at), "latest": rfc3339(latest)},
    )


# -- arguments ------------------------------------------------------------------------------------


def _require_actor(actor: str) -> OperatorActor:
    if not is_operator_actor(actor):
        raise RejectedError(
            "actor_not_allowed",
            f"actor {actor!r} may not change memory; only operator surfaces "
            f"({', '.join(OPERATOR_ACTORS)}) create, edit, enable, disable or delete it",
            details={"actor": str(actor), "allowed": list(OPERATOR_ACTORS)},
        )
    return actor


def _require_memory_id(memory_id: str) -> str:
    if not isinstance(memory_id, str) or _MEMORY_ID.fullmatch(memory_id) is None:
        raise RejectedError(
            "invalid_memory_id",
            f"{memory_id!r} is not a memory ID (mem_ followed by 26 ULID characters); see "
            "`rutter context memory list --all`",
            details={"id": str(memory_id)},
        )
    return memory_id


def _require_version(version: int) -> int:
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise UsageError(
            "invalid_version",
            f"version must be a whole number from 1 (the memory's current version, see "
            f"`rutter context memory show ID`), got {version!r}",
            details={"version": str(version)},
        )
    return version


def _require_limit(limit: int) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIST_LIMIT:
        raise UsageError(
            "invalid_limit",
            f"limit must be between 1 and {MAX_LIST_LIMIT}, got {limit!r}",
            details={"limit": str(limit), "max": MAX_LIST_LIMIT},
        )
    return limit


def _scope_of(scope: str, workspace_id: str | None) -> tuple[Scope, str]:
    """(scope, scope_id) from a scope name and the workspace ID project scope needs."""
    if scope == "user":
        if workspace_id is not None:
            raise UsageError(
                "workspace_not_allowed",
                "user memory belongs to no workspace: drop --workspace, or use --scope project",
                details={"workspace_id": workspace_id},
            )
        return "user", USER_SCOPE_ID
    if scope == "project":
        if workspace_id is None:
            raise UsageError(
                "workspace_required",
                "project memory needs a workspace: pass --workspace ID (see `rutter workspace "
                "list`)",
            )
        return "project", workspace_id
    raise UsageError(
        "invalid_scope",
        f"scope must be 'user' or 'project', got {scope!r}",
        details={"scope": str(scope)},
    )


def _require_status(status: str) -> Status:
    if status not in STATUSES:
        raise UsageError(
            "invalid_status",
            f"status must be 'active' or 'disabled', got {status!r}",
            details={"status": str(status)},
        )
    return status


# -- store access ---------------------------------------------------------------------------------


def _row_to_record(row: Any, now_text: str) -> MemoryRecord:
    retention = None if row.retention_until is None else str(row.retention_until)
    return MemoryRecord(
        memory_id=str(row.memory_id),
        scope=cast(Scope, row.scope),
        scope_id=str(row.scope_id),
        title=str(row.title),
        content=str(row.content),
        content_sha256=str(row.content_sha256),
        status=cast(Status, row.status),
        source_kind=cast(SourceKind, row.source_kind),
        references=tuple(json.loads(row.references_json)),
        retention_until=retention,
        expired=retention is not None and retention <= now_text,
        redacted=bool(row.redacted),
        created_by=cast(OperatorActor, row.created_by),
        updated_by=cast(OperatorActor, row.updated_by),
        version=int(row.version),
        created_at=str(row.created_at),
        updated_at=str(row.updated_at),
    )


def _references_json(references: Sequence[str]) -> str:
    return json.dumps(list(references), ensure_ascii=False, separators=(",", ":"))


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _fetch(conn: Connection, memory_id: str) -> Any:
    return conn.execute(
        select(memories_table).where(memories_table.c.memory_id == memory_id)
    ).first()


def _not_found(memory_id: str) -> NotFoundError:
    return NotFoundError(
        "not_found",
        f"no memory {memory_id} exists (it may have been deleted); see "
        "`rutter context memory list --all`",
        details={"id": memory_id},
    )


def _stale(memory_id: str, expected: int, current: int) -> ConflictError:
    return ConflictError(
        "conflict",
        f"memory {memory_id} is at version {current}, not {expected}: it changed since you read "
        f"it. Show it again (`rutter context memory show {memory_id}`) and retry with "
        f"--version {current}",
        details={"id": memory_id, "expected_version": expected, "current_version": current},
    )


def _current(conn: Connection, memory_id: str, version: int) -> Any:
    """The row at exactly `version`: not found and stale are different answers."""
    row = _fetch(conn, memory_id)
    if row is None:
        raise _not_found(memory_id)
    if int(row.version) != version:
        raise _stale(memory_id, version, int(row.version))
    return row


def _require_workspace(conn: Connection, workspace_id: str) -> None:
    found = conn.execute(
        select(workspaces_table.c.workspace_id).where(
            workspaces_table.c.workspace_id == workspace_id
        )
    ).first()
    if found is None:
        raise NotFoundError(
            "not_registered",
            f"no workspace {workspace_id!r} is registered; project memory belongs to a "
            f"registered workspace: `rutter workspace register {workspace_id} ROOT` (see "
            "`rutter workspace list`)",
            details={"workspace_id": workspace_id},
        )


def _update(conn: Connection, row: Any, values: dict[str, Any], now_text: str) -> MemoryRecord:
    """Apply `values` as version + 1, guarded by the version that was read."""
    version = int(row.version)
    values = {**values, "version": version + 1}
    done = conn.execute(
        update(memories_table)
        .where(memories_table.c.memory_id == row.memory_id)
        .where(memories_table.c.version == version)
        .values(**values)
    )
    if done.rowcount != 1:  # only without SQLite's write lock (another dialect): re-read
        current = _fetch(conn, row.memory_id)
        if current is None:
            raise _not_found(str(row.memory_id))
        raise _stale(str(row.memory_id), version, int(current.version))
    updated = _fetch(conn, row.memory_id)
    return _row_to_record(updated, now_text)


def _order() -> tuple[ColumnElement[Any], ...]:
    return (memories_table.c.updated_at.desc(), memories_table.c.memory_id.desc())


def _visible(include_inactive: bool, now_text: str) -> ColumnElement[bool] | None:
    """Disabled and expired memories are listed only when asked for (`--all`)."""
    if include_inactive:
        return None
    return and_(
        memories_table.c.status == "active",
        or_(
            memories_table.c.retention_until.is_(None),
            memories_table.c.retention_until > now_text,
        ),
    )


# -- the service ----------------------------------------------------------------------------------


def create_memory(
    store: Store,
    *,
    scope: str,
    workspace_id: str | None = None,
    title: str,
    content: str,
    references: Sequence[str] = (),
    retention: str | None = None,
    redact_sensitive: bool = False,
    source_ref: str | None = None,
    actor: str,
) -> MemoryRecord:
    """Create a memory at version 1.

    `source_ref` is the path the content was imported from (`--content-file`): it is checked
    like a reference and makes the record `operator_import_explicit`; it is not stored.
    """
    operator = _require_actor(actor)
    scope_name, scope_id = _scope_of(scope, workspace_id)
    clean_title = _clean_title(title)
    clean_content = _clean_content(content)
    clean_references = normalize_references(references)
    source_kind: SourceKind = "operator_explicit"
    if source_ref is not None:
        check_source_ref(source_ref, field="content file")
        source_kind = "operator_import_explicit"
    scanned = _scan_secrets(clean_title, clean_content, redact_sensitive=redact_sensitive)
    assert scanned.title is not None
    assert scanned.content is not None
    created = utc_now().replace(microsecond=0)
    until = None
    if retention is not None:
        until = rfc3339(parse_retention(retention, created_at=created, now=created))
    now_text = rfc3339(created)
    memory_id = new_id("mem")
    with store.write() as conn:
        if scope_name == "project":
            _require_workspace(conn, scope_id)
        conn.execute(
            insert(memories_table).values(
                memory_id=memory_id,
                scope=scope_name,
                scope_id=scope_id,
                workspace_id=scope_id if scope_name == "project" else None,
                title=scanned.title,
                content=scanned.content,
                content_sha256=_sha256(scanned.content),
                status="active",
                source_kind=source_kind,
                references_json=_references_json(clean_references),
                retention_until=until,
                redacted=int(scanned.redacted),
                created_by=operator,
                updated_by=operator,
                version=1,
                created_at=now_text,
                updated_at=now_text,
            )
        )
        return _row_to_record(_fetch(conn, memory_id), now_text)


def get_memory(
    store: Store, memory_id: str, *, version: int | None = None, now: datetime | None = None
) -> MemoryRecord:
    """One memory whatever its status (an explicit ID asks for exactly that record).

    With `version`, only the record at exactly that version: a stale version is a conflict
    (a surface checks this before asking a person to confirm a change).
    """
    _require_memory_id(memory_id)
    if version is not None:
        _require_version(version)
    now_text = rfc3339(now or utc_now())
    with store.read() as conn:
        row = _fetch(conn, memory_id) if version is None else _current(conn, memory_id, version)
    if row is None:
        raise _not_found(memory_id)
    return _row_to_record(row, now_text)


def list_memories(
    store: Store,
    *,
    scope: str | None = None,
    workspace_id: str | None = None,
    include_inactive: bool = False,
    limit: int = DEFAULT_LIST_LIMIT,
    now: datetime | None = None,
) -> MemoryList:
    """Memories newest change first (`updated_at` desc, then ID desc), at most `limit`.

    `scope` "user" or "project" (project needs `workspace_id`) lists that scope. Without a
    scope: user memory plus `workspace_id`'s project memory when a workspace is given, else
    every memory. Disabled and expired ones only with `include_inactive`.
    """
    limit = _require_limit(limit)
    now_text = rfc3339(now or utc_now())
    query = select(memories_table)
    if scope is not None:
        scope_name, scope_id = _scope_of(scope, workspace_id)
        query = query.where(
            memories_table.c.scope == scope_name, memories_table.c.scope_id == scope_id
        )
    elif workspace_id is not None:
        query = query.where(
            or_(
                memories_table.c.scope == "user",
                and_(
                    memories_table.c.scope == "project",
                    memories_table.c.scope_id == workspace_id,
                ),
            )
        )
    visible = _visible(include_inactive, now_text)
    if visible is not None:
        query = query.where(visible)
    query = query.order_by(*_order()).limit(limit + 1)
    with store.read() as conn:
        rows = conn.execute(query).all()
    records = tuple(_row_to_record(row, now_text) for row in rows[:limit])
    return MemoryList(records, has_more=len(rows) > limit)


def edit_memory(
    store: Store,
    memory_id: str,
    *,
    version: int,
    title: str | None = None,
    content: str | None = None,
    references: Sequence[str] | None = None,
    retention: str | None = None,
    redact_sensitive: bool = False,
    actor: str,
) -> MemoryRecord:
    """Change title, content, references (replaced as a whole) and/or retention
    (`RETENTION_NONE` removes it) of the memory at `version`; the result is version + 1.

    An edit that changes nothing writes nothing and returns the record as it is. A record
    that was ever stored redacted stays `redacted`.
    """
    operator = _require_actor(actor)
    _require_memory_id(memory_id)
    _require_version(version)
    if title is None and content is None and references is None and retention is None:
        raise UsageError(
            "nothing_to_change",
            "give at least one of --title, --content, --reference, --retention to edit",
            details={"id": memory_id},
        )
    clean_title = None if title is None else _clean_title(title)
    clean_content = None if content is None else _clean_content(content)
    clean_references = None if references is None else normalize_references(references)
    scanned = _scan_secrets(clean_title, clean_content, redact_sensitive=redact_sensitive)
    now = utc_now().replace(microsecond=0)
    now_text = rfc3339(now)
    changed_text = False
    with store.write() as conn:
        row = _current(conn, memory_id, version)
        values: dict[str, Any] = {}
        if scanned.title is not None and scanned.title != row.title:
            values["title"] = scanned.title
        if scanned.content is not None and scanned.content != row.content:
            values["content"] = scanned.content
            values["content_sha256"] = _sha256(scanned.content)
        if clean_references is not None:
            encoded = _references_json(clean_references)
            if encoded != row.references_json:
                values["references_json"] = encoded
        if retention is not None:
            if retention.strip().casefold() == RETENTION_NONE:
                until = None
            else:
                created = _parse_time(str(row.created_at))
                until = rfc3339(parse_retention(retention, created_at=created, now=now))
            if until != row.retention_until:
                values["retention_until"] = until
        if scanned.redacted and not row.redacted:
            values["redacted"] = 1
        if not values:
            return _row_to_record(row, now_text)
        changed_text = "title" in values or "content" in values or "references_json" in values
        record = _update(
            conn, row, {**values, "updated_by": operator, "updated_at": now_text}, now_text
        )
    if changed_text:
        store.checkpoint()  # the replaced text leaves the WAL too
    return record


def set_memory_status(
    store: Store, memory_id: str, *, version: int, status: str, actor: str
) -> MemoryRecord:
    """Enable (`active`) or disable the memory at `version`; a disabled memory never enters a
    prompt and is listed only with `--all`. Setting the status it already has writes nothing."""
    operator = _require_actor(actor)
    _require_memory_id(memory_id)
    _require_version(version)
    wanted = _require_status(status)
    now_text = rfc3339(utc_now())
    with store.write() as conn:
        row = _current(conn, memory_id, version)
        if row.status == wanted:
            return _row_to_record(row, now_text)
        return _update(
            conn, row, {"status": wanted, "updated_by": operator, "updated_at": now_text}, now_text
        )


def delete_memory(store: Store, memory_id: str, *, version: int, actor: str) -> DeletedMemory:
    """Delete the memory at exactly `version`, physically: not recoverable from the store."""
    _require_actor(actor)
    _require_memory_id(memory_id)
    _require_version(version)
    with store.write() as conn:
        _current(conn, memory_id, version)
        done = conn.execute(
            delete(memories_table)
            .where(memories_table.c.memory_id == memory_id)
            .where(memories_table.c.version == version)
        )
        if done.rowcount != 1:  # pragma: no cover - only without SQLite's write lock
            raise _stale(memory_id, version, version + 1)
    return DeletedMemory(memory_id, version, purged=store.checkpoint())


def export_memories(
    store: Store,
    *,
    scope: str,
    workspace_id: str | None = None,
    include_inactive: bool = False,
    now: datetime | None = None,
) -> MemoryExport:
    """Every memory of one scope (`context_memory_export.v1`), in list order; disabled and
    expired ones only with `include_inactive`. A project's workspace must be registered."""
    scope_name, scope_id = _scope_of(scope, workspace_id)
    moment = now or utc_now()
    now_text = rfc3339(moment)
    query = select(memories_table).where(
        memories_table.c.scope == scope_name, memories_table.c.scope_id == scope_id
    )
    visible = _visible(include_inactive, now_text)
    if visible is not None:
        query = query.where(visible)
    with store.read() as conn:
        if scope_name == "project":
            _require_workspace(conn, scope_id)
        rows = conn.execute(query.order_by(*_order())).all()
    items = tuple(_row_to_record(row, now_text) for row in rows)
    return MemoryExport(rfc3339(moment), scope_name, scope_id, items)


# -- importing content from a file ----------------------------------------------------------------

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)
_BOM: Final = b"\xef\xbb\xbf"


def read_content_file(path: str, *, cwd: Path) -> ContentFile:
    """The text of `path` for `--content-file`: a regular file (not a link, FIFO or device, not
    stdin), not a sensitive source by its name or by where it really is, at most 16 KiB of
    UTF-8 (a BOM is dropped). Every refusal is typed."""
    if not path or "\0" in path:
        raise RejectedError(
            "invalid_path", f"invalid content file path {path!r}", details={"path": path}
        )
    check_source_ref(path, field="content file")
    candidate = PurePath(path)
    if not candidate.is_absolute():
        candidate = PurePath(cwd) / candidate
    # Where it really is: a harmless name in a linked directory can still be ~/.ssh/...
    real = PurePath(os.path.realpath(candidate.parent)) / candidate.name
    check_source_ref(str(real), field="content file")
    flags = os.O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK | _O_CLOEXEC | _O_BINARY
    try:
        fd = os.open(real, flags)
    except OSError as exc:
        raise _open_error(path, exc) from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise RejectedError(
                "not_regular_file",
                f"content file {path} is not a regular file (a directory, FIFO, socket or "
                "device); give a regular text file",
                path=path,
            )
        limit = MAX_CONTENT_BYTES + len(_BOM)
        if info.st_size > limit:
            raise _too_large(path, info.st_size)
        data = os.read(fd, limit + 1)
    finally:
        os.close(fd)
    data = data.removeprefix(_BOM)
    if len(data) > MAX_CONTENT_BYTES:  # a BOM does not count; a file that grew meanwhile does
        raise _too_large(path, len(data))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RejectedError(
            "invalid_utf8",
            f"content file {path} is not valid UTF-8 (byte offset {exc.start}); save it as UTF-8",
            path=path,
            details={"offset": exc.start},
        ) from exc
    return ContentFile(text, path)


def _too_large(path: str, size: int) -> RejectedError:
    return RejectedError(
        "too_large",
        f"content file {path} is {size} bytes; memory content is at most {MAX_CONTENT_BYTES} "
        "bytes: shorten it",
        path=path,
        details={"bytes": size, "max_bytes": MAX_CONTENT_BYTES},
    )


def _open_error(path: str, exc: OSError) -> RejectedError | NotFoundError:
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return NotFoundError("not_found", f"content file {path} does not exist", path=path)
    if exc.errno in (errno.ELOOP, errno.EMLINK):  # O_NOFOLLOW on a link (EMLINK: BSDs)
        return RejectedError(
            "symlink",
            f"content file {path} is a symbolic link; give the file it points to (after "
            "checking it is what you mean to store)",
            path=path,
        )
    return RejectedError(
        "unreadable",
        f"cannot read content file {path}: {exc.strerror or exc}; check its permissions",
        path=path,
        details={"errno": exc.errno},
    )


__all__ = [
    "DEFAULT_LIST_LIMIT",
    "EXPORT_PROTOCOL_VERSION",
    "MAX_CONTENT_BYTES",
    "MAX_LIST_LIMIT",
    "MAX_REFERENCES",
    "MAX_REFERENCE_BYTES",
    "MAX_RETENTION_YEARS",
    "MAX_TITLE_BYTES",
    "PROTOCOL_VERSION",
    "RETENTION_NONE",
    "SCOPES",
    "STATUSES",
    "USER_SCOPE_ID",
    "ContentFile",
    "DeletedMemory",
    "MemoryExport",
    "MemoryList",
    "MemoryRecord",
    "Scope",
    "SourceKind",
    "Status",
    "check_source_ref",
    "create_memory",
    "delete_memory",
    "edit_memory",
    "export_memories",
    "get_memory",
    "list_memories",
    "normalize_references",
    "parse_retention",
    "read_content_file",
    "sensitive_source_kind",
    "set_memory_status",
]


def count_project_memories(conn: Connection, workspace_id: str) -> int:
    """How many project memories (any status) belong to `workspace_id`, in the caller's
    transaction: a workspace that has some cannot be removed."""
    return int(
        conn.execute(
            select(func.count())
            .select_from(memories_table)
            .where(memories_table.c.workspace_id == workspace_id)
        ).scalar_one()
    )
