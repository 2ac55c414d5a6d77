"""Agent profiles in real headless Neovim 0.11 against the real server (issue 20).

A git repository where every agent loads something else for `svc/main.go` (AGENTS.md,
CLAUDE.md, GEMINI.md, .github/copilot-instructions.md, .cursor/rules/*.mdc; Codex cuts
svc/AGENTS.md at its 32 KiB budget). One scenario (tests/neovim/agent_views.lua) switches the
instruction float between agents (:RutterAgent, its completion, the float's `a` picker),
opens :RutterAgents side by side, and reads the agents' diagnostics from vim.diagnostic.get.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

from tests.conftest import write_tree
from tests.neovim_client import NVIM, PLUGIN, run_nvim

AGENTS = ["codex", "claude", "gemini", "copilot", "cursor"]
NAMES = ["Codex", "Claude Code", "Gemini CLI", "Copilot", "Cursor"]


def project(root: Path) -> Path:
    write_tree(
        root,
        {
            "AGENTS.md": "r" * 30_000 + "\n",
            "svc/AGENTS.md": "".join(f"rule {n:04}\n" for n in range(600)),  # 6,000 bytes
            "svc/main.go": "package main\n",
            "CLAUDE.md": "# Claude\n\nSee @AGENTS.md.\n",
            "GEMINI.md": "gemini rules\n",
            ".github/copilot-instructions.md": "copilot rules\n",
            ".cursor/rules/go.mdc": '---\nglobs: "**/*.go"\nalwaysApply: false\n---\ngo rules\n',
            ".cursor/rules/rust.mdc": '---\nglobs: "**/*.rs"\nalwaysApply: false\n---\nrust\n',
            "docs/AGENTS.md": "docs agents\n",
            "docs/CLAUDE.md": "docs claude, which does not import AGENTS.md\n",
        },
    )
    subprocess.run(["git", "init", "-q", str(root)], check=True, capture_output=True)
    return root.resolve()


def _codes(found: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {d["code"]: d for d in found if d["code"] is not None}


def test_agent_switch_side_by_side_and_diagnostics(tmp_path: Path) -> None:
    root = project(tmp_path / "proj")
    results = run_nvim(tmp_path, "agent_views", root)

    # rutter's own float first: the snapshot, the plain title.
    default = results["default"]
    assert default["title"] == " rutter instructions "
    assert default["result"]["protocol_version"] == "project_instruction_snapshot.v1"

    # :RutterAgent codex: Codex's order, its cut (byte, line, lost bytes) and each why.
    codex = results["codex"]
    assert codex["title"] == " rutter instructions · as Codex "  # the window's own title
    assert codex["reported_title"] == codex["title"]  # require("rutter").float().title
    assert codex["agent"] == "codex"
    lines = codex["lines"]
    assert lines[0] == "rutter · svc/main.go · as Codex"
    assert lines[1] == "2 sources Codex loads, in its order; 1 cut"
    first = lines.index("1  AGENTS.md")
    sources = codex["result"]["sources"]
    assert lines[first + 1] == "   why: " + sources[0]["why"]
    assert sources[0]["why"].startswith("Codex ")
    assert lines[first + 2] == "2  svc/AGENTS.md"
    assert lines[first + 3] == "   ✂ cut at line 277 (byte 2767): 3233 bytes lost"
    assert lines[first + 4] == "   why: " + sources[1]["why"]
    assert lines[-1] == "<CR> open file · R refresh · a agent · q close"
    assert codex["result"]["sources"][1]["truncation"] == {
        "byte": 2767,
        "line": 277,
        "lost_bytes": 3233,
    }
    assert results["float_focused"] is True

    # `a` in the float asked through vim.ui.select, and the float now shows Claude Code's view.
    asked = results["pick_asked"]
    assert asked["kind"] == "rutter_agent"
    assert asked["items"] == [
        "rutter (default)",
        "Codex (current)",
        "Claude Code",
        "Gemini CLI",
        "Copilot",
        "Cursor",
    ]
    claude = results["claude"]
    assert claude["title"] == " rutter instructions · as Claude Code "
    assert [s["path"] for s in claude["result"]["sources"]] == ["AGENTS.md", "CLAUDE.md"]
    assert "imported by CLAUDE.md (hop 1 of at most 4)" in "\n".join(claude["lines"])

    # The choice holds for another buffer, until set back.
    other = results["other_buffer"]
    assert other["agent"] == "claude"
    assert other["lines"][0] == "rutter · svc/AGENTS.md · as Claude Code"
    assert results["health"] == ["- instruction float shows: Claude Code (:RutterAgent to switch)"]
    assert results["completion"] == ["codex", "claude", "copilot", "cursor"]
    assert results["after_bad_name"] == "claude"
    assert results["bad_name"]["ok"] is False
    assert (
        "rutter: no agent profile by that name; choose one of default, codex"
        in (results["bad_name"]["error"])
    )
    assert results["back_default"]["title"] == " rutter instructions "
    assert [e["data"]["agent"] for e in results["agent_events"] if e["event"] == "RutterAgent"] == [
        "codex",
        "claude",
        "default",
    ]

    # :RutterAgents: a new tab, focused, one window per agent in the server's order.
    columns = results["columns"]
    assert results["tabs"] == {"before": 1, "after": 2}
    assert results["columns_focused"] is True
    assert results["column_wins"] == 5
    assert results["again"] == {"tabs": 2, "target": "svc/main.go"}
    windows = columns["windows"]
    assert [w["agent"] for w in windows] == AGENTS
    assert [w["winbar"] for w in windows] == [f" {name} · svc/main.go" for name in NAMES]
    by_agent = {w["agent"]: w["lines"] for w in windows}
    # Codex: its two sources, the cut on the deepest; svc/AGENTS.md is not Claude's or Gemini's.
    assert by_agent["codex"][:2] == ["Codex", "2 sources"]
    assert by_agent["codex"][3:8] == [
        "1  AGENTS.md",
        "   ≠ not Gemini CLI, Copilot",
        "2  svc/AGENTS.md",
        "   ✂ cut at line 277 (byte 2767): 3233 bytes lost",
        "   ≠ not Claude Code, Gemini CLI",
    ]
    assert by_agent["gemini"][3:5] == ["1  GEMINI.md", "   ≠ only Gemini CLI"]
    assert by_agent["copilot"][3:5] == [
        "1  .github/copilot-instructions.md",
        "   ≠ only Copilot",
    ]
    assert by_agent["cursor"][3:5] == ["1  .cursor/rules/go.mdc", "   ≠ only Cursor"]
    # Only Codex cuts anything here.
    cut_lines = [line for w in windows for line in w["lines"] if "✂" in line]
    assert cut_lines == ["   ✂ cut at line 277 (byte 2767): 3233 bytes lost"]
    # A change on disk redraws the columns by itself, leaving the cursor where it was.
    live = results["live"]
    assert live["stayed"] is True
    assert live["codex"][3:6] == [
        "1  AGENTS.md",
        "   ≠ not Gemini CLI, Copilot",
        "2  svc/AGENTS.md",
    ]
    assert not any("✂" in line for line in live["codex"])
    assert live["restored"] == by_agent["codex"]
    assert results["opened"] == {
        "win_is_source": True,
        "name": str(root / "svc" / "AGENTS.md"),
    }
    assert results["tabs_after_close"] == 1

    # The agents' diagnostics, as vim.diagnostic.get returns them: source rutter, their codes.
    found = results["diagnostics"]
    cut = _codes(found["cut"])["budget_cut"]
    assert (cut["source"], cut["severity"], cut["lnum"]) == ("rutter", "WARN", 276)
    assert cut["message"].startswith("Codex will cut this file at line 277 (byte 2767)")
    not_read = _codes(found["not_read"])["not_read"]
    assert (not_read["source"], not_read["severity"]) == ("rutter", "INFO")
    assert not_read["message"].startswith("Claude Code will not read this AGENTS.md")
    assert found["rule_filetype"] == "markdown"
    nothing = _codes(found["rule"])["glob_matches_nothing"]
    assert (nothing["source"], nothing["severity"], nothing["lnum"]) == ("rutter", "WARN", 1)
    assert nothing["message"].startswith("Cursor's `globs:` globs match no file")

    # A buffer of no project: a message, no tab.
    assert results["scratch_tabs"] == {"before": 1, "after": 1}
    assert "rutter: no rutter language server for this buffer" in results["messages"]


def test_help_file_has_tags_for_the_new_commands(tmp_path: Path) -> None:
    """editors/neovim/doc/rutter.txt builds its tags (`:helptags`, as plugin managers run it)
    without an error, with a tag for each command it documents."""
    doc = tmp_path / "doc"
    doc.mkdir()
    shutil.copy(PLUGIN / "doc" / "rutter.txt", doc / "rutter.txt")
    done = subprocess.run(
        [str(NVIM), "--clean", "--headless", "-c", f"helptags {doc}", "-c", "qa!"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == "", done.stderr
    tags = {line.split("\t")[0] for line in (doc / "tags").read_text().splitlines()}
    assert {
        ":RutterAgent",
        ":RutterAgents",
        ":RutterCompact",
        ":RutterContext",
        ":RutterHistory",
        ":RutterInstructions",
        "rutter-history-keys",
        "rutter-agent-diagnostics",
    } <= tags


def test_an_agent_view_failing_closed_shows_its_error(tmp_path: Path) -> None:
    root = project(tmp_path / "proj")
    (root / "GEMINI.md").write_bytes(b"gemini \xff rules\n")
    results = run_nvim(tmp_path, "agent_errors", root)

    # The float as Gemini CLI: the typed error, worded as that agent's view.
    float_data = results["float"]
    assert float_data["title"] == " rutter instructions · as Gemini CLI "
    assert float_data["result"]["error"]["code"] == "invalid_utf8"
    lines = float_data["lines"]
    assert lines[0] == "rutter · svc/main.go"
    assert lines[2] == (
        "Gemini CLI's view failed closed: a file it would read cannot be read safely."
    )
    assert "  error    invalid_utf8" in lines
    assert "  path     GEMINI.md" in lines

    # Side by side: Gemini's column shows the error; the others their views, compared among
    # themselves (CLAUDE.md is still Claude Code's alone).
    windows = results["columns"]["windows"]
    assert [w["agent"] for w in windows] == AGENTS
    by_agent = {w["agent"]: w["lines"] for w in windows}
    gemini = by_agent["gemini"]
    assert gemini[:2] == [
        "Gemini CLI",
        "failed closed: a file it would read cannot be read safely",
    ]
    assert "error    invalid_utf8" in gemini
    assert "path     GEMINI.md" in gemini
    assert by_agent["claude"][3:7] == [
        "1  AGENTS.md",
        "   ≠ not Copilot",
        "2  CLAUDE.md",
        "   ≠ only Claude Code",
    ]
    assert not any(
        "Gemini" in line for w in windows if w["agent"] != "gemini" for line in w["lines"]
    )


def test_agent_columns_mark_what_only_some_agents_load(tmp_path: Path) -> None:
    results = run_nvim(tmp_path, "agents_unit", tmp_path, script_mode=True)
    columns = {column["agent"]: column["lines"] for column in results["columns"]}
    assert columns["codex"][3:] == [
        "1  AGENTS.md",  # every agent but Gemini, which loads nothing
        "   ✂ cut at line 2 (byte 10): 5 bytes lost",
        "   ≠ not Gemini CLI",
        "2  SHARED.md",
        "   ≠ only Codex, Claude Code",
        "3  WIDE.md",
        "   ≠ not Gemini CLI, Cursor",
        "",
        "<CR> open file · R reload · q close tab",
    ]
    assert columns["gemini"][:4] == ["Gemini CLI", "0 sources", "", "(loads nothing)"]
    assert results["cut_null"] is None
    assert results["names"] == [
        "Codex", "Claude Code", "Gemini CLI", "Copilot", "Cursor", "rutter (default)", "other",
    ]  # fmt: skip
    assert results["empty_view"] == [
        "rutter · a/b.go · as Gemini CLI",
        "Gemini CLI loads no instruction file for this file.",
    ]
    assert results["one_view"] == [
        "rutter · t · as Cursor",
        "1 source Cursor loads, in its order",
        "",
        "#  path",
        "1  x.mdc",
        "   why: why x.mdc",
    ]


def test_agent_columns_compare_files_so_a_link_is_the_file_it_leads_to(tmp_path: Path) -> None:
    results = run_nvim(tmp_path, "agents_unit", tmp_path, script_mode=True)
    by_file = {column["agent"]: column["lines"][3:-2] for column in results["linked_columns"]}
    assert by_file["codex"] == [
        "1  AGENTS.md",
        "   = same file as CLAUDE.md",
        "   ≠ not Gemini CLI",
    ]
    assert by_file["claude"] == [
        "1  CLAUDE.md",
        "   = same file as AGENTS.md",
        "   ≠ not Gemini CLI",
    ]
    assert by_file["gemini"] == ["1  GEMINI.md", "   ≠ only Gemini CLI"]
    by_name = {column["agent"]: column["lines"][3:-2] for column in results["linked_by_name"]}
    assert by_name["codex"] == ["1  AGENTS.md", "   ≠ only Codex"]
    assert by_name["claude"] == ["1  CLAUDE.md", "   ≠ only Claude Code"]
