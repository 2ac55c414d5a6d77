"""`--target` as people type it (docs/reference/workspaces.md), through the real CLI with its cwd
set: relative to the current directory inside the workspace, workspace-relative outside it,
absolute inside the root; the answer names the workspace-relative `target_path`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import write_tree
from tests.testing import Cli


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path / "home", tmp_path)


@pytest.fixture
def registered(cli: Cli, workspace_root: Path) -> Path:
    write_tree(
        workspace_root,
        {"AGENTS.md": "root\n", "svc/api/AGENTS.md": "api\n", "svc/api/main.go": "x", "b/y": ""},
    )
    cli.json("workspace", "register", "demo", str(workspace_root))
    return workspace_root


def target_path(cli: Cli, cwd: Path, typed: str, *extra: str) -> str:
    found = cli.json("context", "instructions", "--target", typed, *extra, cwd=cwd)
    path: str = found["target_path"]
    return path


def test_relative_to_the_current_directory_inside_the_workspace(cli: Cli, registered: Path) -> None:
    api = registered / "svc" / "api"
    assert target_path(cli, api, "main.go") == "svc/api/main.go"
    assert target_path(cli, api, ".") == "svc/api"
    assert target_path(cli, api, "../../b/y") == "b/y"
    assert target_path(cli, registered / "svc", "./api/main.go") == "svc/api/main.go"
    # --workspace names the same workspace: the current directory still counts
    assert target_path(cli, api, "main.go", "--workspace", "demo") == "svc/api/main.go"


def test_workspace_relative_outside_the_workspace(
    cli: Cli, registered: Path, tmp_path: Path
) -> None:
    assert target_path(cli, tmp_path, "svc/api/main.go", "--workspace", "demo") == (
        "svc/api/main.go"
    )


def test_absolute_inside_the_root(cli: Cli, registered: Path, tmp_path: Path) -> None:
    absolute = str(registered / "svc" / "api" / "main.go")
    assert target_path(cli, registered / "b", absolute) == "svc/api/main.go"
    assert target_path(cli, tmp_path, absolute, "--workspace", "demo") == "svc/api/main.go"
    assert target_path(cli, tmp_path, str(registered), "--workspace", "demo") == "."


def test_linked_target_keeps_its_own_path(cli: Cli, registered: Path) -> None:
    (registered / "b" / "link.go").symlink_to("../svc/api/main.go")
    found = cli.json("context", "instructions", "--target", "link.go", cwd=registered / "b")
    assert found["target_path"] == "b/link.go"
    assert [source["path"] for source in found["sources"]] == ["AGENTS.md"]


@pytest.mark.parametrize(
    ("typed", "where"),
    [("", "root"), ("", "outside"), ("/etc/passwd", "root"), ("/etc/passwd", "outside"),
     ("../../..", "api"), ("../x", "root"), ("../x", "outside")],
)  # fmt: skip
def test_refused_targets_are_invalid_target(
    cli: Cli, registered: Path, tmp_path: Path, typed: str, where: str
) -> None:
    cwd = {"root": registered, "api": registered / "svc" / "api", "outside": tmp_path}[where]
    body = cli.json(
        "context", "instructions", "--target", typed, "--workspace", "demo", code=3, cwd=cwd
    )
    assert body["error"]["code"] == "invalid_target"
    if typed.startswith("/"):
        assert "/etc/passwd" not in body["error"]["message"]


def test_run_create_resolves_its_target_the_same_way(cli: Cli, registered: Path) -> None:
    api = registered / "svc" / "api"
    created = cli.json("run", "create", "--goal", "g", "--target", "main.go", cwd=api)
    shown = cli.json("run", "show", created["run_id"])
    assert shown["target_path"] == "svc/api/main.go"
    default = cli.json("run", "create", "--goal", "g", cwd=api)
    assert cli.json("run", "show", default["run_id"])["target_path"] == "."
    absolute = cli.json("run", "create", "--goal", "g", "--target", str(api), cwd=registered)
    assert cli.json("run", "show", absolute["run_id"])["target_path"] == "svc/api"
    empty = cli.json("run", "create", "--goal", "g", "--target", "", code=3, cwd=api)
    assert empty["error"]["code"] == "invalid_target"
