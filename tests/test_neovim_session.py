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
from tests.neovim_client import TARGET, run_nvim, ws
from tests.testing import THIS_MACHINE

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
        register_workspace(store, "monorepo", ws, cwd=ws, machine=THIS_MACHINE)
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

    # `c` in the tree checkpointed the run of the line's node (the fork's).
    assert results["tree_checkpoint"]["run_id"] == fork["run_id"]
    assert results["tree_checkpoint"]["parent_node_id"] == fork["node_id"]

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

    # Four active runs, none chosen: the picker lists them newest first; the pick is current.
    picker = results["run_picker"]
    assert picker["kind"] == "rutter_run"
    assert picker["prompt"] == "rutter: which run is current? "
    assert len(picker["items"]) == 4
    assert picker["items"][0].startswith(results["fork2"]["run_id"] + " · second idea · created")
    assert picker["items"][-1].startswith(run_id + " · harden the parser · created")
    assert results["picked_checkpoint"]["run_id"] == run_id
    assert results["current_after_pick"] == run_id

    # The store: the runs made from Neovim, and none for the declined fork.
    with open_store(f"sqlite:///{home / 'rutter.db'}") as store:
        goals = sorted(run.goal for run in list_runs(store))
    assert goals == [
        "harden the parser",
        "harden the parser",
        "second idea",
        "try a table-driven parser",
    ]


def test_session_formatter(tmp_path: Path) -> None:
    results = run_nvim(tmp_path, "session_unit", tmp_path, script_mode=True)
    tree = results["tree"]
    assert tree["lines"] == [
        "rutter · session tree of run run_2 (workspace demo)",
        "5 nodes, 1 projected · drift as of 2026-12-03 11:00:00 · truncated (more nodes exist)",
        "",
        "○ root · 2026-12-03 10:00:00 · run run_1 (running)",
        '● checkpoint "parser done" · 2026-12-03 10:00:00  ⚠ instructions fail: symlink  '
        "⚠ git branch  ⚠ git head  ⚠ memory deleted x2  ⚠ memory version_drift x1",
        '  ◇ decision "use tables" · 2026-12-03 10:00:00 · projected',
        '  ⑂ fork from "parser done" · 2026-12-03 10:00:00 · run run_2 (running) · current · [A]',
        '  ● checkpoint "tampered" · 2026-12-03 10:00:00  ✗ snapshot_tampered',
        '    ↻ resume from "tampered" · 2026-12-03 10:00:00 · run run_3 (running)',
        "",
        "<CR> detail · f fork · r resume · m mark (two: compare) · c checkpoint · za fold · "
        "R reload · ? keys · q close",
    ]
    assert tree["rows"] == {
        "4": "node_root",
        "5": "node_cp",
        "6": "note_1",
        "7": "node_fork",
        "8": "node_cp2",
        "9": "node_resume",
    }
    # Folds: each branch marker opens one, one level deeper than the line it branches from.
    assert {k: v for k, v in tree["levels"].items() if v} == {"7": 1, "8": 1, "9": 2}
    assert tree["starts"] == {"7": True, "9": True}
    hl = {(row, group) for row, _start, _end, group in tree["hl"]}
    assert (6, "Comment") in hl  # projected: dimmed
    assert (8, "DiagnosticError") in hl  # fails its check
    assert (5, "DiagnosticWarn") in hl  # drift markers
    assert (7, "Search") in hl  # marked for compare
    [warn] = [h for h in tree["hl"] if h[0] == 5]
    line = tree["lines"][4]
    assert line.encode()[warn[1] :].decode().startswith("⚠ instructions fail")
    assert results["error_tree"][2] == "error[run_not_found]: no run run_x"
    assert results["usable"] == [True, False, False]
    assert results["pick"] == (
        '● "parser done" · 2026-12-03 10:00:00 · run run_1 · ⚠ instructions fail: symlink, '
        "⚠ git branch, ⚠ git head, ⚠ memory deleted x2, ⚠ memory version_drift x1  (node_cp)"
    )

    compare = results["compare"]
    assert compare["differ"] == [
        "fingerprint",
        "git_branch",
        "git_head",
        "message_count",
        "project_configuration",
        "run",
        "run_status",
        "session",
    ]
    a, b = compare["a"], compare["b"]
    assert len(a) == len(b)
    assert a[0] == "rutter · compare, side A: checkpoint node_a"
    assert "git HEAD       h1" in a
    assert "git HEAD       — (not_a_git_work_tree)" in b
    assert "title          —" in b
    assert a[-4:] == [
        "memory from A to B: 5 unchanged",
        "  only in A     mem_old v4",
        "  only in B     —",
        "  changed       mem_mid v1",
    ]
    assert b[-3:] == [
        "  only in A     —",
        "  only in B     mem_new v1",
        "  changed       mem_mid v3",
    ]

    bare = results["bare_node"]
    assert bare[0] == "rutter · root node_root"
    assert "parent       none (the top of the tree)" in bare
    assert "Records only the instructions its run pins (no snapshot)." in bare
