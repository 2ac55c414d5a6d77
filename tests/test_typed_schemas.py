"""Closed sets and numeric bounds are declared once (the area's `Literal`, the service's limits)
and every generated schema states them: the MCP tools' input schemas, the language server's
requests, the OpenAPI document and the VS Code extension's generated types.

The services still check the values, so a value outside a schema's set or bounds is refused
with the service's own typed code (`invalid_limit`, `invalid_page`, `invalid_budget`,
`invalid_scope`), not a bare `invalid_params`, on the command line, the language server and
HTTP alike; the bounds the tests send are read from the generated schemas, so a schema that
drifted from its service fails here."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args
from urllib.parse import urlencode

import pytest
import pytest_asyncio
from pygls.exceptions import JsonRpcException

from rutter_core.access.model import TokenScope
from rutter_core.app.profiles import AgentChoice
from rutter_core.assembly.model import MAX_BUDGET
from rutter_core.assembly.service import MAX_AUDIT_LIMIT
from rutter_core.continuity import model as continuity
from rutter_core.continuity.pins.model import Choice
from rutter_core.continuity.recent import MAX_RECENT
from rutter_core.continuity.transcripts.records import Agent
from rutter_core.history import model as history
from rutter_core.memory import model as memory
from rutter_core.memory.service import MAX_LIST_LIMIT
from rutter_core.runs.model import RunMode, RunStatus, RunStatusChange
from tests.conftest import write_tree
from tests.http_server import Answer, Server, serving
from tests.lsp_client import RutterClient, capabilities, folder, request, start, stop
from tests.testing import Cli
from tools import reference

ROOT = Path(__file__).resolve().parent.parent

# -- the generated documents ---------------------------------------------------------------------


def _resolve(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """`schema`, its `$ref` followed within `document` (`#/$defs/...`, `#/components/...`)."""
    while "$ref" in schema:
        node: Any = document
        for part in schema["$ref"].removeprefix("#/").split("/"):
            node = node[part]
        schema = node
    return schema


def _field(document: dict[str, Any], model: dict[str, Any], name: str) -> dict[str, Any]:
    """The schema of property `name` of `model`, without the `null` a client may also send."""
    prop = _resolve(document, model)["properties"][name]
    branches = [b for b in prop.get("anyOf", [prop]) if b != {"type": "null"}]
    assert len(branches) == 1, (name, prop)
    return _resolve(document, branches[0])


def _mcp_input(name: str) -> dict[str, Any]:
    [tool] = [tool for tool in reference.mcp_document()["tools"] if tool["name"] == name]
    schema: dict[str, Any] = tool["inputSchema"]
    return schema


def _enum(values: Any) -> dict[str, Any]:
    return {"type": "string", "enum": list(get_args(values))}


def _bounds(minimum: int, maximum: int | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {"type": "integer", "minimum": minimum}
    if maximum is not None:
        found["maximum"] = maximum
    return found


def _subset(schema: dict[str, Any], expected: dict[str, Any]) -> dict[str, Any]:
    return {key: schema.get(key) for key in expected}


MCP_FIELDS = [
    ("memory_list", "scope", _enum(memory.Scope)),
    ("memory_list", "limit", _bounds(1, MAX_LIST_LIMIT)),
    ("history_search", "limit", _bounds(1, history.MAX_LIMIT)),
    ("history_search", "query", {"type": "string", "minLength": 1, "maxLength": 256}),
    ("history_read", "page", _bounds(1)),
    ("effective_instructions", "budget", _bounds(1, MAX_BUDGET)),
    ("effective_instructions", "agent", _enum(AgentChoice)),
]


@pytest.mark.parametrize(("tool", "name", "expected"), MCP_FIELDS)
def test_an_mcp_tools_input_schema_states_the_set_or_the_bounds(
    tool: str, name: str, expected: dict[str, Any]
) -> None:
    schema = _mcp_input(tool)
    assert _subset(_field(schema, schema, name), expected) == expected


def test_history_searchs_scopes_are_each_one_of_the_history_scopes() -> None:
    schema = _mcp_input("history_search")
    scopes = _field(schema, schema, "scopes")
    assert scopes["type"] == "array"
    assert _subset(scopes["items"], _enum(history.SourceKind)) == _enum(history.SourceKind)
    assert list(history.SCOPES) == list(get_args(history.SourceKind))


LSP_FIELDS = [
    ("rutter/effectiveInstructions", "profile", _enum(AgentChoice)),
    ("rutter/session/import", "agent", _enum(Agent)),
    ("rutter/memory/list", "scope", _enum(memory.Scope)),
    ("rutter/memory/list", "limit", _bounds(1, MAX_LIST_LIMIT)),
    ("rutter/memory/create", "scope", _enum(memory.Scope)),
    ("rutter/memory/export", "scope", _enum(memory.Scope)),
    ("rutter/memory/setStatus", "status", _enum(memory.Status)),
    ("rutter/memory/edit", "version", _bounds(1)),
    ("rutter/createRun", "mode", _enum(RunMode)),
    ("rutter/setRunStatus", "status", _enum(RunStatusChange)),
    ("rutter/session/addMessage", "role", _enum(continuity.Role)),
    ("rutter/session/messages", "limit", _bounds(1, continuity.MAX_LIST_LIMIT)),
    ("rutter/session/messages", "before_seq", _bounds(1)),
    ("rutter/session/addNote", "kind", _enum(continuity.NoteKind)),
    ("rutter/session/editNote", "version", _bounds(1)),
    ("rutter/session/recent", "limit", _bounds(1, MAX_RECENT)),
    ("rutter/pin/answer", "choice", _enum(Choice)),
    ("rutter/pin/edit", "version", _bounds(1)),
    ("rutter/historySearch", "limit", _bounds(1, history.MAX_LIMIT)),
    ("rutter/historyRead", "page", _bounds(1)),
    ("rutter/contextAssemble", "budget", _bounds(1, MAX_BUDGET)),
    ("rutter/contextAudit", "limit", _bounds(1, MAX_AUDIT_LIMIT)),
]


@pytest.mark.parametrize(("method", "name", "expected"), LSP_FIELDS)
def test_a_language_server_request_states_the_set_or_the_bounds(
    method: str, name: str, expected: dict[str, Any]
) -> None:
    document = reference.lsp_document()
    params = document["requests"][method]["params"]
    assert _subset(_field(document, params, name), expected) == expected


def test_a_run_can_be_moved_to_every_status_but_created() -> None:
    assert set(get_args(RunStatusChange)) == set(get_args(RunStatus)) - {"created"}


def _openapi_query(operation_id: str, name: str) -> dict[str, Any]:
    document = reference.openapi_document()
    for path in document["paths"].values():
        for operation in path.values():
            if operation["operationId"] == operation_id:
                [parameter] = [p for p in operation["parameters"] if p["name"] == name]
                schema: dict[str, Any] = parameter["schema"]
                return schema
    raise AssertionError(operation_id)


def _openapi_body(operation_id: str, name: str) -> dict[str, Any]:
    document = reference.openapi_document()
    for path in document["paths"].values():
        for operation in path.values():
            if operation["operationId"] == operation_id:
                body = operation["requestBody"]["content"]["application/json"]["schema"]
                return _field(document, body, name)
    raise AssertionError(operation_id)


def test_the_openapi_document_states_the_sets_and_bounds() -> None:
    assert _subset(_openapi_query("list_memories", "scope"), _enum(memory.Scope)) == _enum(
        memory.Scope
    )
    limit = _bounds(1, MAX_LIST_LIMIT)
    assert _subset(_openapi_query("list_memories", "limit"), limit) == limit
    hits = _bounds(1, history.MAX_LIMIT)
    assert _subset(_openapi_query("history_search", "limit"), hits) == hits
    assert _subset(_openapi_query("history_read", "page"), _bounds(1)) == _bounds(1)
    assert _openapi_query("history_search", "scopes")["items"]["enum"] == list(history.SCOPES)
    create = _enum(memory.Scope)
    assert _subset(_openapi_body("create_memory", "scope"), create) == create
    status = _enum(memory.Status)
    assert _subset(_openapi_body("edit_memory", "status"), status) == status
    budget = _bounds(1, MAX_BUDGET)
    assert _subset(_openapi_body("assemble_context", "budget"), budget) == budget


def test_an_optional_field_that_reads_null_as_absent_says_so_in_its_schema() -> None:
    """The params that read `null` as "not given" accept it: the schema says so (a client
    sending null for an unset option is not told it broke the schema)."""
    schema = _mcp_input("memory_list")
    assert {"type": "null"} in schema["properties"]["limit"]["anyOf"]
    assert {"type": "null"} in schema["properties"]["all"]["anyOf"]
    # A required field stays non-null: null there is the field missing.
    create = reference.lsp_document()
    params = _resolve(create, create["requests"]["rutter/memory/create"]["params"])
    assert params["properties"]["title"] == {"title": "Title", "type": "string"}


def test_the_token_scopes_are_one_declaration_for_the_cli_and_the_http_routes() -> None:
    from rutter_core.app.tokens import CreateTokenParams
    from rutter_http.routes import ROUTES

    scope = CreateTokenParams.model_json_schema()["properties"]["scope"]
    assert scope["enum"] == list(get_args(TokenScope))
    assert {route.scope for route in ROUTES} == set(get_args(TokenScope))


def test_the_extensions_generated_types_carry_the_sets() -> None:
    text = (ROOT / "editors/vscode/src/protocol.generated.ts").read_text("utf-8")
    assert 'role: "user" | "assistant" | "tool" | "system";' in text
    assert 'status: "running" | "paused" | "completed" | "failed" | "cancelled";' in text
    assert 'choice: "pin" | "discuss" | "custom";' in text
    assert 'agent: "claude-code" | "codex";' in text


# -- the same typed code on every surface --------------------------------------------------------


@dataclass(frozen=True)
class Refusal:
    """One value outside a schema's set or bounds: the service's code, and how each surface
    is asked (CLI arguments, LSP method and params, HTTP method, path and query or body)."""

    code: str
    cli: tuple[str, ...]
    lsp: tuple[str, dict[str, Any]]
    http: tuple[str, str, dict[str, Any]]


def _refusals(run_id: str, thread_id: str) -> dict[str, Refusal]:
    lsp = reference.lsp_document()

    def bound(method: str, name: str, key: str) -> int:
        value: int = _field(lsp, lsp["requests"][method]["params"], name)[key]
        return value

    memories = bound("rutter/memory/list", "limit", "maximum") + 1
    hits = bound("rutter/historySearch", "limit", "maximum") + 1
    page = bound("rutter/historyRead", "page", "minimum") - 1
    budget = bound("rutter/contextAssemble", "budget", "maximum") + 1
    audit = bound("rutter/contextAudit", "limit", "maximum") + 1
    messages = bound("rutter/session/messages", "limit", "maximum") + 1
    outside = "team"
    assert outside not in get_args(memory.Scope)
    return {
        "memory limit": Refusal(
            "invalid_limit",
            ("context", "memory", "list", "--limit", str(memories)),
            ("rutter/memory/list", {"limit": memories}),
            ("GET", "memories", {"limit": memories}),
        ),
        "history limit": Refusal(
            "invalid_limit",
            ("history", "search", "abc", "--limit", str(hits)),
            ("rutter/historySearch", {"query": "abc", "limit": hits}),
            ("GET", "history/search", {"query": "abc", "limit": hits}),
        ),
        "history page": Refusal(
            "invalid_page",
            ("history", "read", "rh1.x", "--page", str(page)),
            ("rutter/historyRead", {"handle": "rh1.x", "page": page}),
            ("GET", "history/read", {"handle": "rh1.x", "page": page}),
        ),
        "budget": Refusal(
            "invalid_budget",
            ("context", "assemble", "--run", run_id, "--budget", str(budget)),
            ("rutter/contextAssemble", {"run_id": run_id, "budget": budget}),
            ("POST", f"runs/{run_id}/context/assemble", {"budget": budget}),
        ),
        "audit limit": Refusal(
            "invalid_limit",
            ("context", "audit", run_id, "--limit", str(audit)),
            ("rutter/contextAudit", {"run_id": run_id, "limit": audit}),
            ("GET", f"runs/{run_id}/context/audit", {"limit": audit}),
        ),
        "memory scope": Refusal(
            "invalid_scope",
            ("context", "memory", "create", "--scope", outside, "--title", "t", "--content", "c"),
            ("rutter/memory/create", {"scope": outside, "title": "t", "content": "c"}),
            ("POST", "memories", {"scope": outside, "title": "t", "content": "c"}),
        ),
        "messages limit": Refusal(
            "invalid_limit",
            ("session", "messages", thread_id, "--limit", str(messages)),
            ("rutter/session/messages", {"thread_id": thread_id, "limit": messages}),
            ("", "", {}),  # no HTTP route lists messages
        ),
    }


@dataclass
class Surfaces:
    cli: Cli
    server: Server
    refusals: dict[str, Refusal]
    root: Path


CASES = [
    "memory limit",
    "history limit",
    "history page",
    "budget",
    "audit limit",
    "memory scope",
    "messages limit",
]


@pytest.fixture(scope="module")
def surfaces(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Surfaces]:
    base = tmp_path_factory.mktemp("typed")
    root = (base / "ws").resolve()
    write_tree(root, {"AGENTS.md": "rules\n", "src/a.go": "package a\n"})
    cli = Cli(base / "home", root)
    cli.json("workspace", "register", "demo", str(root))
    run: dict[str, Any] = cli.json("run", "create", "--workspace", "demo", "--goal", "g")
    refusals = _refusals(run["run_id"], run["thread_id"])
    with serving(cli) as server:
        yield Surfaces(cli, server, refusals, root)


@pytest.mark.parametrize("case", CASES)
def test_the_cli_refuses_with_the_services_code(surfaces: Surfaces, case: str) -> None:
    refusal = surfaces.refusals[case]
    refused = surfaces.cli.json(*refusal.cli, "--json", code=2)
    assert refused["error"]["code"] == refusal.code


@pytest.mark.parametrize("case", [case for case in CASES if case != "messages limit"])
def test_http_refuses_with_the_services_code(surfaces: Surfaces, case: str) -> None:
    method, path, values = surfaces.refusals[case].http
    answer: Answer
    if method == "GET":
        answer = surfaces.server.get(f"{path}?{urlencode(values)}")
    else:
        answer = surfaces.server.control_call(method, path, values)
    assert (answer.status, answer.code) == (400, surfaces.refusals[case].code), answer.text


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def lsp(surfaces: Surfaces) -> AsyncIterator[RutterClient]:
    client = await start(
        surfaces.cli.home, capabilities("visual_studio_code"), [folder(surfaces.root)]
    )
    yield client
    await stop(client)


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("case", CASES)
async def test_the_language_server_refuses_with_the_services_code(
    surfaces: Surfaces, lsp: RutterClient, case: str
) -> None:
    method, params = surfaces.refusals[case].lsp
    if method == "rutter/memory/create":
        params = {**params, "uri": (surfaces.root / "AGENTS.md").as_uri()}
    with pytest.raises(JsonRpcException) as raised:
        await request(lsp, method, params)
    data: Any = raised.value.data
    assert (raised.value.code, data["code"]) == (-32602, surfaces.refusals[case].code)


def test_the_bound_itself_is_accepted(surfaces: Surfaces) -> None:
    """The schema's bound is the service's: one past it is refused (above), the bound itself
    is answered."""
    lsp = reference.lsp_document()

    def bound(method: str, name: str) -> str:
        return str(_field(lsp, lsp["requests"][method]["params"], name)["maximum"])

    cli = surfaces.cli
    listed = cli.json("context", "memory", "list", "--limit", bound("rutter/memory/list", "limit"))
    assert listed["has_more"] is False
    found = cli.json("history", "search", "abc", "--limit", bound("rutter/historySearch", "limit"))
    assert found["hits"] == []
    run_id = surfaces.refusals["budget"].cli[3]
    budget = bound("rutter/contextAssemble", "budget")
    assembled = cli.json("context", "assemble", "--run", run_id, "--budget", budget)
    assert assembled["budget"]["background"] == int(budget)
    audit = cli.json("context", "audit", run_id, "--limit", bound("rutter/contextAudit", "limit"))
    assert len(audit["assemblies"]) >= 1
