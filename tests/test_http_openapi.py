"""The HTTP API's OpenAPI document (issue 17): built from the app's models, checked in as
docs/openapi.json (a change to a params or result model that is not regenerated fails here),
and every route's wire shape is its params model's fields and nothing else."""

from __future__ import annotations

import json
from pathlib import Path

from rutter_http.openapi import openapi_document
from rutter_http.routes import ROUTES

DOCUMENT = Path(__file__).resolve().parent.parent / "docs" / "openapi.json"


def test_the_checked_in_document_is_the_one_the_models_build() -> None:
    # Regenerate with: python tools/reference.py
    assert json.loads(DOCUMENT.read_text(encoding="utf-8")) == openapi_document()


def test_every_route_takes_its_params_fields_and_nothing_else() -> None:
    for route in ROUTES:
        wire = set(route.wire().model_fields)
        params = set(route.params.model_fields)
        expected = {
            route.renamed.get(name, name)
            for name in params - set(route.path_fields.values()) - set(route.drop)
        } | set(route.extra)
        assert wire == expected, route.operation_id
        assert "actor" not in wire
        assert set(route.path_fields.values()) <= params, route.operation_id


def test_every_mutation_needs_control_and_documents_its_refusals() -> None:
    document = openapi_document()
    for route in ROUTES:
        operation = document["paths"][f"/api/v1{route.path}"][route.method.lower()]
        statuses = set(operation["responses"])
        assert {"400", "401", "404", "422"} <= statuses
        if route.method != "GET":
            assert route.scope == "control"
            assert {"403", "409", "413"} <= statuses
            assert operation["requestBody"]["required"] is True
        else:
            assert route.scope == "read"
    assert document["openapi"].startswith("3.")
    assert document["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"


def test_history_read_documents_conflict_and_gone_and_scopes_is_one_comma_list() -> None:
    paths = openapi_document()["paths"]
    read = paths["/api/v1/history/read"]["get"]
    assert {"409", "410"} <= set(read["responses"])
    [scopes] = [p for p in paths["/api/v1/history/search"]["get"]["parameters"]
                if p["name"] == "scopes"]  # fmt: skip
    assert (scopes["schema"]["type"], scopes["style"], scopes["explode"]) == (
        "array",
        "form",
        False,
    )
    assert scopes["schema"]["items"]["enum"] == [
        "memory", "note", "message", "receipt", "summary", "checkpoint",
    ]  # fmt: skip
    # a route that cannot be gone does not say it can
    assert "410" not in paths["/api/v1/memories/{memory_id}"]["get"]["responses"]
