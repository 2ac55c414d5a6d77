"""The OpenAPI 3.1 document of `/api/v1`, built from `routes.ROUTES`: each route's query or
body schema is its wire model's (derived from the app's params model), each answer's schema
the app's result model's, and every failure the error document of docs/reference/errors.md. No
shape is written here but the error document's and the bearer scheme.

`docs/openapi.json` is this document, checked in; `tests/test_http_openapi.py` fails when
they differ (regenerate it with `python -m rutter_http.openapi > docs/openapi.json`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any, Final, Literal

from pydantic import BaseModel
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from rutter_core.app.facade import rutter_version
from rutter_http.routes import PREFIX, ROUTES, Route

REF: Final = "#/components/schemas/{model}"
ERROR_REF: Final = {"$ref": "#/components/schemas/ErrorDocument"}

ERROR_DOCUMENT: Final[dict[str, Any]] = {
    "title": "ErrorDocument",
    "description": "Every failure (docs/reference/errors.md): a stable code, a message that never "
    "repeats what the client sent, and, when there are any, the path, details and the "
    "structured hint.",
    "type": "object",
    "additionalProperties": False,
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "additionalProperties": False,
            "required": ["code", "message"],
            "properties": {
                "code": {"type": "string"},
                "message": {"type": "string"},
                "path": {"type": "string"},
                "details": {"type": "object"},
                "hint": {
                    "type": "object",
                    "required": ["fix"],
                    "properties": {"fix": {"type": "string"}},
                },
            },
        }
    },
}

ERRORS: Final[dict[int, str]] = {
    400: "Malformed: not strict JSON (a duplicate key, not one object, nested over 64 deep, "
    "a number out of range), a parameter given twice, a Host header that does not name the "
    "server, or an operation's usage error",
    401: "No bearer, or one that is unknown or revoked",
    403: "A read bearer on a route that changes state",
    404: "No such record (or route)",
    409: "Conflict: a stale version or fingerprint; re-read and retry",
    410: "Gone: the source a history handle names was deleted, disabled, superseded, expired "
    "or is not visible; no text is returned",
    413: "The body is over 1 MiB",
    415: "The body is not application/json",
    422: "Unknown or mistyped fields, or input the operation refuses",
    502: "The summarizer the server runs gave no usable summary (nothing was stored)",
    503: "The store is busy (another writer held it past the timeout); retry",
}
READ_ERRORS: Final = (400, 401, 404, 422, 503)
CONTROL_ERRORS: Final = (400, 401, 403, 404, 409, 413, 415, 422, 503)


Refs = Mapping[tuple[Any, JsonSchemaMode], dict[str, Any]]


def _operation(route: Route, refs: Refs, defs: dict[str, Any]) -> dict[str, Any]:
    wire = route.wire()
    parameters: list[dict[str, Any]] = [
        {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
        for name in route.path_fields
    ]
    operation: dict[str, Any] = {
        "operationId": route.operation_id,
        "summary": route.summary,
        "tags": [route.tag],
        "security": [{"bearer": []}],
    }
    wire_ref = refs[(wire, "validation")]
    if route.has_body:
        operation["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": wire_ref}},
        }
    else:
        schema = defs[wire_ref["$ref"].rsplit("/", 1)[1]]
        required = set(schema.get("required", ()))
        for name, prop in schema.get("properties", {}).items():
            parameter = {"name": name, "in": "query", "required": name in required,
                         "schema": _query_schema(prop)}  # fmt: skip
            if parameter["schema"].get("type") == "array":  # one comma-separated list
                parameter.update(style="form", explode=False)
            parameters.append(parameter)
    operation["parameters"] = parameters
    answer = "Created" if route.status == 201 else "OK"
    responses: dict[str, Any] = {
        str(route.status): {
            "description": answer,
            "content": {"application/json": {"schema": refs[(route.result, "serialization")]}},
        }
    }
    for status in sorted({*(CONTROL_ERRORS if route.has_body else READ_ERRORS), *route.errors}):
        responses[str(status)] = {
            "description": ERRORS[status],
            "content": {"application/json": {"schema": ERROR_REF}},
        }
    operation["responses"] = responses
    return operation


def _query_schema(prop: dict[str, Any]) -> dict[str, Any]:
    """A query parameter's schema: a query string cannot say null (leaving it out does)."""
    schema = {key: value for key, value in prop.items() if key != "anyOf"}
    if schema.get("default", 0) is None:
        del schema["default"]
    branches = [b for b in prop.get("anyOf", ()) if b != {"type": "null"}]
    if len(branches) == 1:  # the field's own keywords (e.g. an items enum) refine the branch
        for key, value in branches[0].items():
            mine = schema.get(key)
            if isinstance(mine, dict) and isinstance(value, dict):
                schema[key] = {**value, **mine}
            elif mine is None:
                schema[key] = value
    elif branches:
        schema["anyOf"] = branches
    return schema


def openapi_document() -> dict[str, Any]:
    """The document served at `/api/v1/openapi.json`."""
    wanted: list[tuple[type[BaseModel], JsonSchemaMode]] = []
    for route in ROUTES:
        wanted.append((route.wire(), "validation"))
        wanted.append((route.result, "serialization"))
    refs, top = models_json_schema(list(dict.fromkeys(wanted)), ref_template=REF)
    defs: dict[str, Any] = dict(top.get("$defs", {}))
    paths: dict[str, dict[str, Any]] = {}
    for route in ROUTES:
        method: Literal["get", "post", "patch", "delete"] = route.method.lower()  # type: ignore[assignment]
        paths.setdefault(f"{PREFIX}{route.path}", {})[method] = _operation(route, refs, defs)
    # Query models are spelled out as parameters, not referenced.
    for route in ROUTES:
        if not route.has_body:
            defs.pop(refs[(route.wire(), "validation")]["$ref"].rsplit("/", 1)[1], None)
    defs["ErrorDocument"] = ERROR_DOCUMENT
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "rutter HTTP API",
            "version": rutter_version() or "0",
            "description": "Which project instructions apply and why, pinned instructions of "
            "runs, explicit memory, session continuity, pins, history search and read, and context "
            "assembly with its audit. GET routes take a read or a "
            "control bearer; every other route needs a control bearer and a strict JSON body "
            "(at most 1 MiB, no duplicate or unknown fields).",
        },
        "paths": paths,
        "components": {
            "schemas": dict(sorted(defs.items())),
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }


def main() -> None:
    sys.stdout.write(json.dumps(openapi_document(), ensure_ascii=False, indent=2) + "\n")


if __name__ == "__main__":
    main()
