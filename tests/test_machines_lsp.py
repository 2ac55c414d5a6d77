"""The language server follows the runs of its folders' projects (docs/team.md#machines): a run
made through another registration of the project, on another machine, shows its drift on the
served folder's files, computed against them, and its reviewed refresh pins those files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from rutter_core.app.facade import Rutter, machine_sources
from rutter_core.app.runs import CreateRunParams, InspectRunParams
from rutter_core.discovery.fsread import FileReader
from rutter_core.kernel.errors import UsageError
from rutter_core.store import open_store
from rutter_core.workspaces.machine import MachineSources, derive
from rutter_core.workspaces.service import ProjectChoice, register_workspace
from tests.conftest import write_tree
from tests.lsp_client import (
    Prompter,
    by_code,
    capabilities,
    execute,
    folder,
    open_text,
    rejected,
    request,
    start,
    stop,
    uri,
    wait_for_diagnostics,
    within,
)
from tests.runs_lsp_session import DRIFT, make_session_client
from tests.testing import THIS_MACHINE

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]

PROJECT: ProjectChoice = ("team-widget", "named")


def ana_app(home: Path) -> tuple[Rutter, str]:
    url = f"sqlite:///{home / 'rutter.db'}"
    return Rutter(open_store(url), FileReader(), MachineSources("ana", None)), url


async def test_a_run_made_on_another_machine_drifts_against_the_served_files(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    ana_root = (tmp_path / "ana" / "widget").resolve()
    bo_root = (tmp_path / "bo" / "widget").resolve()
    write_tree(ana_root, {"AGENTS.md": "rules\nkeep it short\n", "src/main.go": "package main\n"})
    write_tree(bo_root, {"AGENTS.md": "rules\nkeep it tiny\n", "src/main.go": "package main\n"})
    ana, url = ana_app(home)
    try:
        register_workspace(
            ana.store, "widget-ana", ana_root, cwd=ana_root, machine=derive("ana"), project=PROJECT
        )
        register_workspace(
            ana.store, "widget-bo", bo_root, cwd=bo_root, machine=THIS_MACHINE, project=PROJECT
        )
        created = ana.runs.create(
            CreateRunParams(goal="parser", workspace_id="widget-ana", target="src/main.go"),
            actor="cli",
        )
    finally:
        ana.store.close()
    run_id = created.run_id

    client = await start(home, capabilities("visual_studio_code"), [folder(bo_root)])
    prompter = Prompter()
    make_session_client(prompter)(client)
    try:
        agents_uri = open_text(client, bo_root / "AGENTS.md")
        found = await wait_for_diagnostics(
            client, agents_uri, lambda found: bool(by_code(found, DRIFT))
        )
        [drift] = by_code(found, DRIFT)
        assert drift.message.startswith(
            f"AGENTS.md changed since run {run_id} pinned it (revision 1)"
        )
        assert (drift.range.start.line, drift.range.end.line) == (1, 1)
        assert drift.data == {"run_id": run_id, "revision": 1}

        # The run list shows it too, as the drift follows it: made through Ana's registration
        # on her machine, its drift read from the served folder's files.
        for params in ({}, {"workspace_id": "widget-bo"}):
            listed = await request(client, "rutter/runs", params)
            [entry] = [each for each in listed["runs"] if each["run_id"] == run_id]
            assert entry["workspace_id"] == "widget-ana"
            assert entry["machine"] == "other_machine"
            assert entry["drift_workspace_id"] == "widget-bo"
            assert entry["stale"] is True

        # Ana's registration named from Bo's editor: its files are on Ana's machine. Nothing
        # is created, nothing read there.
        protocol: Any = client.protocol
        for method, params in (
            ("rutter/createRun", {"goal": "g", "workspace_id": "widget-ana"}),
            ("rutter/runInstructions", {"run_id": run_id, "workspace_id": "widget-ana"}),
            ("rutter/session/recent", {"workspace_id": "widget-ana"}),
        ):
            _code, error = await rejected(protocol.send_request_async(method, params))
            assert error["code"] == "workspace_on_other_machine"
            assert error["details"]["this_machine_workspace_ids"] == ["widget-bo"]
            assert ana_root.as_posix() not in json.dumps(error)
        listed = await request(client, "rutter/runs", {})
        assert [each["run_id"] for each in listed["runs"]] == [run_id]
        # Listed through Ana's registration, the run is there (a record of the project) but
        # its drift cannot be read here: Ana's files are on her machine.
        through = await request(client, "rutter/runs", {"workspace_id": "widget-ana"})
        [entry] = through["runs"]
        assert (entry["run_id"], entry["drift_workspace_id"]) == (run_id, "widget-ana")
        assert entry["error"]["code"] == "workspace_on_other_machine"
        assert entry["fingerprint"] is None

        actions = await within(
            client.text_document_code_action_async(
                types.CodeActionParams(
                    text_document=types.TextDocumentIdentifier(uri=agents_uri),
                    range=drift.range,
                    context=types.CodeActionContext(diagnostics=[drift]),
                )
            )
        )
        [action] = [a for a in actions or [] if isinstance(a, types.CodeAction)]
        assert action.command is not None
        arguments = list(action.command.arguments or [])
        assert arguments == [{"run_id": run_id, "workspace_id": "widget-bo"}]

        # The reviewed refresh pins Bo's files; the drift on Bo's folder goes.
        prompter.answers.append("Confirm refresh")
        confirmed = await execute(client, "rutter.reviewRefresh", *arguments)
        assert (confirmed["refreshed"], confirmed["revision"]) == (True, 2)
        await wait_for_diagnostics(client, agents_uri, lambda found: not by_code(found, DRIFT))
    finally:
        await stop(client)

    # Revision 2 is Bo's files: against Ana's own files the run has drifted now, and not
    # against Bo's (read on Bo's machine: Ana's machine refuses to read Bo's registration).
    with open_store(url) as store:
        app = Rutter(store, FileReader(), MachineSources("ana", None))
        assert app.runs.inspect(InspectRunParams(run_id=run_id)).stale is True
        with pytest.raises(UsageError) as refused:
            app.runs.inspect(InspectRunParams(run_id=run_id, workspace_id="widget-bo"))
        assert refused.value.code == "workspace_on_other_machine"
        assert refused.value.details["this_machine_workspace_ids"] == ["widget-ana"]
        bo = Rutter(store, FileReader(), machine_sources({}))
        assert bo.machine_id == THIS_MACHINE
        assert bo.runs.inspect(InspectRunParams(run_id=run_id)).stale is False
    assert uri(bo_root / "AGENTS.md") == agents_uri
