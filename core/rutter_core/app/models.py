"""Base classes of the operation models: the single source of every JSON shape.

Each operation of the facade takes one `Params` model and returns one `Result` model. The CLI's
`--json`, the language server's custom requests, and later the HTTP API's OpenAPI document and
the MCP tools' schemas are all these models, so a field cannot mean one thing on one surface and
another elsewhere. Unknown fields are refused: a misspelt `retention` must not silently keep a
memory forever.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Final

from pydantic import BaseModel, ConfigDict, TypeAdapter, WithJsonSchema, model_validator

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


def describe_validation(error: ValidationError, what: str, *, name_keys: bool = False) -> str:
    """What was wrong with `what` (params, arguments), by field, for the language server's and
    the MCP server's errors: never a value the client sent. An unknown field is named only with
    `name_keys` and when `nameable_key` (a key is the client's text too, and may hold anything,
    a secret included), else only counted as unknown. A known field is named: its name is the
    model's."""
    problems: list[str] = []
    unknown = 0
    for item in error.errors(include_url=False, include_input=False, include_context=False):
        where = ".".join(str(part) for part in item["loc"]) or what
        if item["type"] == "extra_forbidden":
            key = item["loc"][-1] if item["loc"] else None
            if name_keys and isinstance(key, str) and nameable_key(key):
                problems.append(f"unknown field {key!r}")
            else:
                unknown += 1
        elif item["type"] == "missing":
            problems.append(f"missing field {where!r}")
        else:
            problems.append(f"{where!r}: {item['msg']}")
    if unknown:
        problems.insert(0, "an unknown field" if unknown == 1 else f"{unknown} unknown fields")
    return f"invalid {what}: " + "; ".join(problems)
