"""schemathesis against a live `rutter http` (issue 17): every route of the served OpenAPI
document, once with the control bearer (on both engines) and once with the read bearer (on
SQLite), through its phases (explicit examples, coverage of each schema's edges, random
fuzzing, stateful sequences along the links it infers), every check but one, no failure
allowed.

The real IDs of a seeded workspace, run, session, thread, checkpoint node, pin, memory and
assembly, and history handles (with queries that find them), are offered to it as dictionaries
(70% of path values), so requests reach the operations and not only their `not_found`; the
rest stay random. Bounded: 25 examples an operation, a fixed seed.

`positive_data_acceptance` is left out on purpose: the document gives each field's type (the
app's params models), while the value rules (an ID's form, a scope's names, text limits) are
the services' and answer 422 `invalid_params`-like typed errors, so a value that fits the type
may still be refused; every other check, negative data rejection and schema conformance of
every answer included, runs.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rutter_core.app.assembly import AssembleParams
from rutter_core.app.facade import Rutter
from rutter_core.app.history import HistorySearchParams
from rutter_core.app.pins import ProposePinParams
from rutter_core.store import open_store
from rutter_http.routes import ROUTES
from tests.conftest import write_tree
from tests.http_server import API, serving
from tests.testing import Cli

EXAMPLES = 25
SEED = 17

pytestmark = pytest.mark.both_dialects


def _config(values: dict[str, list[str]]) -> str:
    lines = ["[dictionaries]"]
    for name, entries in values.items():
        quoted = ", ".join(f'"{entry}"' for entry in entries)
        lines.append(f"{name} = {{ values = [{quoted}] }}")
    lines.append("")
    lines.append("[parameters]")
    for location, name in (
        ("path.run_id", "runs"), ("path.session_id", "sessions"), ("path.thread_id", "threads"),
        ("path.node_id", "nodes"), ("path.workspace_id", "workspaces"),
        ("path.memory_id", "memories"), ("path.pin_id", "pins"), ("query.target", "targets"),
        ("query.scope", "scopes"), ("query.workspace_id", "workspaces"),
        ("path.proposal_id", "proposals"), ("query.thread_id", "threads"),
        ("path.assembly_id", "assemblies"), ("query.handle", "handles"),
        ("query.run_id", "runs"), ("query.query", "queries"),
    ):  # fmt: skip
        lines.append(f'"{location}" = {{ dictionary = "{name}", probability = 0.7 }}')
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def seeded(
    tmp_path_factory: pytest.TempPathFactory, module_store_url: str
) -> tuple[Cli, dict[str, list[str]]]:
    base = tmp_path_factory.mktemp("schemathesis")
    root = (base / "ws").resolve()
    write_tree(
        root,
        {"AGENTS.md": "root rules\n", "src/CLAUDE.md": "src rules\n", "src/a.go": "package a\n"},
    )
    cli = Cli(base / "home", root, database_url=module_store_url)
    cli.json("workspace", "register", "demo", str(root))
    run: dict[str, Any] = cli.json("run", "create", "--workspace", "demo", "--goal", "g")
    node = cli.json("session", "checkpoint", run["run_id"], "--title", "seed")
    pin = cli.json("context", "pin", "add", run["thread_id"], "--text", "keep the API stable")
    memory = cli.json("context", "memory", "create", "--scope", "project", "--workspace",
                      "demo", "--title", "Tests", "--content", "run them")  # fmt: skip
    store = open_store(cli.store_url)
    try:  # as an agent proposes, through `rutter mcp` (actor mcp)
        proposals = [
            Rutter(store)
            .pins.propose(ProposePinParams(run_id=run["run_id"], text=f"proposal {n}"), actor="mcp")
            .proposal_id
            for n in range(3)
        ]
        assemblies = [
            Rutter(store)
            .assembly.assemble(AssembleParams(run_id=run["run_id"]), actor="cli")
            .assembly_id
            for _ in range(2)
        ]
        handles = [
            hit.handle
            for query in ("run them", "seed")
            for hit in Rutter(store)
            .history.search(HistorySearchParams(query=query, run_id=run["run_id"]))
            .hits
        ]
    finally:
        store.close()
    return cli, {
        "runs": [run["run_id"]],
        "sessions": [run["session_id"]],
        "threads": [run["thread_id"]],
        "nodes": [node["node_id"], run["root_node_id"]],
        "workspaces": ["demo"],
        "memories": [memory["id"]],
        "pins": [pin["pin_id"]],
        "targets": [".", "src/a.go", "src"],
        "scopes": ["user", "project"],
        "proposals": proposals,
        "assemblies": assemblies,
        "handles": handles,
        "queries": ["run them", "seed", "API"],
    }


def test_schemathesis_finds_no_failure_on_any_route_with_the_control_bearer(
    seeded: tuple[Cli, dict[str, list[str]]], tmp_path: Path
) -> None:
    _schemathesis(seeded, "control", tmp_path)


@pytest.mark.sqlite_only
def test_schemathesis_finds_no_failure_on_any_route_with_the_read_bearer(
    seeded: tuple[Cli, dict[str, list[str]]], tmp_path: Path
) -> None:
    """On SQLite alone: a read bearer differs from a control one by the scope check, made
    before the store is asked anything but the bearer (which the control run reads on both
    engines); the reads it reaches are the control run's."""
    _schemathesis(seeded, "read", tmp_path)


def _schemathesis(seeded: tuple[Cli, dict[str, list[str]]], bearer: str, tmp_path: Path) -> None:
    cli, values = seeded
    config = tmp_path / "schemathesis.toml"
    config.write_text(_config(values), encoding="utf-8")
    with serving(cli) as server:
        token = server.control if bearer == "control" else server.read
        done = subprocess.run(
            [
                str(Path(sys.executable).parent / "schemathesis"),
                "--config-file", str(config),
                "run", f"http://127.0.0.1:{server.port}{API}/openapi.json",
                "--header", f"Authorization: Bearer {token}",
                "--max-examples", str(EXAMPLES),
                "--seed", str(SEED),
                "--workers", "1",
                "--checks", "all",
                "--exclude-checks", "positive_data_acceptance",
                "--request-timeout", "30",
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )  # fmt: skip
    report = done.stdout[-6000:]
    assert done.returncode == 0, report
    routes = len(ROUTES)
    assert f"{routes} selected / {routes} total" in done.stdout, report
    assert f"Tested: {routes}" in done.stdout, report
