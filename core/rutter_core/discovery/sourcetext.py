"""Turning a source's raw bytes into the text an agent is given (docs/reference/discovery.md)."""

from __future__ import annotations

import codecs
import hashlib
from dataclasses import dataclass

from rutter_core.discovery.redaction import RedactionResult, redact
from rutter_core.kernel.errors import discovery_error


@dataclass(frozen=True, slots=True)
class SourceText:
    raw_bytes: int
    blank: bool
    content: str
    content_bytes: int
    content_sha256: str
    redaction: RedactionResult


def normalize_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def decode_source(raw: bytes, *, rel: str) -> SourceText:
    """Validate, normalize and redact one source's bytes; typed errors name the byte offset."""
    text = checked_text(raw, rel=rel)
    redaction = redact(text)
    encoded = redaction.text.encode("utf-8")
    return SourceText(
        raw_bytes=len(raw),
        blank=not text.strip(),
        content=redaction.text,
        content_bytes=len(encoded),
        content_sha256=hashlib.sha256(encoded).hexdigest(),
        redaction=redaction,
    )


def checked_text(raw: bytes, *, rel: str) -> str:
    """The text of one source's bytes, newlines normalized, before redaction: `nul_byte` and
    `invalid_utf8` (naming the byte offset) for bytes that are not instruction text. For a
    caller that never delivers the text (agent profiles read imports and front matter)."""
    nul = raw.find(b"\x00")
    if nul >= 0:
        raise discovery_error(
            "nul_byte",
            f"{rel} contains a NUL byte at offset {nul}; instruction files must be text",
            path=rel,
            details={"offset": nul},
        )
    body = raw[len(codecs.BOM_UTF8) :] if raw.startswith(codecs.BOM_UTF8) else raw
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = exc.start + (len(raw) - len(body))
        raise discovery_error(
            "invalid_utf8",
            f"{rel} is not valid UTF-8 (first bad byte at offset {offset}); save it as UTF-8",
            path=rel,
            details={"offset": offset},
        ) from exc
    return normalize_newlines(text)
