"""Operations on workspace registry: params and result models, and `WorkspaceOperations`."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rutter_core.app.facade import Rutter


class WorkspaceOperations:
    def __init__(self, rutter: Rutter) -> None:
        self._rutter = rutter
