"""Handles and cursors: opaque, signed documents (docs/reference/history.md).

A token is `<kind>.<payload>.<mac>`: the payload canonical JSON in unpadded base64url, the mac
the first 128 bits of HMAC-SHA256 over kind and payload, keyed by the store's history secret.
A token that does not parse, or whose mac does not verify, is refused as a whole (`invalid_handle`,
`invalid_cursor`) without echoing it: a forged handle names nothing, so it can never read another
workspace's or run's text; what a valid one names is re-checked against the store on every use.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from typing import Any, Final, Literal

from rutter_core.kernel.errors import Hint, UsageError

TokenKind = Literal["rh1", "rc1"]
HANDLE: Final[TokenKind] = "rh1"
CURSOR: Final[TokenKind] = "rc1"
MAX_TOKEN_CHARS: Final = 4096
_MAC_BYTES: Final = 16


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _mac(secret: str, kind: str, payload: str) -> bytes:
    digest = hmac.new(secret.encode("ascii"), f"{kind}.{payload}".encode("ascii"), hashlib.sha256)
    return digest.digest()[:_MAC_BYTES]


def sign(secret: str, kind: TokenKind, document: dict[str, Any]) -> str:
    payload = _b64(
        json.dumps(document, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode()
    )
    return f"{kind}.{payload}.{_b64(_mac(secret, kind, payload))}"


def verify(secret: str, kind: TokenKind, token: object) -> dict[str, Any]:
    """The document `token` signs, if it is a well-formed token of `kind` signed with `secret`;
    otherwise `invalid_handle` / `invalid_cursor` (usage)."""
    if not isinstance(token, str) or not 0 < len(token) <= MAX_TOKEN_CHARS:
        raise invalid(kind)
    parts = token.split(".")
    if len(parts) != 3 or parts[0] != kind or not parts[1].isascii() or not parts[2].isascii():
        raise invalid(kind)
    try:
        mac = _unb64(parts[2])
        expected = _mac(secret, kind, parts[1])
        if not hmac.compare_digest(mac, expected):
            raise invalid(kind)
        document = json.loads(_unb64(parts[1]).decode("utf-8"))
    except (binascii.Error, ValueError, UnicodeDecodeError) as exc:
        raise invalid(kind) from exc
    if not isinstance(document, dict):
        raise invalid(kind)
    return document


def invalid(kind: TokenKind) -> UsageError:
    if kind == HANDLE:
        return UsageError(
            "invalid_handle",
            "the handle is not one this store issued (damaged, forged or from another store)",
            hint=Hint("search_history_again"),
        )
    return UsageError(
        "invalid_cursor",
        "the cursor is not one this store issued for this search (damaged, forged, from "
        "another store, or given with another query, scope, run or workspace)",
        hint=Hint("search_history_again"),
    )
