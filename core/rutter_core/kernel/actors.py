"""Who may change operator-owned records (memories, run state): the operator surfaces only.

The actor is set by the surface itself (the CLI passes "cli", the language server "lsp", the
HTTP control API "http_control"), never taken from user or model input. A model, tool or
system actor is refused here and, for stored records, by CHECK constraints in the store too.
"""

from __future__ import annotations

from typing import Final, Literal, TypeGuard

OperatorActor = Literal["cli", "lsp", "http_control"]

OPERATOR_ACTORS: Final[tuple[OperatorActor, ...]] = ("cli", "lsp", "http_control")
"""The allowlist. The store's CHECK constraints repeat it: change both together (a migration)."""


def is_operator_actor(actor: object) -> TypeGuard[OperatorActor]:
    return isinstance(actor, str) and actor in OPERATOR_ACTORS
