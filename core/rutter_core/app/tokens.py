"""Operations on the HTTP API's bearer tokens (docs/reference/surfaces.md): one params model per
operation, and `TokenOperations` (`Rutter(store).tokens`).

Tokens are made, listed and revoked by an operator on the command line; the HTTP server only
asks `authenticate` which scope a presented secret has (None: it has none).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from pydantic import Field, StrictBool, StrictStr

from rutter_core.access import service
from rutter_core.access.model import Bearer, CreatedToken, TokenList, TokenRecord, TokenScope
from rutter_core.app.models import Params, allowed
from rutter_core.kernel.actors import OperatorActor

if TYPE_CHECKING:
    from rutter_core.app.facade import Rutter


# Checked by the access service (`invalid_scope`); stated in the schemas.
TokenScopeName = Annotated[StrictStr, allowed(TokenScope)]


class CreateTokenParams(Params):
    scope: TokenScopeName = Field(description="'read' (GET routes) or 'control' (every route)")
    user: StrictStr | None = Field(
        None,
        description="the person whose requests it makes (a PostgreSQL role; on SQLite only "
        "the operating-system user); default: the person creating it",
    )


class ListTokensParams(Params):
    all: StrictBool = Field(False, description="include revoked tokens")


class RevokeTokenParams(Params):
    token_id: StrictStr = Field(description="the token's ID (tok_...)")


class TokenOperations:
    def __init__(self, rutter: Rutter) -> None:
        self._rutter = rutter

    def create(self, params: CreateTokenParams, *, actor: OperatorActor) -> CreatedToken:
        return service.create_token(
            self._rutter.store, scope=params.scope, actor=actor, user=params.user
        )

    def list(self, params: ListTokensParams) -> TokenList:
        return service.list_tokens(self._rutter.store, include_revoked=params.all)

    def revoke(self, params: RevokeTokenParams) -> TokenRecord:
        return service.revoke_token(self._rutter.store, params.token_id)

    def authenticate(self, secret: str) -> Bearer | None:
        """The scope and person of the valid token whose secret this is, else None."""
        return service.authenticate(self._rutter.store, secret)


__all__ = [
    "Bearer",
    "CreateTokenParams",
    "CreatedToken",
    "ListTokensParams",
    "RevokeTokenParams",
    "TokenList",
    "TokenOperations",
    "TokenRecord",
    "TokenScope",
    "TokenScopeName",
]
