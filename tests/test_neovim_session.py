"""Session continuity in real headless Neovim 0.11 against the real server (issue 14).

One scenario (tests/neovim/session.lua) drives the commands as a user would: checkpoint the
current run, open the tree, fork from a checkpoint (the server's question accepted, then the
same fork declined), see the drift markers after an instruction file changes, open a node's
detail, list the keys, compare two nodes by marks, by arguments and by pickers, resume and
fork by command, and watch the tree follow a checkpoint made by the CLI. The store is checked
here afterwards.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from rutter_core.app.continuity import AddMessageParams, AddNoteParams
from rutter_core.app.facade import Rutter
from rutter_core.discovery.fsread import FileReader
from rutter_core.runs.service import create_run, list_runs
from rutter_core.store import open_store
from rutter_core.workspaces.service import register_workspace
from tests.test_neovim import TARGET, run_nvim, ws

__all__ = ["ws"]  # the fixture: a private copy of the example monorepo


def _line(lines: list[str], needle: str) -> str:
    [line] = [line for line in lines if needle in line]
    return line


def test_checkpoint_tree_fork_compare_resume(tmp_path: Path, ws: Path) -> None:
    home = tmp_path / "rutter-home"
    # A git work tree: checkpoints record its branch and HEAD, and a later commit drifts.
    subprocess.run(["git", "init", "-q", "-b", "main", str(ws)], check=True)
    subprocess.run(["git", "-C", str(ws), "add", "-A"], check=True)
    author = ["-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run(["git", "-C", str(ws), *author, "commit", "-q", "-m", "init"], check=True)
    with open_store(f"sqlite:///{home / 'rutter.db'}") as store:
        register_workspace(store, "monorepo", ws, cwd=ws)
        created = create_run(
            store,
            workspace_id="monorepo",
            goal="harden the parser",
            reader=FileReader(),
            actor="cli",
            target=TARGET,
        )
        Rutter(store).continuity.add_message(
            AddMessageParams(
                thread_id=created.thread_id, role="user", text="Start with the lexer tests."
            ),
            source="cli",
        )
        Rutter(store).continuity.add_note(
            AddNoteParams(
                thread_id=created.thread_id, kind="decision", text="Keep the hand-written lexer."
            ),
            actor="cli",
        )
    run_id = created.run_id

    results = run_nvim(tmp_path, "session", ws, {"RUTTER_NVIM_RUN": run_id})

    # :RutterCheckpoint: the workspace's only active run is the current run.
    checkpoint = results["checkpoint"]
    assert checkpoint["run_id"] == run_id
    assert checkpoint["kind"] == "checkpoint"
    assert checkpoint["title"] == "before the parser rewrite"
    assert checkpoint["created_by"] == "lsp"
    assert checkpoint["snapshot"]["messages"]["total"] == 1
    assert results["current_after_checkpoint"] == run_id
    assert results["typed_title"] == "Checkpoint title: "
    assert results["checkpoint2"]["title"] == "second checkpoint"

    # :RutterTree: a split (not a float) next to the source, read-only, folds by expression.
    assert results["tree_win"] == {
        "relative": "",
        "buftype": "nofile",
        "modifiable": False,
        "foldmethod": "expr",
        "source_still_shown": True,
        "focused": True,
    }
    lines = results["tree_lines"]
    assert lines[0] == f"rutter · session tree of run {run_id} (workspace monorepo)"
    assert lines[1].startswith("3 nodes, 1 projected · drift as of ")
    # The decision note, projected below the root: indented, marked, dimmed.
    decision = _line(lines, "◇ decision")
    assert decision.startswith('  ◇ decision "Keep the hand-written lexer." · ')
    assert decision.endswith(" · projected")
    root = _line(lines, "○ root")
    assert f"run {run_id} (created) · current" in root
    assert _line(lines, '"before the parser rewrite"').startswith("● checkpoint ")
    assert "⚠" not in "\n".join(lines)
    assert lines[-1].startswith("<CR> detail · f fork · r resume · m mark")

    # `f`: the goal was asked, then the server's question (what is and is not inherited).
    fork = results["fork"]
    assert fork["kind"] == "fork"
    assert fork["parent_node_id"] == checkpoint["node_id"]
    assert fork["mode"] == "ask"
    assert fork.get("profile") is None  # null: Neovim decodes it as nil
    assert not any(fork["authority"].values())
    [question] = results["fork_questions"]
    assert question["items"] == ["Fork", "Cancel"]
    assert question["kind"] == "rutter_question"
    assert question["prompt"].startswith('rutter: fork from checkpoint "before the parser rewrite"')
    assert "It takes: the workspace; the instructions it pins" in question["prompt"]
    assert "It does not take approvals" in question["prompt"]
    assert results["current_after_fork"] == fork["run_id"]
    # The branch is indented and opens a fold of its own, which closes.
    fork_line = results["tree_after_fork"][results["fork_line"] - 1]
    assert fork_line.startswith('  ⑂ fork from "before the parser rewrite" · ')
    assert f"run {fork['run_id']} (created) · current" in fork_line
    assert results["fork_foldlevel"] == 1
    assert results["fork_foldclosed"] == results["fork_line"]

    # Declined: the answer says so and nothing was created.
    assert results["declined"] == {"node_id": checkpoint["node_id"], "cancelled": True}
    [declined] = results["declined_questions"]
    assert declined["items"] == ["Fork", "Cancel"]

    # Drift markers after AGENTS.md changed on disk: every node pinning the old instructions.
    drifted = [line for line in results["tree_drift"] if "⚠ instructions changed" in line]
    assert len(drifted) == 4  # root, both checkpoints, the fork's branch marker
    # A commit moved HEAD: the checkpoints (which record git) say so; markers record none.
    moved = [line for line in results["tree_drift"] if "⚠ git head" in line]
    assert len(moved) == 2
    assert all("● checkpoint" in line for line in moved)
    assert not any("⚠ git branch" in line for line in results["tree_drift"])
    # Highlights: the drift markers as warnings (exactly their text), the projected dimmed.
    marks = results["tree_drift_marks"]
    for line in drifted:
        row = results["tree_drift"].index(line)
        start = line.encode().index("⚠ instructions".encode())
        assert [row, start, len(line.encode()), "DiagnosticWarn"] in marks, (line, marks)
    decision_row = next(i for i, x in enumerate(results["tree_drift"]) if "◇ decision" in x)
    assert [decision_row, 0, len(results["tree_drift"][decision_row].encode()), "Comment"] in marks

    # `<CR>`: the checkpoint's detail in a scratch buffer, the tree still open.
    detail = results["detail"]
    assert detail["name"] == f"rutter://node/{checkpoint['node_id']}"
    assert detail["buftype"] == "nofile"
    assert detail["lines"][0] == f"rutter · checkpoint {checkpoint['node_id']}"
    assert "title        before the parser rewrite" in detail["lines"]
    assert "    [user] Start with the lexer tests." in detail["lines"]
    assert any(line.startswith("  instructions  changed: pinned ") for line in detail["lines"])
    assert results["tree_still_open"] is True

    # `?`: the keys.
    assert any(line.startswith("f     fork from the node") for line in results["help"])
    assert results["help_closed"] is True

    # `m` twice: A is marked in the tree, then both sides open in diff mode.
    assert results["marked_line"].endswith("[A]  ⚠ instructions changed  ⚠ git head")
    assert results["compare_diff_windows"] == 2
    assert (
        results["compare_a"][0] == f"rutter · compare, side A: checkpoint {checkpoint['node_id']}"
    )
    assert results["compare_b"][0] == f"rutter · compare, side B: fork {fork['node_id']}"
    assert len(results["compare_a"]) == len(results["compare_b"])
    assert "messages       1" in results["compare_a"]
    assert "fingerprint" in results["compare_differ"]
    assert "run" in results["compare_differ"]
    # By arguments: two checkpoints of one run differ in their fingerprints, not their run.
    assert "fingerprint" in results["compare_args_differ"]
    assert "run" not in results["compare_args_differ"]
    # By pickers: A then B, each listing title, time, run and drift.
    assert results["compare_picked"] == {
        "a": results["checkpoint2"]["node_id"],
        "b": checkpoint["node_id"],
    }
    first_picker = results["compare_pickers"][0]
    assert first_picker["kind"] == "rutter_node"
    assert any(
        item.startswith('● "second checkpoint" · ') and f"run {run_id}" in item
        for item in first_picker["items"]
    )
    assert all("⚠ instructions changed" in item for item in first_picker["items"]), first_picker[
        "items"
    ]

    # :RutterResume: picked, asked, current.
    resume = results["resume"]
    assert resume["kind"] == "resume"
    assert resume["parent_node_id"] == results["checkpoint2"]["node_id"]
    questions = results["resume_questions"]
    assert questions[-1]["items"] == ["Resume", "Cancel"]
    assert results["current_after_resume"] == resume["run_id"]

    # :RutterFork NODE.
    assert results["fork2"]["parent_node_id"] == results["checkpoint2"]["node_id"]

    # The CLI's checkpoint: one notification naming the workspace, the tree followed.
    assert results["cli"]["code"] == 0, results["cli"]["stderr"]
    assert results["sessions_changed"]
    assert all(event["workspace_ids"] == ["monorepo"] for event in results["sessions_changed"])
    assert any('"made by the CLI"' in line for line in results["tree_final"])

    # The store: the runs made from Neovim, and none for the declined fork.
    with open_store(f"sqlite:///{home / 'rutter.db'}") as store:
        goals = sorted(run.goal for run in list_runs(store))
    assert goals == [
        "harden the parser",
        "harden the parser",
        "second idea",
        "try a table-driven parser",
    ]
