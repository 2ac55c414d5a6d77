"""Base classes of the operation models: the single source of every JSON shape.

Each operation of the facade takes one `Params` model and returns one `Result` model. The CLI's
`--json`, the language server's custom requests, and later the HTTP API's OpenAPI document and
the MCP tools' schemas are all these models, so a field cannot mean one thing on one surface and
another elsewhere. Unknown fields are refused: a misspelt `retention` must not silently keep a
memory forever.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from pydantic import BaseModel, ConfigDict, TypeAdapter, WithJsonSchema, model_validator

from rutter_core.kernel.errors import Hint, UsageError

if TYPE_CHECKING:
    from pydantic import ValidationError


def allowed(annotation: Any) -> WithJsonSchema:
    """The JSON schema of `annotation` (a `Literal` of the closed set, or an `Annotated` type with
    its bounds) for a field the model takes as a plain string or int: the area's service checks
    the value and refuses it with its own typed code (`invalid_scope`, `invalid_limit`, ...),
    the same on every surface, while the schemas (LSP, MCP, OpenAPI, TypeScript) state what is
    allowed from the same declaration the service checks against."""
    return WithJsonSchema(TypeAdapter(annotation).json_schema())


def whole_number(minimum: int, maximum: int | None = None) -> WithJsonSchema:
    """`allowed` for a whole number from `minimum` (to `maximum`): the bounds its service
    enforces."""
    schema: dict[str, Any] = {"type": "integer", "minimum": minimum}
    if maximum is not None:
        schema["maximum"] = maximum
    return WithJsonSchema(schema)


class Params(BaseModel):
    """An operation's input. Strict about unknown fields; frozen once validated."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class NullMeansAbsent(Params):
    """An operation's input where a JSON `null` for one of its fields means the field was not
    given (clients send null for an option that is not set). Only the model's own fields: a key
    it does not have is refused whatever its value, `null` included. The schema says so: an
    optional field admits `null` there too."""

    model_config = ConfigDict(json_schema_extra=lambda schema, _model: _admit_null(schema))

    @model_validator(mode="before")
    @classmethod
    def _null_is_not_given(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        known = _known_keys(cls)
        return {key: value for key, value in data.items() if value is not None or key not in known}


_ANNOTATIONS: Final = frozenset({"title", "description", "default", "examples", "deprecated"})


def _admit_null(schema: dict[str, Any]) -> None:
    """Each optional property of `schema` also accepts `null` (what `NullMeansAbsent` reads as
    not given), so a client reading the schema knows null is allowed there."""
    required = set(schema.get("required", ()))
    properties: dict[str, dict[str, Any]] = schema.get("properties", {})
    for name, prop in properties.items():
        if name in required or {"type": "null"} in prop.get("anyOf", ()):
            continue
        value = {key: item for key, item in prop.items() if key not in _ANNOTATIONS}
        branches = value.pop("anyOf", None) or [value]
        kept = {key: item for key, item in prop.items() if key in _ANNOTATIONS}
        properties[name] = {"anyOf": [*branches, {"type": "null"}], **kept}


def _known_keys(model: type[BaseModel]) -> frozenset[str]:
    """The names (and aliases) of `model`'s fields."""
    keys: set[str] = set()
    for name, info in model.model_fields.items():
        keys.add(name)
        if info.alias is not None:
            keys.add(info.alias)
        if isinstance(info.validation_alias, str):
            keys.add(info.validation_alias)
    return frozenset(keys)


class Result(BaseModel):
    """An operation's answer. `to_json` is the document every surface prints or returns."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


_NAMEABLE_KEY: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,31}")


def nameable_key(key: str) -> bool:
    """Whether a key a client sent may be named back in an error: a short identifier that the
    redaction engine finds no secret in (`actor`, `runId`; not a token used as a key)."""
    if _NAMEABLE_KEY.fullmatch(key) is None:
        return False
    from rutter_core.discovery.redaction.engine import find_secrets

    return not find_secrets(key)


MAX_PROBLEMS: Final = 20
"""How many problems an `invalid_params` error lists (the message counts them all)."""


@dataclass(frozen=True, slots=True)
class ParamsProblem:
    """One thing wrong with a request's params: the field (`None` for the params as a whole or
    an unknown field that may not be named) and the rule it broke (pydantic's error type,
    `missing`, `unknown_field`, ...); `says` is its part of the message. Never a value."""

    field: str | None
    rule: str
    says: str

    def to_json(self) -> dict[str, str | None]:
        return {"field": self.field, "rule": self.rule}


def params_error(problems: Sequence[ParamsProblem], hint: Hint | None = None) -> UsageError:
    """The one `invalid_params` error of every surface: a message naming each problem's field
    and rule, and `details.problems` listing them as `{"field", "rule"}` (docs/reference/errors.md).
    An unknown field that may not be named is only counted."""
    unique = list(dict.fromkeys(problems))
    unknown = sum(1 for each in unique if each.rule == "unknown_field" and each.field is None)
    parts = list(
        dict.fromkeys(
            each.says for each in unique if each.rule != "unknown_field" or each.field is not None
        )
    )
    if unknown:
        parts.insert(0, "an unknown field" if unknown == 1 else f"{unknown} unknown fields")
    listed = list(dict.fromkeys(tuple(each.to_json().items()) for each in unique))
    return UsageError(
        "invalid_params",
        "invalid params: " + ("; ".join(parts) or "they do not fit"),
        details={"problems": [dict(each) for each in listed[:MAX_PROBLEMS]]},
        hint=hint,
    )


def unknown_field(path: Sequence[str | int]) -> ParamsProblem:
    """An unknown key at `path`: named only when the key is `nameable_key` (a key is the
    client's text too, and may hold anything, a secret included)."""
    key = path[-1] if path else None
    if isinstance(key, str) and nameable_key(key):
        field = _dotted(path)
        return ParamsProblem(field, "unknown_field", f"unknown field {field!r}")
    return ParamsProblem(None, "unknown_field", "an unknown field")


def validation_problems(
    error: ValidationError, known: frozenset[str] | None = None
) -> list[ParamsProblem]:
    """What was wrong, by field and rule, never by value. With `known` (the keys a request may
    send), a top-level key outside it is unknown whatever pydantic called it."""
    problems: list[ParamsProblem] = []
    for item in error.errors(include_url=False, include_input=False, include_context=False):
        loc = [part for part in item["loc"] if isinstance(part, str | int)]
        if item["type"] == "extra_forbidden" or (known is not None and loc and loc[0] not in known):
            problems.append(unknown_field(loc))
            continue
        field = _dotted(loc) or None
        if item["type"] == "missing":
            problems.append(ParamsProblem(field, "missing", f"missing field {field or 'params'!r}"))
        else:
            says = f"{field or 'params'!r}: {item['msg']}"
            problems.append(ParamsProblem(field, item["type"], says))
    return problems


def invalid_params(error: ValidationError, known: frozenset[str] | None = None) -> UsageError:
    """`error` (a params model refusing a request) as the one `invalid_params` error."""
    return params_error(validation_problems(error, known))


def _dotted(path: Sequence[str | int]) -> str:
    """`textDocument.uri`, `targets[2]`."""
    return ".".join(str(part) for part in path).replace(".[", "[")
