"""The generated half of the reference: every shape a client can rely on, written from the
pydantic models that validate and answer it, so the files cannot say one thing while the code
does another.

- `docs/reference/schemas/operations.json`: each app operation (`Rutter.<area>.<name>`), its
  params and its result.
- `docs/reference/schemas/lsp.json`: each `rutter/*` request of the language server (params and
  result) and each notification it sends.
- `docs/reference/schemas/mcp.json`: each MCP tool as `tools/list` announces it.
- `docs/openapi.json`: the HTTP API (`rutter_http.openapi`).
- `editors/vscode/src/protocol.generated.ts`: the language server's shapes as TypeScript, for the
  VS Code extension.
- the table of error codes in `docs/reference/errors.md` (between its `generated` markers): every
  code raised in the source with its category, and what each surface makes of that category.

Run `python tools/reference.py` from the repository root to write them; `--check` only says
which differ. `tests/test_reference_schemas.py` regenerates them in memory and fails on any
difference.

Why one module: every file is one view of the same models, written in one pass and checked
in one comparison; the parts (operation and method tables, schemas, the TypeScript emitter, the
error scan) are small and only meaningful together.
"""

from __future__ import annotations

import argparse
import ast
import collections.abc
import functools
import importlib
import inspect
import json
import re
import sys
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel, TypeAdapter
from pydantic.json_schema import JsonSchemaMode

ROOT: Final = Path(__file__).resolve().parent.parent
SCHEMA_DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"

# -- app operations ------------------------------------------------------------------------------

AREAS: Final = {
    "workspaces": "WorkspaceOperations",
    "instructions": "InstructionOperations",
    "profiles": "ProfileOperations",
    "runs": "RunOperations",
    "memory": "MemoryOperations",
    "candidates": "CandidateOperations",
    "continuity": "ContinuityOperations",
    "branches": "BranchOperations",
    "history": "HistoryOperations",
    "pins": "PinOperations",
    "transcripts": "TranscriptOperations",
    "assembly": "AssemblyOperations",
    "tokens": "TokenOperations",
    "compaction": "CompactionOperations",
    "receipts": "ReceiptOperations",
    "admin": "AdminOperations",
}
"""Each attribute of the facade (`rutter_core.app.facade.Rutter`) and its operations class."""

STREAMS: Final = (collections.abc.Iterator, collections.abc.Iterable, collections.abc.Generator)
"""An operation answering one of these (`instructions.effective_each`, `profiles.view_each`)
streams (target, answer or typed error) pairs in process, one per target: the CLI prints each as
a JSON line holding the document of the single-target operation, so it has no schema of its
own (`operations.json` names them under `streamed`)."""


@dataclass(frozen=True)
class Operation:
    name: str
    """`area.method`, as called on the facade."""
    params: Any
    result: Any
    summary: str


def _first_line(doc: str | None) -> str:
    if not doc:
        return ""
    return " ".join(inspect.cleandoc(doc).split("\n\n", 1)[0].split())


def _params_models(annotation: Any) -> bool:
    from rutter_core.app.models import Params

    options = typing.get_args(annotation) if _is_union(annotation) else (annotation,)
    return any(isinstance(option, type) and issubclass(option, Params) for option in options)


def _is_union(annotation: Any) -> bool:
    return typing.get_origin(annotation) in (typing.Union, types.UnionType)


@functools.cache
def app_operations() -> tuple[Operation, ...]:
    """Every public method of the facade's areas that takes a params model (`params`)."""
    found: list[Operation] = []
    for area, class_name in AREAS.items():
        module = importlib.import_module(f"rutter_core.app.{area}")
        operations = getattr(module, class_name)
        for name, function in sorted(inspect.getmembers(operations, inspect.isfunction)):
            if name.startswith("_"):
                continue
            hints = typing.get_type_hints(function, globalns=vars(module))
            if "params" not in hints or not _params_models(hints["params"]):
                continue
            qualified = f"{area}.{name}"
            if typing.get_origin(hints["return"]) in STREAMS:
                continue
            summary = _first_line(function.__doc__)
            found.append(Operation(qualified, hints["params"], hints["return"], summary))
    return tuple(found)


# -- language server -----------------------------------------------------------------------------


@dataclass(frozen=True)
class LspRequest:
    method: str
    operation: str
    """The app operation whose answer this is, or "" when `result` says what it is."""
    result: Any = None


def _lsp_results() -> dict[str, Any]:
    """What a request answers with where it is not its app operation's result."""
    from rutter_core.app.profiles import ProfileView, ProfileViews
    from rutter_core.discovery.snapshot import Snapshot
    from rutter_core.runs.model import ActiveRuns, RunRecord
    from rutter_lsp.features.branches.confirmation import CancelledBranch
    from rutter_lsp.features.memory.memory import CancelledDelete

    return {
        "rutter/effectiveInstructions": Snapshot | ProfileView | ProfileViews,
        "rutter/runs": ActiveRuns,
        "rutter/setRunStatus": RunRecord,
        "rutter/memory/delete": _result_of("memory.delete") | CancelledDelete,
        "rutter/session/fork": _result_of("branches.fork") | CancelledBranch,
        "rutter/session/resume": _result_of("branches.resume") | CancelledBranch,
    }


LSP_OPERATIONS: Final = {
    "rutter/effectiveInstructions": "",
    "rutter/runs": "",
    "rutter/runInstructions": "runs.inspect",
    "rutter/confirmRefresh": "runs.confirm_refresh",
    "rutter/createRun": "runs.create",
    "rutter/setRunStatus": "",
    "rutter/memory/list": "memory.list",
    "rutter/memory/get": "memory.get",
    "rutter/memory/create": "memory.create",
    "rutter/memory/edit": "memory.edit",
    "rutter/memory/setStatus": "memory.set_status",
    "rutter/memory/delete": "",
    "rutter/memory/export": "memory.export",
    "rutter/memory/candidates": "candidates.list",
    "rutter/memory/candidate": "candidates.get",
    "rutter/memory/confirmCandidate": "candidates.confirm",
    "rutter/memory/ignoreCandidate": "candidates.ignore",
    "rutter/session/addMessage": "continuity.add_message",
    "rutter/session/messages": "continuity.messages",
    "rutter/session/addNote": "continuity.add_note",
    "rutter/session/notes": "continuity.notes",
    "rutter/session/editNote": "continuity.edit_note",
    "rutter/session/supersedeNote": "continuity.supersede_note",
    "rutter/session/checkpoint": "continuity.checkpoint",
    "rutter/session/node": "continuity.node",
    "rutter/session/fork": "",
    "rutter/session/resume": "",
    "rutter/session/tree": "branches.tree",
    "rutter/session/compare": "branches.compare",
    "rutter/session/recent": "branches.recent",
    "rutter/session/import": "transcripts.import_transcript",
    "rutter/pin/list": "pins.list",
    "rutter/pin/add": "pins.add",
    "rutter/pin/edit": "pins.edit",
    "rutter/pin/remove": "pins.remove",
    "rutter/pin/proposals": "pins.proposals",
    "rutter/pin/answer": "pins.answer",
    "rutter/historySearch": "history.search",
    "rutter/historyRead": "history.read",
    "rutter/contextAssemble": "assembly.assemble",
    "rutter/contextAudit": "assembly.audit",
    "rutter/contextReport": "assembly.report",
    "rutter/session/compact": "compaction.compact",
    "rutter/session/compactionResolve": "compaction.resolve",
    "rutter/session/receiptRead": "receipts.read",
}
"""Each `rutter/*` request and the app operation whose result it answers with ("": the answer
is in `_lsp_results`). `tests/test_reference_schemas.py` checks this names exactly the requests
the server registers."""


class InstructionsChanged(BaseModel):
    """`rutter/instructionsChanged`: the effective instructions of these open files of one
    workspace may have changed; ask again."""

    workspace_id: str
    paths: list[str]


class WorkspacesChanged(BaseModel):
    """`rutter/runsChanged`, `rutter/sessionsChanged`, `rutter/pinProposalsChanged`: the runs,
    continuity data or pending pin proposals of these workspaces changed (written by any
    process); ask again."""

    workspace_ids: list[str]


LSP_NOTIFICATIONS: Final[dict[str, type[BaseModel]]] = {
    "rutter/instructionsChanged": InstructionsChanged,
    "rutter/runsChanged": WorkspacesChanged,
    "rutter/sessionsChanged": WorkspacesChanged,
    "rutter/pinProposalsChanged": WorkspacesChanged,
}
"""What the server sends on its own (server → client), and the params of each."""


def _result_of(operation: str) -> Any:
    return {found.name: found.result for found in app_operations()}[operation]


@functools.cache
def registered_requests() -> dict[str, type[BaseModel]]:
    """The `rutter/*` requests a fresh server registers, and the model of each one's params."""
    from rutter_lsp.dispatch import REQUEST_MODELS
    from rutter_lsp.setup import create_server

    create_server()
    return {
        method: model for method, model in REQUEST_MODELS.items() if method.startswith("rutter/")
    }


def lsp_requests() -> list[tuple[str, Any, Any]]:
    """(method, params, result) of every `rutter/*` request, in the server's order."""
    operations = {found.name: found.result for found in app_operations()}
    overrides = _lsp_results()
    registered = registered_requests()
    return [
        (method, registered[method], overrides.get(method) or operations[LSP_OPERATIONS[method]])
        for method in LSP_OPERATIONS
    ]


# -- schemas -------------------------------------------------------------------------------------


def _schemas(
    wanted: list[tuple[str, JsonSchemaMode, Any]],
) -> tuple[dict[tuple[str, JsonSchemaMode], dict[str, Any]], dict[str, Any]]:
    """One schema per (key, mode, type), their models shared under `$defs`."""
    inputs = [(key, mode, TypeAdapter(annotation)) for key, mode, annotation in wanted]
    refs, top = TypeAdapter.json_schemas(inputs, ref_template="#/$defs/{model}")
    return dict(refs), dict(sorted(top.get("$defs", {}).items()))


def streamed_operations() -> list[str]:
    """The operations that take a params model and stream their answers (`STREAMS`)."""
    streamed = []
    for area, class_name in AREAS.items():
        module = importlib.import_module(f"rutter_core.app.{area}")
        for name, function in sorted(inspect.getmembers(getattr(module, class_name))):
            if name.startswith("_") or not inspect.isfunction(function):
                continue
            hints = typing.get_type_hints(function, globalns=vars(module))
            if "params" in hints and typing.get_origin(hints["return"]) in STREAMS:
                streamed.append(f"{area}.{name}")
    return streamed


def operations_document() -> dict[str, Any]:
    operations = app_operations()
    wanted: list[tuple[str, JsonSchemaMode, Any]] = []
    for operation in operations:
        wanted += [
            (operation.name, "validation", operation.params),
            (operation.name, "serialization", operation.result),
        ]
    refs, defs = _schemas(wanted)
    return {
        "$schema": SCHEMA_DIALECT,
        "title": "rutter app operations",
        "description": "Each operation of the app facade every surface calls "
        "(`Rutter.<area>.<operation>`): the params it validates and the document it answers "
        "with (what the CLI's --json prints). See docs/reference/index.md.",
        "streamed": streamed_operations(),
        "operations": {
            operation.name: {
                "summary": operation.summary,
                "params": refs[(operation.name, "validation")],
                "result": refs[(operation.name, "serialization")],
            }
            for operation in operations
        },
        "$defs": defs,
    }


def lsp_document() -> dict[str, Any]:
    requests = lsp_requests()
    wanted: list[tuple[str, JsonSchemaMode, Any]] = []
    for method, params, result in requests:
        wanted += [(method, "validation", params), (method, "serialization", result)]
    for method, model in LSP_NOTIFICATIONS.items():
        wanted.append((method, "serialization", model))
    refs, defs = _schemas(wanted)
    return {
        "$schema": SCHEMA_DIALECT,
        "title": "rutter language server: custom requests and notifications",
        "description": "Each `rutter/*` request (client to server; params are one JSON object, "
        "unknown fields refused) with its result, and each notification the server sends. A "
        "failed request is a JSON-RPC error whose `data` is the error document "
        "(docs/reference/errors.md).",
        "requests": {
            method: {
                "params": refs[(method, "validation")],
                "result": refs[(method, "serialization")],
            }
            for method, _params, _result in requests
        },
        "notifications": {
            method: {"params": refs[(method, "serialization")]} for method in LSP_NOTIFICATIONS
        },
        "$defs": defs,
    }


MCP_OPERATIONS: Final = {
    "effective_instructions": ("profiles.effective_or_view", "assembly.assemble"),
    "context_pin_propose": ("pins.propose",),
    "context_pin_proposals": ("pins.own_proposals",),
    "checkpoint_create": ("continuity.checkpoint",),
    "context_report": ("assembly.report",),
    "memory_list": ("memory.list",),
    "history_search": ("history.search",),
    "history_read": ("history.read",),
    "receipt_read": ("receipts.read",),
}
"""Each MCP tool and the app operations whose result it answers with (`effective_instructions`
answers an assembly when given `run_id`): the tools' output schemas come from these results.
`tests/test_reference_schemas.py` checks this names exactly the server's tools and the
operations each declares."""


def mcp_document() -> dict[str, Any]:
    from rutter_mcp.server import instructions, tool_list

    return {
        "title": "rutter MCP server: tools",
        "description": "Each tool as `rutter mcp` lists it (`tools/list`): the input schema it "
        "validates its arguments against, and the output schema of the document it answers "
        "with (as structured content, and the same JSON as text), the result of the app "
        "operation it calls. A failure is a tool error carrying the error document "
        "(docs/reference/errors.md). `instructions`: what the server tells a client when it "
        "connects.",
        "instructions": instructions(),
        "tools": [
            tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tool_list()
        ],
    }


def openapi_document() -> dict[str, Any]:
    from rutter_http.openapi import openapi_document as document

    return document()


# -- TypeScript ----------------------------------------------------------------------------------

TS_HEADER: Final = """\
// Generated by tools/reference.py from the language server's pydantic models
// (docs/reference/schemas/lsp.json). Do not edit: change the models, then run
// `python tools/reference.py`; tests/test_reference_schemas.py fails while this file differs.
"""


def _ts_name(name: str) -> str:
    return re.sub(r"\W", "_", name)


def _ts_string(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _ts_type(schema: dict[str, Any] | bool, indent: str = "") -> str:
    if schema is True or schema == {}:
        return "unknown"
    if schema is False:
        return "never"
    assert isinstance(schema, dict)
    if "$ref" in schema:
        return _ts_name(schema["$ref"].rsplit("/", 1)[1])
    if "const" in schema:
        return _ts_string(schema["const"])
    if "enum" in schema:
        return " | ".join(_ts_string(value) for value in schema["enum"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return " | ".join(dict.fromkeys(_ts_type(part, indent) for part in schema[key]))
    if "allOf" in schema:
        return " & ".join(_ts_type(part, indent) for part in schema["allOf"])
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(_ts_type({**schema, "type": one}, indent) for one in kind)
    if kind == "string":
        return "string"
    if kind in ("integer", "number"):
        return "number"
    if kind == "boolean":
        return "boolean"
    if kind == "null":
        return "null"
    if kind == "array":
        if "prefixItems" in schema:
            items = ", ".join(_ts_type(part, indent) for part in schema["prefixItems"])
            return f"[{items}]"
        item = _ts_type(schema.get("items", {}), indent)
        return f"({item})[]" if " " in item else f"{item}[]"
    if kind == "object" or "properties" in schema:
        return _ts_object(schema, indent)
    return "unknown"


def _ts_object(schema: dict[str, Any], indent: str) -> str:
    properties: dict[str, Any] = schema.get("properties", {})
    extra = schema.get("additionalProperties")
    if not properties:
        if isinstance(extra, dict):
            return f"Record<string, {_ts_type(extra, indent)}>"
        return "Record<string, unknown>"
    required = set(schema.get("required", ()))
    inner = indent + "  "
    lines = ["{"]
    for name, prop in properties.items():
        description = prop.get("description") if isinstance(prop, dict) else None
        if description:
            lines.append(f"{inner}/** {_ts_comment(description)} */")
        key = name if re.fullmatch(r"[A-Za-z_$][\w$]*", name) else _ts_string(name)
        optional = "" if name in required else "?"
        lines.append(f"{inner}{key}{optional}: {_ts_type(prop, inner)};")
    if isinstance(extra, dict):
        lines.append(f"{inner}[key: string]: {_ts_type(extra, inner)};")
    lines.append(f"{indent}}}")
    return "\n".join(lines)


def _ts_comment(text: str) -> str:
    return " ".join(text.split()).replace("*/", "*\u2215")


def typescript(document: dict[str, Any]) -> str:
    """The language server's shapes as TypeScript: one type per `$defs` model, then the
    requests and notifications by method."""
    out = [TS_HEADER]
    for name, schema in document["$defs"].items():
        description = schema.get("description")
        if description:
            out.append(f"/** {_ts_comment(description)} */")
        body = _ts_type({key: value for key, value in schema.items() if key != "title"})
        if body.startswith("{"):
            out.append(f"export interface {_ts_name(name)} {body}\n")
        else:
            out.append(f"export type {_ts_name(name)} = {body};\n")
    out.append("/** Each `rutter/*` request: its params and its result. */")
    out.append("export interface Requests {")
    for method, entry in document["requests"].items():
        params, result = _ts_type(entry["params"], "  "), _ts_type(entry["result"], "  ")
        out.append(f"  {_ts_string(method)}: {{ params: {params}; result: {result} }};")
    out.append("}\n")
    out.append("/** Each notification the server sends (server → client): its params. */")
    out.append("export interface Notifications {")
    for method, entry in document["notifications"].items():
        out.append(f"  {_ts_string(method)}: {_ts_type(entry['params'], '  ')};")
    out.append("}\n")
    out.append("export type RequestMethod = keyof Requests;")
    out.append('export type ParamsOf<M extends RequestMethod> = Requests[M]["params"];')
    out.append('export type ResultOf<M extends RequestMethod> = Requests[M]["result"];')
    out.append("export type NotificationMethod = keyof Notifications;")
    return "\n".join(out) + "\n"


# -- error codes ---------------------------------------------------------------------------------

ERRORS_PAGE: Final = "docs/reference/errors.md"
BEGIN: Final = "<!-- generated by tools/reference.py: error codes -->"
END: Final = "<!-- end of generated error codes -->"
SCANNED: Final = ("core/rutter_core", "server")

_CATEGORY_OF_CLASS: Final = {
    "RutterError": "internal",
    "StoreError": "internal",
    "UsageError": "usage",
    "HttpError": "usage",
    "RejectedError": "rejected",
    "DiscoveryError": "rejected",
    "ConflictError": "conflict",
    "NotFoundError": "not_found",
    "DiscoveryNotFoundError": "not_found",
}
"""Each class of the error hierarchy (`rutter_core.kernel.errors`, and the HTTP layer's own
`HttpError`) and its category."""


def _where(path: Path) -> str:
    """The area (core) or surface (server) a module belongs to."""
    parts = path.relative_to(ROOT).parts
    if parts[0] == "core":
        return parts[2] if len(parts) > 3 else "kernel"
    return {
        "rutter_cli": "cli",
        "rutter_lsp": "lsp",
        "rutter_mcp": "mcp",
        "rutter_http": "http",
    }.get(parts[1], parts[1])


def _called(node: ast.Call) -> str | None:
    if isinstance(node.func, ast.Name):
        return node.func.id
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    return None


def _code_argument(node: ast.Call) -> ast.expr | None:
    if node.args:
        return node.args[0]
    return next((keyword.value for keyword in node.keywords if keyword.arg == "code"), None)


class _Calls(ast.NodeVisitor):
    """Every call of a module, each with the function it is in (None at module level)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str | None, ast.Call]] = []
        self._functions: list[str] = []

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._functions.append(node.name)
        self.generic_visit(node)
        self._functions.pop()

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_Call(self, node: ast.Call) -> None:
        self.calls.append((self._functions[-1] if self._functions else None, node))
        self.generic_visit(node)


@functools.cache
def error_codes() -> dict[str, dict[str, set[str]]]:
    """Every error code the source raises: code → {"categories", "where"}. Found in the syntax
    tree: a class of the hierarchy (or `discovery_error`) called with the code as a literal, and
    a call with `code="..."` of a function that raises one with its `code` parameter."""
    from rutter_core.kernel.errors import DISCOVERY_ERROR_CODES

    modules: list[tuple[Path, list[tuple[str | None, ast.Call]]]] = []
    for base in SCANNED:
        for path in sorted((ROOT / base).rglob("*.py")):
            visitor = _Calls()
            visitor.visit(ast.parse(path.read_text(encoding="utf-8")))
            modules.append((path, visitor.calls))
    relaying: dict[str, str] = {}  # function → the class it raises with its `code` parameter
    for _path, calls in modules:
        for function, node in calls:
            argument = _code_argument(node)
            raises = function is not None and _called(node) in _CATEGORY_OF_CLASS
            if raises and isinstance(argument, ast.Name) and argument.id == "code":
                assert function is not None
                relaying[function] = str(_called(node))
    found: dict[str, dict[str, set[str]]] = {}

    def add(code: str, category: str, path: Path) -> None:
        entry = found.setdefault(code, {"categories": set(), "where": set()})
        entry["categories"].add(category)
        entry["where"].add(_where(path))

    for path, calls in modules:
        for _function, node in calls:
            name = _called(node)
            argument = _code_argument(node)
            code = argument.value if isinstance(argument, ast.Constant) else None
            if name in _CATEGORY_OF_CLASS and isinstance(code, str):
                add(code, _CATEGORY_OF_CLASS[name], path)
            elif name == "discovery_error" and isinstance(code, str):
                add(code, DISCOVERY_ERROR_CODES[code].category.value, path)
            elif name in relaying:
                for keyword in node.keywords:
                    if keyword.arg == "code" and isinstance(keyword.value, ast.Constant):
                        add(str(keyword.value.value), _CATEGORY_OF_CLASS[relaying[name]], path)
    for code, kind in DISCOVERY_ERROR_CODES.items():
        add(code, kind.category.value, ROOT / "core/rutter_core/discovery/walk.py")
    return dict(sorted(found.items()))


def errors_table() -> str:
    """The generated part of docs/reference/errors.md: the categories on each surface, then
    every code."""
    from rutter_cli.errors import EXIT_CODES
    from rutter_core.kernel.errors import ErrorCategory
    from rutter_http.errors import CATEGORY_STATUS, CODE_STATUS
    from rutter_lsp.errors import LSP_ERROR_CODES

    lines = [
        BEGIN,
        "",
        "| category | CLI exit | HTTP status | language server (JSON-RPC `code`) | MCP |",
        "|---|---|---|---|---|",
    ]
    for category in ErrorCategory:
        lines.append(
            f"| `{category.value}` | {EXIT_CODES[category]} | {CATEGORY_STATUS[category]} | "
            f"{LSP_ERROR_CODES[category]} | tool error (`isError`) |"
        )
    lines += [
        "",
        "HTTP statuses that are not their category's: "
        + ", ".join(f"`{code}` {status}" for code, status in CODE_STATUS.items())
        + ".",
        "",
        "| code | category | raised in |",
        "|---|---|---|",
    ]
    for code, entry in error_codes().items():
        categories = ", ".join(f"`{c}`" for c in sorted(entry["categories"]))
        lines.append(f"| `{code}` | {categories} | {', '.join(sorted(entry['where']))} |")
    lines += ["", END]
    return "\n".join(lines)


def errors_page(text: str) -> str:
    """`text` (the page as written) with its generated table made current."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise SystemExit(f"{ERRORS_PAGE}: the generated markers are missing")
    return text[:start] + errors_table() + text[end + len(END) :]


# -- the files -----------------------------------------------------------------------------------


def _json(document: dict[str, Any]) -> str:
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"


def generated_files() -> dict[str, str]:
    """Each generated file (repository-relative path) and its text."""
    lsp = lsp_document()
    return {
        "docs/reference/schemas/operations.json": _json(operations_document()),
        "docs/reference/schemas/lsp.json": _json(lsp),
        "docs/reference/schemas/mcp.json": _json(mcp_document()),
        "docs/openapi.json": _json(openapi_document()),
        "editors/vscode/src/protocol.generated.ts": typescript(lsp),
        ERRORS_PAGE: errors_page((ROOT / ERRORS_PAGE).read_text(encoding="utf-8")),
    }


def differing(root: Path = ROOT) -> Iterator[str]:
    """The generated files whose text on disk is not what the models give now."""
    for rel, text in generated_files().items():
        path = root / rel
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            yield rel


def main(argv: list[str] | None = None) -> Literal[0, 1]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="only list the files that differ")
    args = parser.parse_args(argv)
    if args.check:
        stale = list(differing())
        for rel in stale:
            sys.stdout.write(f"differs: {rel}\n")
        return 1 if stale else 0
    for rel, text in generated_files().items():
        path = ROOT / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        sys.stdout.write(f"wrote {rel}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
