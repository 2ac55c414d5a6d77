"""A command that only reads never creates the store: against a store that does not exist yet
it answers as from an empty one and leaves no file or directory behind; a failure to find
something names the store that was searched (real subprocesses, real files)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def run(home: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUTTER_")}
    env["RUTTER_HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "rutter", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


READ_ONLY: list[tuple[tuple[str, ...], int]] = [
    (("workspace", "list", "--json"), 0),
    (("workspace", "show", "demo", "--json"), 5),
    (("context", "instructions", "--target", "x.py", "--json"), 2),
    (("context", "instructions", "--as", "codex", "--target", "x.py", "--json"), 2),
    (("context", "instructions", "--run", "run_01JAAAAAAAAAAAAAAAAAAAAAAA", "--json"), 5),
    (("context", "memory", "list", "--scope", "user", "--json"), 0),
    (("context", "pin", "proposals", "--json"), 0),
    (("run", "list", "--all", "--json"), 0),
    (("run", "show", "run_01JAAAAAAAAAAAAAAAAAAAAAAA", "--json"), 5),
    (("session", "tree", "run_01JAAAAAAAAAAAAAAAAAAAAAAA", "--json"), 5),
    (("history", "search", "anything", "--json"), 0),
    (("http", "token", "list", "--json"), 0),
]


@pytest.mark.parametrize(("args", "exit_code"), READ_ONLY, ids=str)
def test_a_reading_command_creates_no_store(
    tmp_path: Path, args: tuple[str, ...], exit_code: int
) -> None:
    home = tmp_path / "home"
    result = run(home, tmp_path, *args)
    assert result.returncode == exit_code, result.stderr
    assert not home.exists()
    document = json.loads(result.stdout)
    if exit_code:
        error = document["error"]
        assert error["details"]["store"] == f"sqlite:///{home / 'rutter.db'}"
        assert "which does not exist yet" in error["message"]


def test_a_writing_command_still_creates_the_store_and_errors_name_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (tmp_path / "repo").mkdir()
    registered = run(home, tmp_path, "workspace", "register", "demo", str(tmp_path / "repo"))
    assert registered.returncode == 0, registered.stderr
    assert (home / "rutter.db").is_file()
    listed = json.loads(run(home, tmp_path, "workspace", "list", "--json").stdout)
    assert [item["workspace_id"] for item in listed["workspaces"]] == ["demo"]
    store = f"sqlite:///{home / 'rutter.db'}"
    outside = run(home, tmp_path, "context", "instructions", "--target", "x", "--json")
    assert outside.returncode == 2
    error = json.loads(outside.stdout)["error"]
    assert error["code"] == "workspace_required"
    assert error["details"]["store"] == store
    assert "does not exist yet" not in error["message"]
    assert f"(store: {store})" in outside.stderr
    ghost = run(home, tmp_path, "run", "list", "--workspace", "ghost", "--json")
    assert json.loads(ghost.stdout)["error"]["details"]["store"] == store
    # Other things not found in a store that exists are about the ID, not the store.
    missing = run(home, tmp_path, "run", "show", "run_01JAAAAAAAAAAAAAAAAAAAAAAA", "--json")
    assert missing.returncode == 5
    assert "store" not in json.loads(missing.stdout)["error"]["details"]


def test_an_explicit_database_url_is_not_created_by_a_read(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere" / "team.db"
    result = run(tmp_path / "home", tmp_path, "--database-url", f"sqlite:///{target}",
                 "run", "list", "--all", "--json")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"runs": []}
    assert not (tmp_path / "elsewhere").exists()
    assert not (tmp_path / "home").exists()
