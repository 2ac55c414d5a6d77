"""The documents of the HTTP API's bearer tokens, as pydantic models (their JSON dumps are what
`rutter http token ... --json` prints). No document but `CreatedToken` ever holds a secret, and
that one is printed once, when the token is made."""

from __future__ import annotations

from typing import Any, Final, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

TokenScope = Literal["read", "control"]
TOKEN_SCOPES: Final[tuple[TokenScope, ...]] = get_args(TokenScope)


class TokenDocument(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class TokenRecord(TokenDocument):
    """A bearer as listed: never its secret, nor the secret's hash."""

    token_id: str
    scope: TokenScope
    owner: str | None = Field(
        description="the person whose requests it makes (null: made before people were "
        "recorded, the store's one person on SQLite)"
    )
    created_by_person: str | None = Field(
        description="who made it (null: made before people were recorded)"
    )
    created_at: str
    revoked_at: str | None


class CreatedToken(TokenDocument):
    """`{token_id, scope, owner, secret}`: the secret is shown here once and stored only as a
    hash."""

    token_id: str
    scope: TokenScope
    owner: str = Field(description="the person whose requests it makes")
    secret: str


class Bearer(TokenDocument):
    """Who a presented secret is: its scope and its person (None: the store's own person, for a
    bearer made before people were recorded)."""

    scope: TokenScope
    owner: str | None


class TokenList(TokenDocument):
    items: tuple[TokenRecord, ...]


__all__ = [
    "TOKEN_SCOPES",
    "Bearer",
    "CreatedToken",
    "TokenDocument",
    "TokenList",
    "TokenRecord",
    "TokenScope",
]
