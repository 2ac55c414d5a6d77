"""A JSON `null` means "not given" only for a field the operation has (issue 17 follow-up): the
params bases that read null as absent (memory, continuity, pins, assembly, transcripts) used to
drop every null-valued key before `extra="forbid"` ran, so `{"anything": null}` passed. Tested
through the app, a language server request per client capability set, and the MCP stdio
client."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from pydantic import ValidationError
from pygls.exceptions import JsonRpcException

from rutter_core.app.assembly import AssembleParams, ReportParams
from rutter_core.app.continuity import CheckpointParams, ShowNodeParams
from rutter_core.app.facade import Rutter
from rutter_core.app.memory import CreateMemoryParams, ListMemoriesParams
from rutter_core.app.models import NullMeansAbsent, Params
from rutter_core.app.pins import AddPinParams, ListPinsParams
from rutter_core.app.transcripts import ImportTranscriptParams
from rutter_core.store import open_store
from tests.conftest import write_tree
from tests.lsp_client import (
    CLIENTS,
    RutterClient,
    capabilities,
    effective,
    folder,
    request,
    start,
    stop,
    uri,
)
from tests.mcp_client import Env, call, failure, mcp_client
from tests.testing import Cli

REQUIRED: dict[type[Params], dict[str, Any]] = {
    ListMemoriesParams: {},
    CreateMemoryParams: {"scope": "user", "title": "t", "content": "c"},
    CheckpointParams: {"run_id": "run_x", "title": "t"},
    ShowNodeParams: {"node_id": "node_x"},
    ListPinsParams: {},
    AddPinParams: {"thread_id": "thr_x", "text": "t"},
    AssembleParams: {"run_id": "run_x"},
    ReportParams: {"assembly_id": "asm_x"},
    ImportTranscriptParams: {"agent": "codex", "path": "t.jsonl"},
}


def test_every_null_reading_base_is_the_shared_one() -> None:
    for model in REQUIRED:
        assert issubclass(model, NullMeansAbsent), model


@pytest.mark.parametrize("model", list(REQUIRED), ids=lambda m: m.__name__)
@pytest.mark.parametrize("value", [None, "x", 0, False, [], {}])
def test_an_unknown_key_is_refused_whatever_its_value(model: type[Params], value: Any) -> None:
    with pytest.raises(ValidationError) as raised:
        model.model_validate({**REQUIRED[model], "anything": value})
    assert [e["type"] for e in raised.value.errors()] == ["extra_forbidden"]


def _optional(model: type[Params]) -> list[str]:
    return [name for name, info in model.model_fields.items() if not info.is_required()]


@pytest.mark.parametrize("model", [m for m in REQUIRED if _optional(m)], ids=lambda m: m.__name__)
def test_a_known_optional_key_given_null_is_absent(model: type[Params]) -> None:
    optional = _optional(model)
    nulls = model.model_validate({**REQUIRED[model], **dict.fromkeys(optional)})
    assert nulls == model.model_validate(REQUIRED[model])
    assert nulls.model_fields_set == set(REQUIRED[model])


def test_a_required_key_given_null_is_missing() -> None:
    with pytest.raises(ValidationError) as raised:
        AddPinParams.model_validate({"thread_id": None, "text": "t"})
    assert [(e["loc"], e["type"]) for e in raised.value.errors()] == [(("thread_id",), "missing")]


def test_through_the_app(tmp_path: Path) -> None:
    with open_store(f"sqlite:///{tmp_path / 'rutter.db'}") as store:
        rutter = Rutter(store)
        rutter.memory.create(
            CreateMemoryParams.model_validate(
                {"scope": "user", "title": "t", "content": "c", "retention": None,
                 "references": None, "workspace_id": None}
            ),
            actor="cli",
        )  # fmt: skip
        listed = rutter.memory.list(
            ListMemoriesParams.model_validate({"scope": None, "all": None, "limit": None})
        )
        assert [m.title for m in listed.items] == ["t"]
        with pytest.raises(ValidationError):
            rutter.memory.list(
                ListMemoriesParams.model_validate({"scope": None, "everything": None})
            )


# -- the language server, per client capability set


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=CLIENTS)
async def lsp(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[RutterClient]:
    base = tmp_path_factory.mktemp(f"lsp-null-{request.param}")
    root = (base / "repo").resolve()
    write_tree(root, {"AGENTS.md": "rules\n"})
    client = await start(base / "home", capabilities(request.param), [folder(root)])
    await effective(client, uri(root / "AGENTS.md"))
    yield client
    await stop(client)


async def _lsp_failure(client: RutterClient, method: str, params: Any) -> dict[str, Any]:
    with pytest.raises(JsonRpcException) as raised:
        await request(client, method, params)
    data: Any = raised.value.data
    assert isinstance(data, dict), raised.value
    return data


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("rutter/memory/list", {"anything": None}),
        ("rutter/memory/list", {"scope": None, "anything": None}),
        ("rutter/pin/list", {"thread_id": None, "anything": None}),
        ("rutter/session/node", {"node_id": "node_01M8YKA0AYRGCADHJDMEXQK50K", "anything": None}),
    ],
)
async def test_lsp_refuses_an_unknown_null_key(
    lsp: RutterClient, method: str, params: dict[str, Any]
) -> None:
    data = await _lsp_failure(lsp, method, params)
    assert data["code"] == "invalid_params"


@pytest.mark.asyncio(loop_scope="module")
async def test_lsp_reads_a_known_null_as_absent(lsp: RutterClient) -> None:
    plain = await request(lsp, "rutter/memory/list", {})
    nulls = await request(
        lsp, "rutter/memory/list", {"scope": None, "workspace_id": None, "all": None, "limit": None}
    )
    assert nulls == plain
    assert set(plain) == {"items", "has_more"}


# -- MCP over stdio


@pytest.fixture
def env(tmp_path: Path, workspace_root: Path) -> Env:
    write_tree(workspace_root, {"AGENTS.md": "root rules\n", "src/a.go": "package a\n"})
    cli = Cli(tmp_path / "home", workspace_root / "src")
    cli.json("workspace", "register", "demo", str(workspace_root))
    run: dict[str, Any] = cli.json("run", "create", "--workspace", "demo", "--goal", "g")
    return Env(cli, workspace_root, run)


@pytest.mark.asyncio
async def test_mcp_refuses_an_unknown_null_key_and_reads_a_known_one(env: Env) -> None:
    run_id = env.run["run_id"]
    async with mcp_client(env) as client:
        listed = await failure(client, "memory_list", {"anything": None})
        checkpoint = await failure(
            client, "checkpoint_create", {"run_id": run_id, "title": "t", "anything": None}
        )
        proposal = await failure(
            client,
            "context_pin_propose",
            {"run_id": run_id, "text": "keep it", "thread_id": None, "anything": None},
        )
        node = await call(
            client, "checkpoint_create", {"run_id": run_id, "title": "t", "summary": None}
        )
        memories = await call(client, "memory_list", {"scope": None, "all": None})
    assert [listed["code"], checkpoint["code"], proposal["code"]] == ["invalid_params"] * 3
    assert env.count("continuity_nodes") >= 1
    assert node["run_id"] == run_id
    assert memories == {"items": [], "has_more": False}
