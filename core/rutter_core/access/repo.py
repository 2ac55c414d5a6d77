"""The `http_tokens` table: the only module that reads or writes it. Every function works in
the caller's transaction."""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy import insert, select, update
from sqlalchemy.engine import Connection

from rutter_core.access.model import TokenRecord, TokenScope
from rutter_core.kernel.actors import OperatorActor
from rutter_core.store.schema import http_tokens


def _record(row: Any) -> TokenRecord:
    return TokenRecord(
        token_id=str(row.token_id),
        scope=cast(TokenScope, str(row.scope)),
        owner=None if row.owner is None else str(row.owner),
        created_by_person=None if row.created_by_person is None else str(row.created_by_person),
        created_at=str(row.created_at),
        revoked_at=None if row.revoked_at is None else str(row.revoked_at),
    )


def add(
    conn: Connection,
    *,
    token_id: str,
    scope: TokenScope,
    secret_sha256: str,
    actor: OperatorActor,
    owner: str,
    person: str,
    now: str,
) -> TokenRecord:
    conn.execute(
        insert(http_tokens).values(
            token_id=token_id,
            scope=scope,
            secret_sha256=secret_sha256,
            created_by=actor,
            created_at=now,
            revoked_at=None,
            owner=owner,
            created_by_person=person,
        )
    )
    return TokenRecord(
        token_id=token_id,
        scope=scope,
        owner=owner,
        created_by_person=person,
        created_at=now,
        revoked_at=None,
    )


def by_id(conn: Connection, token_id: str) -> TokenRecord | None:
    row = conn.execute(select(http_tokens).where(http_tokens.c.token_id == token_id)).first()
    return None if row is None else _record(row)


def secret_hash(conn: Connection, token_id: str) -> tuple[TokenRecord, str] | None:
    """The token and the stored hash of its secret (for authentication only)."""
    row = conn.execute(select(http_tokens).where(http_tokens.c.token_id == token_id)).first()
    return None if row is None else (_record(row), str(row.secret_sha256))


def all_tokens(conn: Connection, *, include_revoked: bool) -> list[TokenRecord]:
    query = select(http_tokens).order_by(http_tokens.c.token_id)
    if not include_revoked:
        query = query.where(http_tokens.c.revoked_at.is_(None))
    return [_record(row) for row in conn.execute(query)]


def revoke(conn: Connection, token_id: str, now: str) -> None:
    conn.execute(
        update(http_tokens)
        .where(http_tokens.c.token_id == token_id, http_tokens.c.revoked_at.is_(None))
        .values(revoked_at=now)
    )
