"""Who may change operator-owned records (memories, pins, run state): the operator surfaces
only; and who else may write what an agent may (a proposal, a checkpoint).

The actor is set by the surface itself (the CLI passes "cli", the language server "lsp", the
HTTP control API "http_control", the MCP server "mcp"), never taken from user or model input. A
model, tool or system actor is refused here and, for stored records, by CHECK constraints in the
store too. `mcp` is an agent, not an operator: it may propose pins and take checkpoints, never
write memories or pins (docs/reference/surfaces.md), and the store's CHECKs refuse it there as well.
"""

from __future__ import annotations

from typing import Final, Literal, TypeGuard

OperatorActor = Literal["cli", "lsp", "http_control"]
AgentActor = Literal["mcp"]
Actor = OperatorActor | AgentActor

OPERATOR_ACTORS: Final[tuple[OperatorActor, ...]] = ("cli", "lsp", "http_control")
"""The allowlist. The store's CHECK constraints repeat it: change both together (a migration)."""

AGENT_ACTORS: Final[tuple[AgentActor, ...]] = ("mcp",)
"""Actors that may propose and checkpoint (never write memories or pins)."""

ACTORS: Final[tuple[Actor, ...]] = (*OPERATOR_ACTORS, *AGENT_ACTORS)


def is_operator_actor(actor: object) -> TypeGuard[OperatorActor]:
    return isinstance(actor, str) and actor in OPERATOR_ACTORS


def is_actor(actor: object) -> TypeGuard[Actor]:
    """An operator surface or an agent surface (what may propose or take a checkpoint)."""
    return isinstance(actor, str) and actor in ACTORS


def require_operator(actor: object, *, what: str) -> OperatorActor:
    """`actor` when it is an operator surface; else `actor_not_allowed`, saying who may `what`
    (the refused actor is in the details: a surface's own name, never user input)."""
    if not is_operator_actor(actor):
        from rutter_core.kernel.errors import RejectedError

        raise RejectedError(
            "actor_not_allowed",
            f"only operator surfaces ({', '.join(OPERATOR_ACTORS)}) may {what}",
            details={"actor": str(actor), "allowed": list(OPERATOR_ACTORS)},
        )
    return actor


# -- people: who, beside which surface -----------------------------------------------------------
# Beside the surface, every record names the person it was written for (docs/team.md, "People"):
# the PostgreSQL role its transaction acted as (an HTTP request: its bearer's person), or the
# operating-system user of a SQLite store. The store fills these fields itself
# (`rutter_core.store.person_of`); no surface passes a person. A record written before the store
# recorded people (migrations 17 and 21) has null: unknown.

CREATED_BY_PERSON: Final = "who made it (null: made before people were recorded)"
"""The description of every `created_by_person` field."""

UPDATED_BY_PERSON: Final = "who changed it last (null: before people were recorded)"
"""The description of every `updated_by_person` field."""
