"""Shared helpers of the Neovim plugin's tests (this module holds no tests): a copy of the
example monorepo (`ws`, a fixture), headless Neovim running one Lua scenario of tests/neovim/
(`run_nvim`), and what the core answers for comparison (`core_snapshot`)."""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import string
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from rutter_core.app.facade import Rutter
from rutter_core.app.instructions import EffectiveInstructionsParams
from rutter_core.store import open_store
from rutter_core.workspaces.service import register_workspace
from tests.testing import THIS_MACHINE

BIN = Path(sys.executable).parent
NVIM = BIN / "nvim"
REPO = Path(__file__).resolve().parent.parent
PLUGIN = REPO / "editors" / "neovim"
MONOREPO = REPO / "docs" / "examples" / "monorepo"
SCENARIOS = Path(__file__).resolve().parent / "neovim"
NVIM_TIMEOUT = 90.0
"""Seconds for one whole Neovim run; the Lua side waits at most WAIT_MS per step."""
WAIT_MS = 20_000

TARGET = "services/api/internal/parser/input.go"
STACK = [
    (1, 0, "agents", "AGENTS.md"),
    (2, 1, "claude", "CLAUDE.md"),
    (3, 3, "prayu_instructions", ".prayu/instructions.md"),
    (4, 10, "prayu_rule", ".prayu/rules/go/style.md"),
    (5, 11, "prayu_rule", ".prayu/rules/testing.md"),
    (6, 200, "agents_override", "services/api/AGENTS.override.md"),
    (7, 202, "claude_dir", "services/api/.claude/CLAUDE.md"),
    (8, 210, "prayu_rule", "services/api/.prayu/rules/go/style.md"),
    (9, 400, "agents", "services/api/internal/parser/AGENTS.md"),
]


def github_token() -> str:
    """A fresh, syntactically valid GitHub token: the redaction rules must find it."""
    alphabet = string.ascii_letters + string.digits
    return "ghp_" + "".join(secrets.choice(alphabet) for _ in range(36))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A private copy of the example monorepo (no .git: its root is found by its markers)."""
    root = tmp_path / "monorepo"
    shutil.copytree(MONOREPO, root, symlinks=True)
    return root.resolve()


def run_nvim(
    tmp_path: Path,
    scenario: str,
    ws: Path,
    env: Mapping[str, str] | None = None,
    *,
    script_mode: bool = False,
) -> dict[str, Any]:
    """Run tests/neovim/<scenario>.lua in headless Neovim; return what it recorded.

    `script_mode`: run it with `nvim -l` (no UI events, no plugins: pure Lua functions).
    """
    out = tmp_path / f"{scenario}.json"
    script = SCENARIOS / f"{scenario}.lua"
    # HOME is tmp_path, above the workspace: the root search stops below it, so no .git or
    # marker around the temporary directory can change the root. Neovim's files go to `xdg`.
    xdg = tmp_path / "xdg"
    full_env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("RUTTER_", "XDG_", "NVIM", "VIM"))
    }
    full_env.update(
        {
            "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "HOME": str(tmp_path),
            "XDG_CONFIG_HOME": str(xdg / "config"),
            "XDG_DATA_HOME": str(xdg / "data"),
            "XDG_STATE_HOME": str(xdg / "state"),
            "XDG_CACHE_HOME": str(xdg / "cache"),
            "RUTTER_HOME": str(tmp_path / "rutter-home"),
            "RUTTER_NVIM_PLUGIN": str(PLUGIN),
            "RUTTER_NVIM_HARNESS": str(SCENARIOS / "harness.lua"),
            "RUTTER_NVIM_SCENARIO": str(script),
            "RUTTER_NVIM_OUT": str(out),
            "RUTTER_NVIM_WS": str(ws),
            "RUTTER_NVIM_WAIT_MS": str(WAIT_MS),
            "RUTTER_NVIM_PYTHON": sys.executable,
        }
    )
    full_env.update(env or {})
    command = (
        [str(NVIM), "--clean", "--headless", "-l", str(script)]
        if script_mode
        else [
            str(NVIM),
            "--headless",
            "--clean",
            "--cmd",
            "lua vim.opt.runtimepath:prepend(vim.env.RUTTER_NVIM_PLUGIN)",
            "-c",
            "lua dofile(vim.env.RUTTER_NVIM_SCENARIO)",
        ]
    )
    try:
        done = subprocess.run(
            command,
            env=full_env,
            cwd=ws,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=NVIM_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"nvim did not finish {scenario} in {NVIM_TIMEOUT} s\n{_logs(xdg, exc)}")
    if not out.exists():
        pytest.fail(
            f"nvim wrote no result for {scenario} (exit {done.returncode})\n{_logs(xdg, done)}"
        )
    report: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    if not report["ok"]:
        pytest.fail(f"scenario {scenario} failed:\n{report['error']}\n{_logs(xdg, done)}")
    results: dict[str, Any] = report["results"]
    # No Lua error anywhere, including in callbacks the scenario's xpcall cannot see.
    shown = f"{results['messages']}\n{done.stderr}"
    assert not re.search(r"\bE\d+:|[Ee]rror executing|stack traceback", shown), shown
    return results


def _logs(xdg: Path, done: Any) -> str:
    lsp_log = xdg / "state" / "nvim" / "lsp.log"
    tail = lsp_log.read_text(encoding="utf-8", errors="replace")[-6000:] if lsp_log.exists() else ""
    return f"--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}\n--- lsp.log (tail)\n{tail}"


def core_snapshot(tmp_path: Path, ws: Path, target: str) -> dict[str, Any]:
    """The same snapshot computed in-process by rutter_core (a separate store)."""
    with open_store(f"sqlite:///{tmp_path / 'core.db'}") as store:
        register_workspace(store, "core", ws, cwd=ws, machine=THIS_MACHINE)
        params = EffectiveInstructionsParams(workspace_id="core", target=target)
        snapshot: dict[str, Any] = Rutter(store).instructions.effective(params).to_json()
    return snapshot


def rows(float_data: dict[str, Any]) -> dict[int, str]:
    return {int(row): path for row, path in (float_data["rows"] or {}).items()}


# -- the float ------------------------------------------------------------------------------
