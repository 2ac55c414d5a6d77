"""Operations on explicit user and project memory: params and result models, and
`MemoryOperations`."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rutter_core.app.facade import Rutter


class MemoryOperations:
    def __init__(self, rutter: Rutter) -> None:
        self._rutter = rutter
