"""The language server on a PostgreSQL store, end to end: it serves a folder from the shared
database, and notices by itself what another process (another machine, as far as it can tell)
commits there: a run created and then ended through the CLI reaches the editor as
`rutter/runsChanged`, through the server's change feed (the database's snapshot)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from rutter_core.store import open_store
from rutter_core.workspaces.service import list_workspaces
from tests.lsp_client import capabilities, folder, request, start, stop, wait_until
from tests.testing import cli_env, run_cli, write_tree

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]


def _cli(home: Path, cwd: Path, database_url: str, *args: str) -> dict[str, Any]:
    env = cli_env(home, RUTTER_DATABASE_URL=database_url)
    done = run_cli([*args, "--json"], cwd=cwd, env=env)
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


async def _registered(database_url: str, root: Path) -> str:
    async def poll() -> str:
        while True:
            with open_store(database_url) as store:
                found = [w.workspace_id for w in list_workspaces(store) if w.root == str(root)]
            if found:
                return found[0]
            await asyncio.sleep(0.1)

    return await asyncio.wait_for(poll(), 60)


@pytest.mark.asyncio
async def test_commits_by_another_process_reach_the_editor(
    postgres_url: str, tmp_path: Path
) -> None:
    root = (tmp_path / "repo").resolve()
    write_tree(root, {"AGENTS.md": "root rules\n", "src/main.go": "package main\n"})
    home = tmp_path / "home"
    client = await start(home, capabilities("neovim"), [folder(root)], database_url=postgres_url)
    try:
        workspace_id = await _registered(postgres_url, root)
        assert not (home / "rutter.db").exists()  # the shared database, not a local file
        created = _cli(
            home, root, postgres_url, "run", "create", "--workspace", workspace_id,
            "--goal", "parse dates", "--target", "src/main.go",
        )  # fmt: skip
        await wait_until(lambda: [workspace_id] in client.runs_changes, what="rutter/runsChanged")
        listed = await request(client, "rutter/runs", {"workspace_id": workspace_id})
        assert [run["run_id"] for run in listed["runs"]] == [created["run_id"]]

        client.runs_changes.clear()
        _cli(home, root, postgres_url, "run", "status", created["run_id"], "cancelled")
        await wait_until(lambda: [workspace_id] in client.runs_changes, what="rutter/runsChanged")
        listed = await request(client, "rutter/runs", {"workspace_id": workspace_id})
        assert listed["runs"] == []
    finally:
        await asyncio.wait_for(stop(client), 60)
