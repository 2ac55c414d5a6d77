"""Operations on runs and their pinned instructions: params and result models, and
`RunOperations`."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rutter_core.app.facade import Rutter


class RunOperations:
    def __init__(self, rutter: Rutter) -> None:
        self._rutter = rutter
