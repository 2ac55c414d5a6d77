"""The generated reference (`tools/reference.py`) is what the models say now: the JSON Schemas
of the app operations, the language server's requests and the MCP tools, the OpenAPI document,
and the VS Code extension's generated protocol types. A model changed without regenerating
fails here, naming the files (regenerate with `python tools/reference.py`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tools import reference

ROOT = Path(__file__).resolve().parent.parent


def test_every_generated_file_is_what_the_models_give_now() -> None:
    stale = [
        rel
        for rel, text in reference.generated_files().items()
        if not (ROOT / rel).is_file() or (ROOT / rel).read_text(encoding="utf-8") != text
    ]
    assert stale == [], f"regenerate with `python tools/reference.py`: {stale}"


def test_a_changed_file_is_named_as_differing(tmp_path: Path) -> None:
    files = reference.generated_files()
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    assert list(reference.differing(tmp_path)) == []
    (tmp_path / "docs/reference/schemas/lsp.json").write_text("{}\n", encoding="utf-8")
    (tmp_path / "editors/vscode/src/protocol.generated.ts").unlink()
    assert sorted(reference.differing(tmp_path)) == [
        "docs/reference/schemas/lsp.json",
        "editors/vscode/src/protocol.generated.ts",
    ]


def test_the_reference_lists_exactly_the_requests_the_server_registers() -> None:
    registered = reference.registered_requests()
    assert sorted(reference.LSP_OPERATIONS) == sorted(registered)
    documented = json.loads((ROOT / "docs/reference/schemas/lsp.json").read_text("utf-8"))
    assert sorted(documented["requests"]) == sorted(registered)


def test_each_request_documents_the_model_the_server_decodes_its_params_into() -> None:
    for method, params, _result in reference.lsp_requests():
        assert params is reference.registered_requests()[method], method


def test_each_operation_has_a_params_and_a_result_schema() -> None:
    document = reference.operations_document()
    operations = document["operations"]
    # Every area of the facade has operations, and each names its params and result.
    areas = {name.split(".", 1)[0] for name in operations}
    assert areas == set(reference.AREAS)
    for name, entry in operations.items():
        assert entry["params"], name
        assert entry["result"], name
    assert "instructions.effective" in operations
    # Streamed in process, one answer per target: listed, without a schema of their own.
    assert "instructions.effective_each" not in operations
    assert {"instructions.effective_each", "profiles.view_each"} <= set(document["streamed"])


def test_each_mcp_tool_has_its_input_schema() -> None:
    tools = reference.mcp_document()["tools"]
    assert len(tools) == len(reference.MCP_OPERATIONS)
    assert [tool["name"] for tool in tools]
    for tool in tools:
        assert tool["inputSchema"]["type"] == "object", tool["name"]


def test_the_typescript_names_every_request_and_notification() -> None:
    text = reference.typescript(reference.lsp_document())
    for method in [*reference.LSP_OPERATIONS, *reference.LSP_NOTIFICATIONS]:
        assert f'"{method}": ' in text, method
    assert "export interface Snapshot {" in text


def test_the_error_catalogue_names_codes_with_their_category_and_surface() -> None:
    from rutter_core.kernel.errors import DISCOVERY_ERROR_CODES

    codes = reference.error_codes()
    assert set(DISCOVERY_ERROR_CODES) <= set(codes)
    assert codes["not_registered"]["categories"] == {"not_found"}
    assert codes["invalid_ignore"]["categories"] == {"rejected"}
    assert "conflict" in codes["conflict"]["categories"]
    assert codes["unauthorized"] == {"categories": {"usage"}, "where": {"http"}}
    # Raised through a helper that takes the code as a parameter (`code="..."`).
    assert "invalid_title" in codes
    page = (ROOT / reference.ERRORS_PAGE).read_text("utf-8")
    for code in codes:
        assert f"| `{code}` |" in page, code


def test_the_errors_page_refuses_to_lose_its_markers() -> None:
    with pytest.raises(SystemExit, match="markers"):
        reference.errors_page("# Errors\nno markers\n")


def test_the_reference_lists_exactly_the_mcp_tools_and_what_each_answers() -> None:
    from rutter_mcp.tools import TOOLS

    assert sorted(reference.MCP_OPERATIONS) == sorted(tool.name for tool in TOOLS)
    areas = {operations: area for area, operations in reference.AREAS.items()}
    for tool in TOOLS:
        answers = tuple(
            f"{areas[operation.__qualname__.split('.')[0]]}.{operation.__name__}"
            for operation in tool.answers
        )
        assert answers == reference.MCP_OPERATIONS[tool.name], tool.name
    document = reference.mcp_document()
    operations = {found.name: found for found in reference.app_operations()}
    for tool in document["tools"]:
        assert tool["outputSchema"]["type"] == "object", tool["name"]
        for name in reference.MCP_OPERATIONS[tool["name"]]:
            assert operations[name].result, name  # each one a reference operation
    # instructions, a profile view or an assembly
    assert document["tools"][0]["outputSchema"]["anyOf"]
    for tool in document["tools"]:
        assert f"- {tool['name']}: " in document["instructions"]
