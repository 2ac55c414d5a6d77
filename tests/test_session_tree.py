"""The session tree and comparing nodes (issue 13, docs/reference/continuity.md) through the app
facade on a real store, real files and real git repositories: stored and projected nodes with their
parent links, drift markers computed now (memory references, instructions, git), a deleted memory's
body nowhere, a tampered node listed without its content, and the comparison's fields."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

from rutter_core.app.branches import CompareParams, ForkParams, ResumeParams, TreeParams
from rutter_core.app.compaction import CompactParams
from rutter_core.app.continuity import AddMessageParams, AddNoteParams
from rutter_core.app.memory import (
    DeleteMemoryParams,
    EditMemoryParams,
    SetMemoryStatusParams,
)
from rutter_core.app.runs import CreateRunParams, SetRunStatusParams
from rutter_core.kernel.errors import NotFoundError, RejectedError, UsageError
from tests.session_tree_setup import (
    Setup,
    setup,
)
from tests.testing import SteppedClock, acting_person, git, refused, tamper

__all__ = ["setup"]  # the fixture

TREE_KEYS = {"protocol_version", "workspace_id", "run_id", "session_id", "root_node_id",
             "computed_at", "truncated", "nodes"}  # fmt: skip
NODE_KEYS = {"node_id", "parent_node_id", "kind", "projected", "run_id", "session_id",
             "thread_id", "run_status", "title", "created_by", "created_by_person",
             "created_at", "fingerprint", "drift", "error", "compaction"}  # fmt: skip


def test_the_tree_lists_stored_and_projected_nodes_with_their_links(
    setup: Setup, stepped_clock: SteppedClock
) -> None:
    first = setup.checkpoint("one")
    stepped_clock.advance()  # the decision is made after the first checkpoint, before the second
    text = "Use the new parser\nbecause"
    decision = setup.rutter.continuity.add_note(
        AddNoteParams(thread_id=setup.thread_id, kind="decision", text=text), actor="cli"
    )
    setup.rutter.continuity.add_note(
        AddNoteParams(thread_id=setup.thread_id, kind="fact", text="not projected"), actor="cli"
    )
    stepped_clock.advance()
    second = setup.checkpoint("two")
    forked = setup.rutter.branches.fork(ForkParams(node_id=first.node_id, goal="alt"), actor="cli")
    on_fork = setup.checkpoint("on the fork", run_id=forked.run_id)
    resumed = setup.rutter.branches.resume(ResumeParams(node_id=second.node_id), actor="cli")
    setup.rutter.runs.set_status(
        SetRunStatusParams(run_id=setup.run_id, status="cancelled"), actor="cli"
    )

    document = setup.tree(run_id=forked.run_id)
    assert set(document) == TREE_KEYS
    assert document["protocol_version"] == "session_tree.v1"
    assert (document["workspace_id"], document["run_id"], document["session_id"]) == (
        "demo", forked.run_id, forked.session_id,
    )  # fmt: skip
    assert (document["root_node_id"], document["truncated"]) == (setup.root_node_id, False)
    nodes = document["nodes"]
    assert all(set(node) == NODE_KEYS for node in nodes)
    assert {node["created_by_person"] for node in nodes} == {acting_person(setup.store)}
    # Depth first, children in the order they were made; a parent before its children.
    assert [(n["node_id"], n["parent_node_id"], n["kind"], n["projected"]) for n in nodes] == [
        (setup.root_node_id, None, "root", False),
        (first.node_id, setup.root_node_id, "checkpoint", False),
        (decision.note_id, first.node_id, "decision", True),
        (second.node_id, first.node_id, "checkpoint", False),
        (resumed.node_id, second.node_id, "resume", False),
        (forked.node_id, first.node_id, "fork", False),
        (on_fork.node_id, forked.node_id, "checkpoint", False),
    ]
    by_id = {node["node_id"]: node for node in nodes}
    projected = by_id[decision.note_id]
    assert (projected["title"], projected["drift"], projected["fingerprint"]) == (
        "Use the new parser…", None, None,
    )  # fmt: skip
    assert (projected["run_id"], projected["thread_id"]) == (setup.run_id, setup.thread_id)
    assert by_id[first.node_id]["title"] == "one"
    assert by_id[first.node_id]["fingerprint"] == first.snapshot.fingerprint  # type: ignore[union-attr]
    assert by_id[first.node_id]["run_status"] == "cancelled"
    assert by_id[forked.node_id]["run_status"] == "created"
    # The same tree from any run or session in it.
    for params in ({"session_id": setup.session_id}, {"run_id": resumed.run_id},
                   {"session_id": resumed.session_id}):  # fmt: skip
        assert [n["node_id"] for n in setup.tree(**params)["nodes"]] == [
            n["node_id"] for n in nodes
        ]
    # A run of its own has its own tree.
    other = setup.rutter.runs.create(CreateRunParams(goal="g", workspace_id="demo"), actor="cli")
    assert [n["node_id"] for n in setup.tree(run_id=other.run_id)["nodes"]] == [other.root_node_id]


def test_a_completed_compaction_is_a_projected_node_with_what_it_covers(
    setup: Setup, stepped_clock: SteppedClock
) -> None:
    for number in range(7):
        setup.rutter.continuity.add_message(
            AddMessageParams(
                thread_id=setup.thread_id,
                role="user" if number % 2 == 0 else "assistant",
                text=f"Step {number}: keep the parser strict",
            ),
            source="cli",
        )
    first = setup.checkpoint("before compacting")
    stepped_clock.advance()
    compaction = setup.rutter.compaction.compact(
        CompactParams(thread_id=setup.thread_id, focus="the parser"), actor="cli"
    )
    stepped_clock.advance()
    later = setup.checkpoint("after compacting")

    nodes = setup.tree()["nodes"]
    assert [(n["node_id"], n["parent_node_id"], n["kind"], n["projected"]) for n in nodes] == [
        (setup.root_node_id, None, "root", False),
        (first.node_id, setup.root_node_id, "checkpoint", False),
        (compaction.compaction_id, first.node_id, "compaction", True),
        (later.node_id, first.node_id, "checkpoint", False),
    ]
    node = next(n for n in nodes if n["kind"] == "compaction")
    assert node["compaction"] == {
        "summarizer": "extractive",
        "compacted_message_count": 3,
        "unread_message_count": 0,
        "kept_message_count": 4,
        "summary_tokens": node["compaction"]["summary_tokens"],
    }
    assert isinstance(node["compaction"]["summary_tokens"], int)
    assert node["compaction"]["summary_tokens"] > 0
    summary = compaction.summary
    assert summary is not None
    assert node["title"] == summary.text.strip().splitlines()[0][:119] + "…"
    assert (node["drift"], node["fingerprint"], node["error"]) == (None, None, None)
    assert (node["thread_id"], node["run_id"], node["created_by"]) == (
        setup.thread_id, setup.run_id, "cli",
    )  # fmt: skip
    # Every other node says it is no compaction.
    assert all(n["compaction"] is None for n in nodes if n["kind"] != "compaction")


# -- drift markers --------------------------------------------------------------------------------


def test_memory_markers_and_a_deleted_body_nowhere(setup: Setup) -> None:
    kept = setup.remember("kept body 0a1b")
    disabled = setup.remember("disabled body 2c3d")
    expired = setup.remember("expired body 4e5f")
    edited = setup.remember("edited body 6a7b")
    deleted = setup.remember("deleted body 8c9d")
    node = setup.checkpoint()
    ops = setup.rutter.memory
    ops.set_status(
        SetMemoryStatusParams(id=disabled.memory_id, version=1, status="disabled"), actor="cli"
    )
    with setup.store.write() as conn:
        conn.exec_driver_sql(
            "UPDATE memories SET retention_until = '2000-01-01T00:00:00Z' WHERE memory_id = ?",
            (expired.memory_id,),
        )
    ops.edit(EditMemoryParams(id=edited.memory_id, version=1, content="edited again"), actor="cli")
    ops.delete(DeleteMemoryParams(id=deleted.memory_id, version=1), actor="cli")

    drift = setup.nodes()[node.node_id]["drift"]
    states = {marker["memory_id"]: marker["state"] for marker in drift["memory"]}
    assert states == {
        kept.memory_id: "active",
        disabled.memory_id: "disabled",
        expired.memory_id: "expired",
        edited.memory_id: "version_drift",
        deleted.memory_id: "deleted",
    }
    assert all(marker["version"] == 1 for marker in drift["memory"])
    # The checkpoint is intact, and no body appears in the tree or a comparison.
    shown = setup.rutter.continuity.node
    from rutter_core.app.continuity import ShowNodeParams

    assert shown(ShowNodeParams(node_id=node.node_id)) == node
    later = setup.checkpoint("later")
    text = json.dumps([setup.tree(run_id=setup.run_id), setup.compare(node.node_id, later.node_id)])
    for body in ("kept body", "disabled body", "expired body", "edited body", "deleted body",
                 "edited again"):  # fmt: skip
        assert body not in text


def test_instruction_markers_pinned_against_live(setup: Setup) -> None:
    node = setup.checkpoint()
    pinned = node.snapshot.instructions.fingerprint  # type: ignore[union-attr]
    marker = setup.nodes()[node.node_id]["drift"]["instructions"]
    assert marker == {"pinned_fingerprint": pinned, "live_fingerprint": pinned,
                      "live_error": None, "changed": False}  # fmt: skip
    assert setup.nodes()[setup.root_node_id]["drift"]["instructions"] == marker
    (setup.root / "src" / "AGENTS.md").write_text("src rules, changed\n", encoding="utf-8")
    changed = setup.nodes()[node.node_id]["drift"]["instructions"]
    assert changed["changed"] is True
    assert changed["live_fingerprint"] not in (None, pinned)
    target = setup.root / "src" / "AGENTS.md"
    target.unlink()
    target.symlink_to(setup.root.parent / "outside.md")  # out of the workspace: refused
    failing = setup.nodes()[node.node_id]["drift"]["instructions"]
    assert (failing["live_fingerprint"], failing["live_error"], failing["changed"]) == (
        None, "symlink", True,
    )  # fmt: skip


def test_git_markers_follow_commits_and_branches(setup: Setup, tmp_path: Path) -> None:
    node = setup.checkpoint()
    head = git(setup.root, "rev-parse", "HEAD")

    def marker() -> dict[str, Any]:
        found: dict[str, Any] = setup.nodes()[node.node_id]["drift"]["git"]
        return found

    assert marker() == {
        "recorded": {"branch": "main", "head": head}, "recorded_reason": None,
        "current": {"branch": "main", "head": head}, "current_reason": None,
        "branch_changed": False, "head_changed": False,
    }  # fmt: skip
    # Roots and branch markers record no git identity.
    assert setup.nodes()[setup.root_node_id]["drift"]["git"] is None
    git(setup.root, "commit", "-q", "--allow-empty", "-m", "after the checkpoint")
    assert (marker()["branch_changed"], marker()["head_changed"]) == (False, True)
    git(setup.root, "checkout", "-q", "-b", "topic", head)  # same commit, another branch
    now = marker()
    assert (now["branch_changed"], now["head_changed"]) == (True, False)
    assert now["current"] == {"branch": "topic", "head": head}
    git(setup.root, "checkout", "-q", "--detach", "main")
    assert (marker()["branch_changed"], marker()["head_changed"]) == (True, True)
    assert marker()["current"]["branch"] is None
    # The repository gone: not a git work tree now.
    (setup.root / ".git").rename(tmp_path / "moved-git")
    gone = marker()
    assert (gone["current"], gone["current_reason"]) == (None, "not_a_git_work_tree")
    assert (gone["branch_changed"], gone["head_changed"]) == (True, True)
    # A checkpoint without git against a tree still without it: nothing changed.
    plain = setup.checkpoint("no git")
    assert setup.nodes()[plain.node_id]["drift"]["git"] == {
        "recorded": None, "recorded_reason": "not_a_git_work_tree",
        "current": None, "current_reason": "not_a_git_work_tree",
        "branch_changed": False, "head_changed": False,
    }  # fmt: skip


def test_a_tampered_node_is_listed_without_its_content(setup: Setup) -> None:
    node = setup.checkpoint("secret plans")
    child = setup.checkpoint("after")
    tamper(
        setup.store,
        "UPDATE continuity_snapshots SET snapshot_json = replace(snapshot_json, "
        '\'"title":"secret plans"\', \'"title":"planted plans"\') '
        f"WHERE node_id = '{node.node_id}'",
    )
    nodes = setup.nodes()
    listed = nodes[node.node_id]
    assert (listed["title"], listed["fingerprint"], listed["drift"]) == (None, None, None)
    assert listed["error"]["code"] == "snapshot_tampered"
    assert listed["error"]["details"]["node_id"] == node.node_id
    assert "planted" not in json.dumps(nodes)
    assert "secret plans" not in json.dumps(nodes)
    assert nodes[child.node_id]["parent_node_id"] == node.node_id
    assert nodes[child.node_id]["error"] is None
    # A pinned revision that fails its own check: the nodes pinning it are listed with that
    # error (the runs' integrity failure), nothing else of them.
    tamper(setup.store, "UPDATE run_instruction_snapshots SET fingerprint = '" + "0" * 64 + "'")
    nodes = setup.nodes()
    for node_id in (setup.root_node_id, child.node_id):
        assert nodes[node_id]["error"]["code"] == "snapshot_tampered"
        assert nodes[node_id]["error"]["details"]["run_id"] == setup.run_id
        assert (nodes[node_id]["drift"], nodes[node_id]["fingerprint"]) == (None, None)


def test_tree_refusals(setup: Setup) -> None:
    tree = setup.rutter.branches.tree
    refused(NotFoundError, "run_not_found",
            partial(tree, TreeParams(run_id="run_01M8Y3HJTQYDNPR8CJ56SS1T0B")))  # fmt: skip
    refused(NotFoundError, "session_not_found",
            partial(tree, TreeParams(session_id="ses_01M8Y3HJTQYDNPR8CJ56SS1T0B")))  # fmt: skip
    for params in (TreeParams(), TreeParams(run_id=setup.run_id, session_id=setup.session_id)):
        refused(UsageError, "invalid_params", partial(tree, params))


# -- compare --------------------------------------------------------------------------------------


def test_compare_lists_section_10s_fields(setup: Setup) -> None:
    kept = setup.remember("kept")
    dropped = setup.remember("dropped")
    changed = setup.remember("changed")
    a = setup.checkpoint("A")
    setup.rutter.memory.delete(DeleteMemoryParams(id=dropped.memory_id, version=1), actor="cli")
    setup.rutter.memory.edit(
        EditMemoryParams(id=changed.memory_id, version=1, content="changed more"), actor="cli"
    )
    added = setup.remember("added")
    git(setup.root, "commit", "-q", "--allow-empty", "-m", "between")
    forked = setup.rutter.branches.fork(ForkParams(node_id=a.node_id, goal="alt"), actor="cli")
    from rutter_core.app.continuity import AddMessageParams

    setup.rutter.continuity.add_message(
        AddMessageParams(thread_id=forked.thread_id, role="user", text="hi"), source="cli"
    )
    b = setup.checkpoint("B", run_id=forked.run_id)
    document = setup.compare(a.node_id, b.node_id)
    assert set(document) == {"a", "b", "same", "memory"}
    side_a, side_b = document["a"], document["b"]
    assert set(side_a) == {"node_id", "kind", "title", "fingerprint", "run_id", "session_id",
                           "run_status", "instructions", "project_configuration_fingerprint",
                           "git", "git_reason", "message_count", "memory_references"}  # fmt: skip
    assert (side_a["fingerprint"], side_b["fingerprint"]) == (
        a.snapshot.fingerprint, b.snapshot.fingerprint,  # type: ignore[union-attr]
    )  # fmt: skip
    assert (side_a["run_id"], side_b["run_id"]) == (setup.run_id, forked.run_id)
    assert (side_a["session_id"], side_b["session_id"]) == (setup.session_id, forked.session_id)
    assert side_a["instructions"] == side_b["instructions"] == {
        "revision": 1, "fingerprint": forked.fingerprint,
    }  # fmt: skip
    assert side_a["project_configuration_fingerprint"] == forked.fingerprint
    assert side_a["git"]["branch"] == side_b["git"]["branch"] == "main"
    assert side_a["git"]["head"] != side_b["git"]["head"]
    assert (side_a["message_count"], side_b["message_count"]) == (0, 1)
    assert document["same"] == {
        "fingerprint": False, "run": False, "session": False, "run_status": True,
        "instructions": True, "project_configuration": True, "git_branch": True,
        "git_head": False, "message_count": False,
    }  # fmt: skip
    memory = document["memory"]
    assert [ref["memory_id"] for ref in memory["added"]] == [added.memory_id]
    assert [ref["memory_id"] for ref in memory["removed"]] == [dropped.memory_id]
    [change] = memory["changed"]
    assert (change["memory_id"], change["a_version"], change["b_version"]) == (
        changed.memory_id, 1, 2,
    )  # fmt: skip
    assert change["a_content_sha256"] != change["b_content_sha256"]
    assert memory["unchanged"] == 1
    assert kept.memory_id not in json.dumps(memory["added"] + memory["removed"])
    # A node against itself: all the same, nothing moved.
    itself = setup.compare(a.node_id, a.node_id)
    assert set(itself["same"].values()) == {True}
    assert (itself["memory"]["added"], itself["memory"]["removed"]) == ([], [])
    # A root records only the instructions it pins.
    root = setup.compare(setup.root_node_id, a.node_id)["a"]
    assert (root["kind"], root["fingerprint"], root["git"], root["message_count"]) == (
        "root", None, None, None,
    )  # fmt: skip
    assert root["instructions"] == {"revision": 1, "fingerprint": forked.fingerprint}


def test_compare_refusals(setup: Setup) -> None:
    node = setup.checkpoint()
    decision = setup.rutter.continuity.add_note(
        AddNoteParams(thread_id=setup.thread_id, kind="decision", text="d"), actor="cli"
    )

    def compare(a: str, b: str) -> Any:
        return setup.rutter.branches.compare(CompareParams(node_a=a, node_b=b))

    error = refused(RejectedError, "rejected", partial(compare, node.node_id, decision.note_id))
    assert error.details["projected"] is True
    refused(
        NotFoundError,
        "not_found",
        partial(compare, "node_01M8Y3HJTQYDNPR8CJ56SS1T0B", node.node_id),
    )
    tamper(setup.store, "UPDATE continuity_snapshots SET title = 'renamed'")
    refused(RejectedError, "snapshot_tampered", partial(compare, setup.root_node_id, node.node_id))


def test_a_store_without_triggers_cannot_make_the_tree_loop(setup: Setup) -> None:
    """Parent links rewritten into a cycle (only possible with the guards dropped): the tree
    still ends."""
    a = setup.checkpoint("a")
    b = setup.checkpoint("b")
    tamper(
        setup.store,
        f"UPDATE continuity_nodes SET parent_node_id = '{b.node_id}' "
        f"WHERE node_id = '{setup.root_node_id}'",
    )
    ids = [node["node_id"] for node in setup.tree(run_id=setup.run_id)["nodes"]]
    assert sorted(ids) == sorted({setup.root_node_id, a.node_id, b.node_id})
