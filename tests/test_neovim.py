"""The Neovim plugin (editors/neovim) in real Neovim 0.11, headless, against the real server.

Each test copies docs/examples/monorepo into a temporary directory, starts
`nvim --headless --clean` with editors/neovim prepended to 'runtimepath', a temporary
RUTTER_HOME (and HOME/XDG directories) and the venv's bin directory on PATH (so lsp/rutter.lua's
`rutter-lsp` resolves), and runs one Lua scenario from tests/neovim/. The scenario drives Neovim
as a user would (`:edit`, `:RutterInstructions`, keys, `:w`) and writes what it saw as JSON;
the assertions are here. Every wait is bounded (vim.wait in Lua, a subprocess timeout here).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from rutter_core.discovery.fsread import FileReader
from rutter_core.store import open_store
from rutter_core.workspaces.service import ProjectChoice, register_workspace
from tests.neovim_client import (
    STACK,
    TARGET,
    core_snapshot,
    github_token,
    rows,
    run_nvim,
    ws,
)
from tests.testing import THIS_MACHINE

__all__ = ["ws"]  # the fixture


def test_float_shows_the_ordered_stack_with_why_lines(tmp_path: Path, ws: Path) -> None:
    results = run_nvim(tmp_path, "float", ws)
    # Run before the client existed, the command waited for it to attach.
    assert results["attached_at_command"] == 0
    assert "rutter: waiting for the rutter language server to start…" in results["messages"]

    # The root is the monorepo's top (its outermost marker), not services/api/internal/parser
    # (the nearest AGENTS.md), and the workspace is named after the directory.
    assert results["root_dir"] == str(ws)
    assert results["folder_names"] == [str(ws)]  # Neovim's names; the server got "monorepo"
    assert results["offset_encoding"] == "utf-8"

    float_data = results["float"]
    lines: list[str] = float_data["lines"]
    snapshot = core_snapshot(tmp_path, ws, TARGET)
    assert float_data["result"]["workspace_id"] == "monorepo"
    assert lines[0] == f"rutter · {TARGET} (workspace monorepo)"
    assert lines[1] == "9 sources in delivery order; a higher precedence wins where they conflict"

    # One row per source, in delivery order: ordinal, precedence, kind, path; then its why line.
    header = lines.index("#  prec  kind                path")
    for index, (ordinal, precedence, kind, path) in enumerate(STACK):
        row = lines[header + 1 + 2 * index]
        why = lines[header + 2 + 2 * index]
        assert re.fullmatch(rf"{ordinal}\s+{precedence}\s+{kind}\s+{re.escape(path)}.*", row), row
        source = snapshot["sources"][index]
        assert source["path"] == path
        assert why == f"   why: {source['why_effective']}"
    assert lines[header + 3].endswith("CLAUDE.md  [redacted]")
    assert "replaces services/api/AGENTS.md, which is not delivered" in lines[header + 12]

    assert "Conflicts (3)" in lines
    assert "  agents: AGENTS.md < services/api/AGENTS.override.md" in lines
    assert "Ignored (2)" in lines
    assert (
        "  .prayu/rules/drafts/wip.md — ignored by .prayu/instructions.ignore:2 "
        "(pattern .prayu/rules/drafts/)"
    ) in lines
    assert (
        "  services/api/AGENTS.md — superseded by services/api/AGENTS.override.md "
        "(a non-blank AGENTS.override.md replaces AGENTS.md at its level)"
    ) in lines
    assert "Redactions (1)" in lines
    assert "  CLAUDE.md — secret_assignment x1: removed before any agent sees it" in lines
    # The fingerprint is the reference's: identical to rutter_core's for the same tree.
    assert f"Fingerprint {snapshot['fingerprint']}" in lines
    assert lines[-1] == "<CR> open file · R refresh · a agent · q close"
    assert not any("hunter2" in line for line in lines)

    # Rows map to files: both lines of each source, each ignored entry, each redaction.
    by_row = rows(float_data)
    for index, (_, _, _, path) in enumerate(STACK):
        assert by_row[header + 2 + 2 * index] == path
        assert by_row[header + 3 + 2 * index] == path
    wip = lines.index(next(line for line in lines if line.startswith("  .prayu/rules/drafts")))
    assert by_row[wip + 1] == ".prayu/rules/drafts/wip.md"

    # A focused, read-only, editor-relative float that no language client attaches to.
    assert results["focused"] is True
    assert results["source_win_unchanged"] is True
    assert results["win_config"]["relative"] == "editor"
    assert results["buffer"] == {
        "buftype": "nofile",
        "modifiable": False,
        "filetype": "rutter",
        "clients": 0,
    }


def test_enter_opens_the_row_file_and_q_closes(tmp_path: Path, ws: Path) -> None:
    results = run_nvim(tmp_path, "keys", ws)

    windows = results["windows_before"]
    assert results["after_enter"] == {
        "buffer": str(ws / "services/api/.claude/CLAUDE.md"),
        "in_source_win": True,
        "float_open": False,
        "float_win_valid": False,
        "windows": windows,
    }
    assert results["second_target"] == "services/api/.claude/CLAUDE.md"
    assert results["after_ignored_enter"] == str(ws / ".prayu/rules/drafts/wip.md")
    assert results["open_after_plain_enter"] is True
    assert results["after_q"] == {
        "float_open": False,
        "float_win_valid": False,
        "float_buf_valid": False,
        "buffer": str(ws / ".prayu/rules/drafts/wip.md"),
        "windows": windows,
    }


def test_hover_and_code_lens_on_agents_md(tmp_path: Path, ws: Path) -> None:
    results = run_nvim(tmp_path, "hover", ws)
    assert results["filetype"] == "markdown"  # rutter attaches to markdown too

    root = results["root_hover"]
    assert root["kind"] == "markdown"
    text = root["value"]
    assert text.startswith("**rutter** · `AGENTS.md` — **effective**")
    assert "- kind: `agents`" in text
    assert "- scope: `.` (depth 0)" in text
    assert re.search(r"- precedence: 0 \(ordinal 1 of \d+\)", text)
    assert "- why: workspace-root AGENTS.md" in text
    # The open source file it reaches (open instruction files are not counted as targets).
    assert f"- applies to 1 open file(s): `{TARGET}`" in text
    assert (
        "  - `agents`: `services/api/AGENTS.override.md` is nearer to its targets and wins where "
        "they conflict"
    ) in text

    text = results["superseded_hover"]["value"]
    assert text.startswith(
        "**rutter** · `services/api/AGENTS.md` — **superseded by services/api/AGENTS.override.md**"
    )
    assert "- kind: `agents`" in text
    assert "- scope: `services/api` (depth 2)" in text
    assert "- precedence: 200 if it were delivered" in text
    assert "- superseded by `services/api/AGENTS.override.md`" in text

    assert results["root_lenses"] == [
        {
            "line": 0,
            "title": "rutter: applies to 1 open file",
            "command": "rutter.showApplicableFiles",
        }
    ]
    assert results["superseded_lenses"] == [
        {
            "line": 0,
            "title": "rutter: superseded by services/api/AGENTS.override.md",
            "command": "rutter.showApplicableFiles",
        }
    ]
    assert results["lens_virt_text"] == "rutter: superseded by services/api/AGENTS.override.md"
    assert [lens["title"] for lens in results["ignored_lenses"]] == [
        "rutter: ignored by .prayu/instructions.ignore:2"
    ]
    assert results["go_lenses"] == 0


def test_diagnostics_for_broken_and_secret_bearing_files(tmp_path: Path, ws: Path) -> None:
    (ws / "services/web/.prayu/rules").mkdir(parents=True)
    (ws / "services/web/.prayu/rules/broken.md").write_bytes(b"# Broken rule\n\nbad \xff byte\n")
    (ws / "tools").mkdir()
    (ws.parent / "outside.md").write_text("outside the workspace\n", encoding="utf-8")
    (ws / "tools/AGENTS.md").symlink_to("../../outside.md")  # out of the workspace: refused
    token = github_token()
    (ws / "docs").mkdir()
    (ws / "docs/CLAUDE.md").write_text(f"# Docs\n\nDeploy token: {token}\n", encoding="utf-8")

    results = run_nvim(tmp_path, "diagnostics", ws)
    found = results["diagnostics"]

    # Error at the offending byte (line 3, byte 4), with the code; Neovim shows it as a suffix.
    [broken] = found["broken"]
    assert broken["severity"] == "ERROR"
    assert broken["code"] == "invalid_utf8"
    assert broken["source"] == "rutter"
    assert (broken["lnum"], broken["col"]) == (2, 4)
    assert "discovery fails closed" in broken["message"]
    assert [lens["title"] for lens in results["broken_lenses"]] == [
        "rutter: fails closed: invalid_utf8"
    ]
    shown = "\n".join(results["diagnostic_float"])
    assert "[invalid_utf8]" in shown
    assert "discovery fails closed" in shown

    # A symlinked AGENTS.md: Neovim keeps the link's name, the server refuses it.
    assert results["symlink_buffer_name"] == str(ws / "tools/AGENTS.md")
    [symlink] = found["symlink"]
    assert (symlink["severity"], symlink["code"]) == ("ERROR", "symlink")

    # A secret: a Warning on its exact range.
    [secret] = found["secret"]
    assert secret["severity"] == "WARN"
    assert secret["code"] == "secret"
    start = len("Deploy token: ")
    assert (secret["lnum"], secret["col"], secret["end_lnum"], secret["end_col"]) == (
        2,
        start,
        2,
        start + len(token),
    )
    assert "this will be redacted before any agent sees it" in secret["message"]
    assert token not in secret["message"]
    [password] = found["root_claude"]
    assert (password["severity"], password["code"], password["lnum"]) == ("WARN", "secret", 3)

    # Not delivered: Information.
    [superseded] = found["superseded"]
    assert superseded["severity"] == "INFO"
    assert superseded["code"] == "superseded"
    assert "superseded by services/api/AGENTS.override.md" in superseded["message"]
    [ignored] = found["ignored"]
    assert (ignored["severity"], ignored["code"]) == ("INFO", "ignore_file")
    assert ignored["message"] == (
        "not delivered: ignored by .prayu/instructions.ignore:2 (`.prayu/rules/drafts/`)"
    )

    # The float of a file below the broken rule shows the typed error, and <CR> can open it.
    error_float = results["error_float"]
    lines = error_float["lines"]
    assert lines[0] == "rutter · services/web/src/app.ts"
    assert "Discovery failed closed: no instructions are delivered for this file." in lines
    assert "  error    invalid_utf8" in lines
    path_line = lines.index("  path     services/web/.prayu/rules/broken.md")
    assert rows(error_float)[path_line + 1] == "services/web/.prayu/rules/broken.md"
    assert any(line.startswith("  message  ") for line in lines)
    assert error_float["result"]["error"]["code"] == "invalid_utf8"


def stack_paths(lines: list[str]) -> list[str]:
    """The source paths of the float's rows, in order."""
    header = next(i for i, line in enumerate(lines) if re.fullmatch(r" *# +prec +kind +path", line))
    paths = []
    for line in lines[header + 1 :]:
        match = re.fullmatch(r" *\d+ +\d+ +\S+ +(\S+)(  \[redacted\])?", line)
        if match:
            paths.append(match.group(1))
        elif not line.lstrip().startswith("why: "):
            break
    return paths


def fingerprint(lines: list[str]) -> str:
    [line] = [line for line in lines if line.startswith("Fingerprint ")]
    return line.removeprefix("Fingerprint ")


def test_float_follows_changes_on_disk(tmp_path: Path, ws: Path) -> None:
    token = github_token()
    results = run_nvim(tmp_path, "live", ws, {"RUTTER_NVIM_TOKEN": token})
    # The plugin watches, not Neovim's LSP watcher: only the directories discovery reads for
    # the open file (root → file), with their .prayu/ and .claude/ subtrees.
    assert results["advertised"] is False
    assert results["watched"] == sorted(
        str(ws / rel)
        for rel in [
            ".",
            ".prayu",
            ".prayu/rules",
            ".prayu/rules/drafts",
            ".prayu/rules/go",
            "services",
            "services/api",
            "services/api/.claude",
            "services/api/.prayu",
            "services/api/.prayu/rules",
            "services/api/.prayu/rules/go",
            "services/api/internal",
            "services/api/internal/parser",
        ]
    )

    before = results["before"]["lines"]
    rewritten = results["after_rewrite"]["lines"]
    assert stack_paths(before) == [path for *_, path in STACK]
    assert "Redactions (2)" in rewritten
    assert (
        "  services/api/internal/parser/AGENTS.md — github_token x1: removed before any agent "
        "sees it"
    ) in rewritten
    assert any(
        re.fullmatch(r"9\s+400\s+agents\s+services/api/internal/parser/AGENTS\.md  \[redacted\]", x)
        for x in rewritten
    )
    assert fingerprint(rewritten) != fingerprint(before)
    assert not any(token in line for line in rewritten)
    assert results["updates_after_rewrite"] >= 1
    assert results["still_focused"] is True

    # The server's notification names the workspace and the changed paths.
    changes = [e for e in results["events"] or [] if e["event"] == "RutterInstructionsChanged"]
    assert changes
    assert {e["workspace_id"] for e in changes} == {"monorepo"}
    changed = {path for e in changes for path in e["paths"]}
    assert {"services/api/internal/parser/AGENTS.md", "services/api/internal/CLAUDE.md"} <= changed

    created = results["after_create"]["lines"]
    paths = stack_paths(created)
    assert (
        paths.index("services/api/internal/CLAUDE.md")
        == paths.index("services/api/internal/parser/AGENTS.md") - 1
    )
    assert len(paths) == len(STACK) + 1
    # What the float shows at the end is what discovery delivers for the tree as it is now.
    assert fingerprint(created) == core_snapshot(tmp_path, ws, TARGET)["fingerprint"]


def test_refresh_command_and_save_without_file_watchers(tmp_path: Path, ws: Path) -> None:
    token = github_token()
    results = run_nvim(tmp_path, "refresh", ws, {"RUTTER_NVIM_TOKEN": token})
    assert results["cmd"] == [sys.executable, "-m", "rutter_lsp.server"]
    assert results["advertised"] is False
    assert results["registrations"] is None
    assert results["watched"] == []

    # Nothing watches the disk: the float keeps the old answer until asked again.
    assert results["unchanged_without_watchers"] is True
    refreshed = results["after_refresh"]["lines"]
    assert (
        "  services/api/internal/parser/AGENTS.md — github_token x1: removed before any agent "
        "sees it"
    ) in refreshed
    assert fingerprint(refreshed) != fingerprint(results["before"]["lines"])

    # `:w` in Neovim: the blank override is skipped and services/api/AGENTS.md is delivered.
    assert results["editing_from"] == str(ws / TARGET)
    saved = results["after_save"]["lines"]
    paths = stack_paths(saved)
    assert "services/api/AGENTS.md" in paths
    assert "services/api/AGENTS.override.md" not in paths
    assert any(re.fullmatch(r"6\s+200\s+agents\s+services/api/AGENTS\.md", x) for x in saved)
    assert (
        "  services/api/AGENTS.override.md — blank override: skipped, the level falls back to "
        "AGENTS.md"
    ) in saved
    assert results["float_still_open"] is True


# -- pure Lua, no server --------------------------------------------------------------------


def test_formatter_root_finder_and_file_classes(tmp_path: Path) -> None:
    home = tmp_path / "roots" / "home"
    for rel in ["proj/AGENTS.md", "proj/svc/AGENTS.md", "proj/svc/.prayu/rules/x.md",
                "outer/CLAUDE.md", "outer/repo/a/AGENTS.md", "wt/.git", "wt/src/AGENTS.md",
                ".claude/CLAUDE.md", "notes/x.md", "plain/x.txt", "dots/sub/x.go"]:  # fmt: skip
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text("x\n", encoding="utf-8")
    (home / "outer/repo/.git").mkdir()
    (home / ".git").mkdir()  # a dotfiles repository in $HOME
    results = run_nvim(
        tmp_path,
        "unit",
        tmp_path,
        {"RUTTER_NVIM_ROOTS": str(tmp_path / "roots")},
        script_mode=True,
    )

    snapshot = results["snapshot"]
    assert snapshot["lines"] == [
        "rutter · internal/parser/input.go (workspace demo)",
        "2 sources in delivery order; a higher precedence wins where they conflict",
        "",
        " #  prec  kind        path",
        " 1     0  agents      AGENTS.md",
        "    why: workspace-root AGENTS.md; inherited (depth 0)",
        "12   110  prayu_rule  internal/.prayu/rules/db.md  [redacted]",
        "    why: rule db.md of internal",
        "",
        "Conflicts (1)",
        "  agents: AGENTS.md < internal/AGENTS.md",
        "    both apply; internal/AGENTS.md is nearer to the target and wins where they conflict",
        "",
        "Ignored (4)",
        "  svc/AGENTS.md — superseded by svc/AGENTS.override.md (a non-blank AGENTS.override.md "
        "replaces AGENTS.md at its level)",
        "  .prayu/rules/private.md — ignored by .prayu/instructions.ignore:3 (pattern private.md)",
        "  x/AGENTS.override.md — blank override: skipped, the level falls back to AGENTS.md",
        "  y/CLAUDE.md — some_future_reason",
        "",
        "Redactions (1)",
        "  internal/.prayu/rules/db.md — github_token x2, private_key x1: removed before any agent "
        "sees it",
        "",
        "Fingerprint " + "ab" * 32,
        "",
        "<CR> open file · R refresh · a agent · q close",
    ]
    assert rows(snapshot) == {
        1: "internal/parser/input.go",
        5: "AGENTS.md",
        6: "AGENTS.md",
        7: "internal/.prayu/rules/db.md",
        8: "internal/.prayu/rules/db.md",
        15: "svc/AGENTS.md",
        16: ".prayu/rules/private.md",
        17: "x/AGENTS.override.md",
        18: "y/CLAUDE.md",
        21: "internal/.prayu/rules/db.md",
    }
    assert snapshot["hl"]["1"] == "Title"
    assert snapshot["hl"]["6"] == "Comment"  # why lines are dimmed

    assert results["empty"]["lines"] == [
        "rutter · README (workspace demo)",
        "No instruction file applies to this file.",
        "",
        "Fingerprint f00",
    ]
    assert results["error"]["lines"] == [
        "rutter · tools/x.go",
        "",
        "Discovery failed closed: no instructions are delivered for this file.",
        "",
        "  error    symlink",
        "  path     tools/AGENTS.md",
        "  message  tools/AGENTS.md is a symbolic link",
        "  details  kind=link offset=19",
        "",
        "<CR> open file · R refresh · a agent · q close",
    ]
    assert rows(results["error"]) == {6: "tools/AGENTS.md"}
    assert results["error"]["hl"]["5"] == "ErrorMsg"
    assert rows(results["outside"])[6] == "/elsewhere/a.txt"
    assert results["no_answer"]["lines"] == ["rutter · a.go", "", "no answer from the server"]

    # The workspace root: the nearest .git (directory or worktree file), else the outermost
    # marker; for files under $HOME, never $HOME itself or above (not even its .git).
    assert results["roots"] == {
        "nested_markers": str(home / "proj"),
        "git_wins": str(home / "outer/repo"),
        "git_file": str(home / "wt"),
        "home_markers_only": None,
        "nothing": None,
        "dotfiles_git_at_home": None,
    }
    assert results["instruction_files"] == {
        "/w/AGENTS.md": True,
        "/w/a/AGENTS.override.md": True,
        "/w/CLAUDE.md": True,
        "/w/a/.claude/CLAUDE.md": True,
        "/w/.prayu/instructions.md": True,
        "/w/.prayu/instructions.ignore": True,
        "/w/a/.prayu/rules/x/y.MD": True,
        "/w/README.md": False,
        "/w/agents.md": False,
        "/w/src/main.go": False,
    }


# -- runs -----------------------------------------------------------------------------------


def test_runs_float_drift_diagnostic_and_confirm_code_action(tmp_path: Path, ws: Path) -> None:
    from rutter_core.runs.service import create_run, latest_revision

    home = tmp_path / "rutter-home"
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
    run_id = created.run_id

    results = run_nvim(tmp_path, "runs", ws)

    [before] = [line for line in results["before"] if run_id in line]
    assert "⚠" not in before
    assert TARGET in before
    assert "(revision 1)" in before
    assert results["drift_before"] == []

    [drift] = results["drift"]
    assert drift["severity"] == "WARN"
    assert drift["message"].startswith(
        f"services/api/internal/parser/AGENTS.md changed since run {run_id} pinned it (revision 1)"
    )
    [stale] = [line for line in results["stale"] if run_id in line]
    assert stale.startswith("⚠ ")
    assert any("stale: <CR> to review" in line for line in results["stale"])
    assert results["runs_changed_events"] >= 1

    # The code action asked through vim.ui.select; the review document was shown.
    prompts = [asked["prompt"] for asked in results["asked"]]
    assert any("refresh run " + run_id in prompt for prompt in prompts), prompts
    assert results["review_buffer"].startswith(str(home / "reviews"))
    assert any(
        "+Always run the fuzzers before merging." in line for line in results["review_lines"]
    )

    [after] = [line for line in results["after"] if run_id in line]
    assert "⚠" not in after
    assert "(revision 2)" in after
    with open_store(f"sqlite:///{home / 'rutter.db'}") as store:
        latest = latest_revision(store, run_id)
    assert latest is not None
    assert latest.revision == 2
    assert latest.confirmed_by == "lsp"


def test_runs_float_reviews_another_registrations_run_against_the_served_files(
    tmp_path: Path, ws: Path
) -> None:
    """A run made through a second checkout of the project is listed stale against the served
    files, and <CR> refreshes it to them: the review names the registration the drift came
    from (the run's own would read the other checkout, where nothing changed)."""
    import shutil

    from rutter_core.runs.service import create_run, inspect_run

    other = tmp_path / "other-checkout"
    shutil.copytree(ws, other, symlinks=True)
    home = tmp_path / "rutter-home"
    url = f"sqlite:///{home / 'rutter.db'}"
    project: ProjectChoice = ("team-monorepo", "named")
    with open_store(url) as store:
        # "aa-copy" sorts first: the registration a review without one would not be served.
        register_workspace(
            store, "aa-copy", other.resolve(), cwd=other, machine=THIS_MACHINE, project=project
        )
        register_workspace(store, "monorepo", ws, cwd=ws, machine=THIS_MACHINE, project=project)
        created = create_run(
            store, workspace_id="aa-copy", goal="harden the parser", reader=FileReader(),
            actor="cli", target=TARGET,
        )  # fmt: skip
    run_id = created.run_id

    results = run_nvim(tmp_path, "runs_other_registration", ws)

    [listed] = [run for run in results["listed"] if run["run_id"] == run_id]
    assert listed["workspace_id"] == "aa-copy"
    assert listed["drift_workspace_id"] == "monorepo"
    assert listed["stale"] is True
    assert any("refresh run " + run_id in asked["prompt"] for asked in results["asked"])
    assert results["reviewed"].get("error") is None
    [after] = [line for line in results["after"] if run_id in line]
    assert "(revision 2)" in after

    def stale_against(workspace_id: str) -> bool:
        with open_store(url) as store:
            inspection = inspect_run(
                store, run_id, reader=FileReader(), local=workspace_id, machine=THIS_MACHINE
            )
        return bool(inspection.stale)

    assert stale_against("monorepo") is False
    assert stale_against("aa-copy") is True
