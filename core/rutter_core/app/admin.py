"""Operations of a store's administrator (docs/team.md): `init` prepares the store for its
members, `check` says what state it is in (`Rutter(store).admin`).

The surface opens the store for each: migrated for `init` (the schema is init's first step),
as it is, without migrating, for `check`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field, StrictStr

from rutter_core.app.models import Params
from rutter_core.store.admin import DEFAULT_GROUP, StoreCheck, StoreInit, check, initialize

if TYPE_CHECKING:
    from rutter_core.app.facade import Rutter


class InitStoreParams(Params):
    group: StrictStr = Field(
        DEFAULT_GROUP,
        description="the members' group role (PostgreSQL; a plain lowercase SQL identifier)",
    )


class CheckStoreParams(Params):
    group: StrictStr = Field(
        DEFAULT_GROUP, description="the members' group role the connecting role should be in"
    )


class AdminOperations:
    def __init__(self, rutter: Rutter) -> None:
        self._rutter = rutter

    def init(self, params: InitStoreParams) -> StoreInit:
        """Prepare the store for its members: schema, extension, group role, grants."""
        return initialize(self._rutter.store, group=params.group)

    def check(self, params: CheckStoreParams) -> StoreCheck:
        """The store's state: schema version, extensions, text settings, row security, role."""
        return check(self._rutter.store, group=params.group)


__all__ = ["AdminOperations", "CheckStoreParams", "InitStoreParams", "StoreCheck", "StoreInit"]
