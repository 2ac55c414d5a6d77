"""What memory text may be: bounds, allowed characters, references, sensitive sources and
secrets (docs/reference/memory.md).

Title and content go through the one redaction engine (`rutter_core.discovery.redaction`): a
secret is refused unless the operator asks for the redacted text to be stored, and the refusal
carries the `store_redacted` hint (each surface says how to ask for that). References, and the
path content is imported from, that name a sensitive source (.env files, credential and secret
stores, private keys, stdin, terminal input, keystrokes) are refused whatever the options.
Every refusal is a typed `RejectedError` whose message echoes user text only redacted.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final, Literal
from urllib.parse import unquote, urlsplit

from rutter_core.discovery.redaction import redact
from rutter_core.kernel.errors import Hint, RejectedError
from rutter_core.kernel.text import require_readable

MAX_TITLE_BYTES: Final = 256
MAX_CONTENT_BYTES: Final = 16 * 1024
MAX_REFERENCES: Final = 32
MAX_REFERENCE_BYTES: Final = 512
# Reading more than this many references is refused before any is normalised (bounded work).
_MAX_RAW_REFERENCES: Final = 1024


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


# Editors' backups, autosaves, swap and lock files of a file hold its text: `.env~`,
# `#.env#`, `.#.env`, `.env.swp`, `.id_rsa.swp`, `credentials.json.bak`, `.env.~1~`.
_BACKUP_SUFFIXES: Final = frozenset(
    {"bak", "backup", "old", "orig", "save", "sav", "tmp", "temp", "swp", "swo", "swn", "swx",
     "kate-swp", "dpkg-old", "dpkg-dist", "rej", "copy"}
)  # fmt: skip
_NUMBERED_BACKUP: Final = re.compile(r"\.~[0-9]+~$")


def _undecorated(name: str) -> set[str]:
    """`name` and the names it may be a backup, autosave, swap or lock file of."""
    names = {name}
    pending = [name]
    while pending:
        current = pending.pop()
        found: list[str] = []
        if current.endswith("~"):
            found.append(_NUMBERED_BACKUP.sub("", current) if _NUMBERED_BACKUP.search(current)
                         else current.rstrip("~"))  # fmt: skip
        if len(current) > 2 and current.startswith("#") and current.endswith("#"):
            found.append(current[1:-1])  # Emacs auto-save
        if current.startswith(".#"):
            found.append(current[2:])  # Emacs lock
        head, dot, suffix = current.rpartition(".")
        if dot and head and suffix in _BACKUP_SUFFIXES:
            found.append(head)
            if head.startswith(".") and len(head) > 1:
                found.append(head[1:])  # vim's swap of a visible file: `.id_rsa.swp`
        for candidate in found:
            if candidate and candidate not in names:
                names.add(candidate)
                pending.append(candidate)
    return names


def _segment_kind(name: str, parent: str | None) -> SensitiveKind | None:
    for candidate in sorted(_undecorated(name)):
        kind = _plain_segment_kind(candidate, parent)
        if kind is not None:
            return kind
    return None


def _plain_segment_kind(name: str, parent: str | None) -> SensitiveKind | None:
    if name in _SECRET_STORE_DIRS or name in _CREDENTIAL_FILES:
        return "credential_store"
    if parent is not None and (parent, name) in _CREDENTIAL_PAIRS:
        return "credential_store"
    if name == ".env" or name.startswith(".env.") or name == ".envrc" or name.endswith(".env"):
        return "env_file"
    # Stem and suffix as for file names: a leading dot starts no suffix (`.secrets` has none).
    head, dot, tail = name[1:].rpartition(".")
    stem, suffix = (name[0] + head, tail) if dot else (name, "")
    if name.split(".", 1)[0] in _PRIVATE_KEY_NAMES and not _is_public_key(name):
        return "private_key"  # id_rsa, id_ed25519.old, id_ecdsa.bak ...
    if suffix in _PRIVATE_KEY_SUFFIXES:
        return "private_key"
    if stem in _SECRET_STORE_STEMS and suffix in _STORE_FORMATS:
        return "credential_store"
    if stem in _TERMINAL_STEMS or stem.endswith("_history"):
        return "terminal_input"  # shell and REPL histories are recorded terminal input
    return None


def _is_public_key(name: str) -> bool:
    """`id_ed25519.pub`, `deploy_key.pub` (and their backups, `id_rsa.pub~`): the public half
    of a key pair, which ssh-keygen names `<key>.pub` and which is meant to be shared."""
    return any(candidate.split(".")[1:2] == ["pub"] for candidate in _undecorated(name))


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
        # Any process or thread: /proc/PID/fd/N, /proc/PID/task/TID/fd/N, .../environ.
        if local[0] == "proc" and "fd" in local[2:]:
            return "terminal_input"
        if local[0] == "proc" and "environ" in local[2:]:
            return "env_file"  # a process's environment: what .env files are loaded into
    parent: str | None = None
    # A public key is shared on purpose, also from the key directory (`~/.ssh/id_ed25519.pub`);
    # the directory itself and every other file in it stay refused.
    public_key = bool(segments) and _is_public_key(segments[-1])
    for name in segments:
        if public_key and name == ".ssh":
            parent = name
            continue
        kind = _segment_kind(name, parent)
        if kind is not None:
            return kind
        parent = name
    return None


def shown(text: str) -> str:
    """`text` as an error may echo it: a refused reference can hold a credential too
    (`https://user:token@host/.env`), and errors are printed and logged."""
    return redact(text).text


def check_source_ref(reference: str, *, field: str = "reference") -> None:
    """Refuse a reference or source path that names a sensitive source (never redactable)."""
    kind = sensitive_source_kind(reference)
    if kind is not None:
        echoed = shown(reference)
        raise RejectedError(
            "sensitive_source",
            f"{field} {echoed!r} names {_SENSITIVE_WHAT[kind]}; memory never records "
            "sensitive sources, not even redacted: remove it",
            details={"field": field, "reference": echoed, "kind": kind},
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


def _bounded(field: str, text: str, *, code: str, max_bytes: int) -> None:
    size = _utf8_size(field, text)
    if size > max_bytes:
        raise RejectedError(
            code,
            f"{field} is {size} bytes; the limit is {max_bytes} bytes (UTF-8): shorten it",
            details={"field": field, "bytes": size, "max_bytes": max_bytes},
        )


def clean_title(title: str) -> str:
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
    require_readable("title", text, allowed="\t")
    _bounded("title", text, code="invalid_title", max_bytes=MAX_TITLE_BYTES)
    return text


def clean_content(content: str) -> str:
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
    require_readable("content", text, allowed="\n\t")
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
            echoed = shown(text)
            raise RejectedError(
                "invalid_reference",
                f"reference {echoed!r} spans several lines or holds a tab; one identifier each",
                details={"field": "reference", "reference": echoed},
            )
        _utf8_size("reference", text)
        require_readable("reference", text, allowed="")
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
class Scanned:
    """Title and content as they are to be stored (None: not given), and whether a secret was
    cut out of either."""

    title: str | None
    content: str | None
    redacted: bool


def scan_secrets(title: str | None, content: str | None, *, redact_sensitive: bool) -> Scanned:
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
            f"secrets found ({listed}); memory never keeps a secret",
            details={"findings": findings},
            hint=Hint("store_redacted"),
        )
    new_title = results["title"].text if "title" in results else None
    new_content = results["content"].text if "content" in results else None
    if new_title is not None:
        _bounded("title", new_title, code="invalid_title", max_bytes=MAX_TITLE_BYTES)
    if new_content is not None:
        _bounded("content", new_content, code="invalid_content", max_bytes=MAX_CONTENT_BYTES)
    return Scanned(new_title, new_content, bool(findings))
