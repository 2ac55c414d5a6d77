"""Bearer tokens: made with a random secret shown once, stored as the secret's SHA-256, listed
without it, revoked for good, and checked in constant time.

A secret is `rutter_<token_id>_<random>`: the ID says which row to compare with (one indexed
read, no scan) and the random part (32 bytes from `secrets`) is what cannot be guessed. The
hash is a plain SHA-256: the secret has 256 bits of entropy, so a slow password hash would add
cost to every request and no safety. The comparison is `hmac.compare_digest`; an unknown ID is
compared against a fixed hash, so whether an ID exists takes the same work to learn as not.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from typing import Final

from rutter_core.access import repo
from rutter_core.access.model import (
    TOKEN_SCOPES,
    Bearer,
    CreatedToken,
    TokenList,
    TokenRecord,
    TokenScope,
)
from rutter_core.kernel.actors import OperatorActor
from rutter_core.kernel.clock import now_rfc3339
from rutter_core.kernel.errors import Hint, NotFoundError, RejectedError, UsageError
from rutter_core.kernel.ids import new_id
from rutter_core.store import Store, person_of

SECRET_PREFIX: Final = "rutter_"
_SECRET = re.compile(r"rutter_(tok_[0-9A-HJKMNP-TV-Z]{26})_[A-Za-z0-9_-]{43}")
_TOKEN_ID = re.compile(r"tok_[0-9A-HJKMNP-TV-Z]{26}")
_NO_SUCH_HASH: Final = "0" * 64


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("ascii")).hexdigest()


def _scope(scope: str) -> TokenScope:
    if scope not in TOKEN_SCOPES:  # narrows `scope` to the literal
        raise UsageError(
            "invalid_scope",
            "a token's scope is read or control",
            details={"allowed": list(TOKEN_SCOPES)},
            hint=Hint("choose_token_scope"),
        )
    return scope


def create_token(
    store: Store, *, scope: str, actor: OperatorActor, user: str | None = None
) -> CreatedToken:
    """A bearer acting for `user` (default: the person running this, `Store.person`). On an
    engine that separates people, the engine itself refuses a bearer for a person the creator
    may not act as (`store_permission_denied`)."""
    chosen = _scope(scope)
    if user is not None and not (0 < len(user) <= 256 and user.isprintable()):
        raise UsageError(
            "invalid_person",
            "a person is named by 1 to 256 printable characters (a PostgreSQL role's name)",
        )
    token_id = new_id("tok")
    secret = f"{SECRET_PREFIX}{token_id}_{secrets.token_urlsafe(32)}"
    with store.write() as conn:
        person = person_of(conn)
        owner = person if user is None else user
        if owner != person:
            store.dialect.check_person(conn, owner)
        repo.add(
            conn, token_id=token_id, scope=chosen, secret_sha256=_hash(secret), actor=actor,
            owner=owner, person=person, now=now_rfc3339(),
        )  # fmt: skip
    return CreatedToken(token_id=token_id, scope=chosen, owner=owner, secret=secret)


def list_tokens(store: Store, *, include_revoked: bool) -> TokenList:
    with store.read() as conn:
        return TokenList(items=tuple(repo.all_tokens(conn, include_revoked=include_revoked)))


def revoke_token(store: Store, token_id: str) -> TokenRecord:
    """Revoke the token (a revoked one stays revoked: revoking it again changes nothing)."""
    if _TOKEN_ID.fullmatch(token_id) is None:
        raise RejectedError(
            "invalid_token_id", "a token ID is tok_ and 26 characters", hint=Hint("list_tokens")
        )
    with store.write() as conn:
        if repo.by_id(conn, token_id) is None:
            raise NotFoundError(
                "token_not_found",
                "no HTTP token has that ID",
                details={"token_id": token_id},
                hint=Hint("list_tokens"),
            )
        repo.revoke(conn, token_id, now_rfc3339())
        found = repo.by_id(conn, token_id)
    assert found is not None
    return found


def authenticate(store: Store, secret: str) -> Bearer | None:
    """The scope and person of the valid token whose secret this is; None for anything else
    (malformed, unknown, wrong secret, revoked), without saying which."""
    match = _SECRET.fullmatch(secret)
    if match is None:
        return None
    with store.read() as conn:
        found = repo.secret_hash(conn, match.group(1))
    stored = _NO_SUCH_HASH if found is None else found[1]
    same = hmac.compare_digest(_hash(secret), stored)
    if found is None or not same or found[0].revoked_at is not None:
        return None
    return Bearer(scope=found[0].scope, owner=found[0].owner)


__all__ = ["SECRET_PREFIX", "authenticate", "create_token", "list_tokens", "revoke_token"]
