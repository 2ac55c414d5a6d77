"""A workspace's newest nodes across its sessions and its continuity revision (issue 14),
through the app facade on a real store, real files and a real git repository."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from rutter_core.app.branches import ForkParams, RecentParams, ResumeParams
from rutter_core.app.continuity import (
    AddMessageParams,
    AddNoteParams,
    EditNoteParams,
    ListMessagesParams,
    RevisionsParams,
)
from rutter_core.app.facade import Rutter
from rutter_core.app.runs import CreateRunParams
from rutter_core.app.workspaces import RegisterWorkspaceParams
from rutter_core.kernel.errors import RejectedError
from rutter_core.store import Store
from tests.conftest import write_tree
from tests.session_tree_setup import Setup
from tests.testing import git

# The tests whose store is the `store` fixture run on SQLite and on PostgreSQL.
pytestmark = pytest.mark.both_dialects


@pytest.fixture
def demo(store: Store, workspace_root: Path) -> Setup:
    """Workspace "demo", a git repository, with one run (as in tests/test_session_tree.py)."""
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


def revisions(setup: Setup, *workspaces: str) -> dict[str, str]:
    params = RevisionsParams(workspace_ids=workspaces)
    return setup.rutter.continuity.revisions(params).revisions


def other_workspace(setup: Setup, tmp_path: Path) -> str:
    root = tmp_path / "other"
    write_tree(root, {"AGENTS.md": "other\n"})
    setup.rutter.workspaces.register(
        RegisterWorkspaceParams(workspace_id="other", root=str(root), cwd="/")
    )
    return "other"


def test_every_continuity_write_changes_the_revision_of_its_workspace_alone(
    demo: Setup, tmp_path: Path
) -> None:
    setup = demo
    other = other_workspace(setup, tmp_path)
    seen = revisions(setup, "demo", other)
    assert seen[other] == "0.0.0.0"
    continuity = setup.rutter.continuity

    def changed() -> bool:
        nonlocal seen
        now = revisions(setup, "demo", other)
        assert now[other] == seen[other]
        moved, seen = now["demo"] != seen["demo"], now
        return moved

    continuity.add_message(
        AddMessageParams(thread_id=setup.thread_id, role="user", text="hi"), source="cli"
    )
    assert changed()
    note = continuity.add_note(
        AddNoteParams(thread_id=setup.thread_id, kind="fact", text="a"), actor="cli"
    )
    assert changed()
    continuity.edit_note(EditNoteParams(note_id=note.note_id, version=1, text="b"), actor="cli")
    assert changed()
    node = setup.checkpoint("one")
    assert changed()
    setup.rutter.branches.resume(ResumeParams(node_id=node.node_id), actor="cli")
    assert changed()
    # Reads change nothing.
    continuity.messages(ListMessagesParams(thread_id=setup.thread_id))
    setup.tree()
    setup.rutter.branches.recent(RecentParams(workspace_id="demo"))
    assert not changed()
    assert revisions(setup) == {}


def test_recent_lists_the_newest_stored_nodes_of_the_workspace(demo: Setup, tmp_path: Path) -> None:
    setup = demo
    first = setup.checkpoint("one")
    forked = setup.rutter.branches.fork(ForkParams(node_id=first.node_id, goal="alt"), actor="cli")
    second = setup.checkpoint("two", run_id=forked.run_id)
    other = other_workspace(setup, tmp_path)
    setup.rutter.runs.create(CreateRunParams(goal="g", workspace_id=other), actor="cli")

    listed = setup.rutter.branches.recent(RecentParams(workspace_id="demo")).to_json()
    ids = [item["node_id"] for item in listed["items"]]
    assert sorted(ids) == sorted([setup.root_node_id, first.node_id, forked.node_id,
                                  second.node_id])  # fmt: skip
    assert ids.index(second.node_id) < ids.index(first.node_id) < ids.index(setup.root_node_id)
    assert listed["has_more"] is False
    newest = listed["items"][0]
    assert (newest["node_id"], newest["title"], newest["kind"]) == (
        second.node_id, "two", "checkpoint",
    )  # fmt: skip
    assert newest["drift"]["instructions"]["changed"] is False
    write_tree(setup.root, {"src/AGENTS.md": "changed\n"})
    setup.rutter.reader.invalidate(str(setup.root / "src/AGENTS.md"))
    again = setup.rutter.branches.recent(RecentParams(workspace_id="demo", limit=2)).to_json()
    assert (len(again["items"]), again["has_more"]) == (2, True)
    assert again["items"][0]["drift"]["instructions"]["changed"] is True
    with pytest.raises(ValidationError):
        RecentParams(workspace_id="demo", limit=0)
    with pytest.raises(ValidationError):
        RecentParams(workspace_id="demo", limit=101)


def test_branch_source_reads_and_checks_without_writing(demo: Setup) -> None:
    setup = demo
    node = setup.checkpoint("one")
    before = revisions(setup, "demo")
    shown = setup.rutter.branches.branch_source(ResumeParams(node_id=node.node_id))
    assert shown.node_id == node.node_id
    assert shown.snapshot is not None
    with pytest.raises(RejectedError) as raised:
        setup.rutter.branches.branch_source(ForkParams(node_id=node.node_id, goal="  "))
    assert raised.value.code == "invalid_goal"
    assert revisions(setup, "demo") == before
