"""What a route accepts on the wire, derived from the app's params model (never redefined):
the params' fields, less those the path carries and those a server decides (a surface's
directory), with `version` named `expected_version` as docs/reference/surfaces.md names it.

The derived model keeps the params' base (its `extra="forbid"`, and `null` meaning "not
given"), so unknown fields are refused here as everywhere; the values are validated again by
the params model itself when the operation is called.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, create_model
from pydantic.fields import FieldInfo

from rutter_core.app.models import Params
from rutter_core.kernel.errors import UsageError


def _base(params: type[Params]) -> type[Params]:
    """The nearest ancestor that declares no field (its config and validators are kept)."""
    for cls in params.__mro__[1:]:
        if isinstance(cls, type) and issubclass(cls, Params) and not cls.model_fields:
            return cls
    return Params


def wire_model(
    name: str,
    params: type[Params],
    *,
    drop: Iterable[str] = (),
    renamed: Mapping[str, str] | None = None,
    extra: Mapping[str, tuple[Any, FieldInfo]] | None = None,
) -> type[BaseModel]:
    """`params`' fields less `drop`, each named as `renamed` says (params name → wire name),
    plus `extra`."""
    dropped = set(drop)
    names = renamed or {}
    fields: dict[str, Any] = {}
    for field_name, info in params.model_fields.items():
        if field_name in dropped:
            continue
        fields[names.get(field_name, field_name)] = (info.annotation, info)
    fields.update(extra or {})
    model: type[BaseModel] = create_model(name, __base__=_base(params), **fields)
    return model


def _accepts(annotation: Any, kind: type) -> bool:
    if annotation is kind or typing.get_origin(annotation) is kind:
        return True
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType or origin is typing.Annotated:
        return any(_accepts(arg, kind) for arg in typing.get_args(annotation))
    return False


def query_values(model: type[BaseModel], pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """A query string as the values of `model`: each name at most once, `true`/`false` for a
    boolean field, a decimal number for an integer field and one comma-separated list for a
    list field (`scopes=memory,note`); unknown names are passed on for the model to refuse."""
    values: dict[str, Any] = {}
    for key, raw in pairs:
        if key in values:
            raise UsageError("duplicate_parameter", "a query parameter is given more than once")
        info = model.model_fields.get(key)
        values[key] = raw if info is None else _typed(info.annotation, raw)
    return values


def _typed(annotation: Any, raw: str) -> Any:
    if _accepts(annotation, list) or _accepts(annotation, tuple):
        return raw.split(",")  # one comma-separated list (OpenAPI: form, explode false)
    if _accepts(annotation, bool) and raw in ("true", "false"):
        return raw == "true"
    if _accepts(annotation, int) and raw.lstrip("-").isdigit() and len(raw) <= 19 and raw.isascii():
        return int(raw)
    return raw
