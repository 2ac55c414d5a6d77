"""A store with a run, its forks and resumes and their checkpoints, for the session tree and
compare tests (this module holds no tests): `Setup`, and the `setup` fixture."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from rutter_core.app.branches import CompareParams, TreeParams
from rutter_core.app.continuity import CheckpointParams, ContinuityNode
from rutter_core.app.facade import Rutter
from rutter_core.app.memory import (
    CreateMemoryParams,
)
from rutter_core.app.runs import CreateRunParams
from rutter_core.app.workspaces import RegisterWorkspaceParams
from rutter_core.store import Store
from tests.conftest import write_tree
from tests.testing import git


@dataclass
class Setup:
    rutter: Rutter
    store: Store
    root: Path
    run_id: str
    session_id: str
    thread_id: str
    root_node_id: str

    def checkpoint(self, title: str = "t", run_id: str | None = None) -> ContinuityNode:
        params = CheckpointParams(run_id=run_id or self.run_id, title=title)
        return self.rutter.continuity.checkpoint(params, actor="cli")

    def tree(self, **params: Any) -> dict[str, Any]:
        params = params or {"run_id": self.run_id}
        document: dict[str, Any] = self.rutter.branches.tree(TreeParams(**params)).to_json()
        return document

    def nodes(self, **params: Any) -> dict[str, dict[str, Any]]:
        return {node["node_id"]: node for node in self.tree(**params)["nodes"]}

    def compare(self, a: str, b: str) -> dict[str, Any]:
        document: dict[str, Any] = self.rutter.branches.compare(
            CompareParams(node_a=a, node_b=b)
        ).to_json()
        return document

    def remember(self, content: str) -> Any:
        params = CreateMemoryParams(
            scope="project", workspace_id="demo", title=content[:16], content=content
        )
        return self.rutter.memory.create(params, actor="cli")


@pytest.fixture
def setup(store: Store, workspace_root: Path) -> Setup:
    write_tree(workspace_root, {"AGENTS.md": "root rules\n", "src/AGENTS.md": "src rules\n"})
    git(workspace_root, "init", "-q", "-b", "main")
    git(workspace_root, "add", ".")
    git(workspace_root, "commit", "-q", "-m", "first")
    rutter = Rutter(store)
    rutter.workspaces.register(
        RegisterWorkspaceParams(workspace_id="demo", root=str(workspace_root), cwd="/")
    )
    created = rutter.runs.create(
        CreateRunParams(goal="review", workspace_id="demo", target="src"), actor="cli"
    )
    return Setup(
        rutter, store, workspace_root, created.run_id, created.session_id, created.thread_id,
        created.root_node_id,
    )  # fmt: skip


# -- shape and links ------------------------------------------------------------------------------
