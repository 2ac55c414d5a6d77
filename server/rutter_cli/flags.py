"""Help text for flags: `--json  Print one JSON document on stdout.`, not `--json  <bool>  ...`.

Typer (0.29) prints a type column for every option, and for an on/off flag that column says
`<bool>`, which reads as if the flag took a value. Typer has no setting for it, so the one
method that answers the column (`TyperOption.display_type_rich`) is wrapped here, once: a flag
without a metavar of its own shows no type; every other option is left as Typer shows it.
"""

from __future__ import annotations

from typing import Any

from typer.core import TyperOption

_MARK = "_rutter_hides_flag_types"


def hide_flag_types() -> None:
    """Leave the type column empty for flags (`--json`, `--all`, `--help`, ...); idempotent."""
    if getattr(TyperOption, _MARK, False):
        return
    shown = TyperOption.display_type_rich

    def display_type_rich(self: TyperOption, ctx: Any) -> str | None:
        if self.is_flag and self.metavar is None:
            return None
        return shown(self, ctx)

    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]
    setattr(TyperOption, _MARK, True)
