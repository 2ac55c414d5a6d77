"""`invalid_params` is one error document on every surface: built once by the app layer
(`rutter_core.app.models.invalid_params`), its problems listed as `{"field", "rule"}`, never a
value. The surfaces' own tests check it over the wire (test_http_api, test_mcp,
test_mcp_hardening, test_lsp_features, test_lsp_malformed); here the builder, and the CLI's
mapping of a params model's refusal."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout

import pytest
from pydantic import ValidationError

from rutter_cli.errors import EXIT_CODES, report
from rutter_cli.main import _params_refused
from rutter_core.app.instructions import EffectiveInstructionsParams
from rutter_core.app.memory import ListMemoriesParams
from rutter_core.app.models import ParamsProblem, invalid_params, params_error
from rutter_core.kernel.errors import ErrorCategory

SECRET = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"


def refusal(model: type[object], data: dict[str, object]) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        model.model_validate(data)  # type: ignore[attr-defined]
    return caught.value


def test_problems_name_fields_and_rules_never_values() -> None:
    error = invalid_params(
        refusal(ListMemoriesParams, {"limit": "many " + SECRET, "actor": SECRET, SECRET: 1})
    )
    document = error.to_json()
    assert document["code"] == "invalid_params"
    assert document["details"]["problems"] == [
        {"field": "limit", "rule": "int_type"},
        {"field": "actor", "rule": "unknown_field"},
        {"field": None, "rule": "unknown_field"},
    ]
    assert document["message"].startswith("invalid params: an unknown field; ")
    assert "unknown field 'actor'" in document["message"]
    assert "'limit'" in document["message"]
    assert SECRET not in json.dumps(document)


def test_a_refusal_of_the_whole_model_has_no_field() -> None:
    document = invalid_params(refusal(EffectiveInstructionsParams, {"target": "a.go"})).to_json()
    assert document["details"]["problems"] == [{"field": None, "rule": "value_error"}]
    assert "give workspace_id, or a directory inside the workspace" in document["message"]


def test_the_same_problem_is_listed_once_and_at_most_twenty() -> None:
    same = [ParamsProblem("a", "missing", "missing field 'a'")] * 3
    assert params_error(same).to_json()["details"]["problems"] == [
        {"field": "a", "rule": "missing"}
    ]
    many = [ParamsProblem(f"f{n}", "missing", f"missing field 'f{n}'") for n in range(30)]
    error = params_error(many)
    assert len(error.to_json()["details"]["problems"]) == 20
    assert "missing field 'f29'" in error.message


def test_the_cli_reports_a_params_model_refusal_as_every_surface_does() -> None:
    validation = refusal(ListMemoriesParams, {"limit": "x", "actor": "cli"})
    refused = _params_refused(validation)
    assert refused is not None
    out = io.StringIO()
    with redirect_stdout(out):
        code = report(refused, as_json=True)
    assert code == EXIT_CODES[ErrorCategory.USAGE]
    assert json.loads(out.getvalue()) == {"error": invalid_params(validation).to_json()}
    assert _params_refused(ValueError("not a params model")) is None
