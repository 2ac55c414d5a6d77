"""The `rutter` CLI end to end, through its entry function with a temporary RUTTER_HOME."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.testing import EXAMPLE, THIS_MACHINE, Cli, write_tree


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path / "home", tmp_path)


def test_workspace_lifecycle(cli: Cli, workspace_root: Path, tmp_path: Path) -> None:
    created = cli.json("workspace", "register", "demo", str(workspace_root))
    assert created["workspace_id"] == "demo"
    assert created["root"] == str(workspace_root)
    assert created["created"] is True
    assert created["created_at"].endswith("Z")
    again = cli.json("workspace", "register", "demo", str(workspace_root))
    assert again["created"] is False
    assert cli.json("workspace", "list")["workspaces"] == [
        {**{k: v for k, v in created.items() if k != "created"}, "machine": "this_machine"}
    ]
    assert cli.json("workspace", "show", "demo")["root"] == str(workspace_root)

    other = tmp_path / "other"
    other.mkdir()
    conflict = cli.json("workspace", "register", "demo", str(other), code=4)
    assert conflict["error"]["code"] == "conflict"

    removed = cli.json("workspace", "remove", "demo")
    assert removed["removed"] is True
    missing = cli.json("workspace", "show", "demo", code=5)
    assert missing["error"]["code"] == "not_registered"
    assert cli.json("workspace", "list") == {"machine_id": THIS_MACHINE, "workspaces": []}


def test_invalid_workspace_id_is_rejected(cli: Cli, workspace_root: Path) -> None:
    body = cli.json("workspace", "register", "Bad ID", str(workspace_root), code=3)
    assert body["error"]["code"] == "invalid_workspace_id"


def test_example_monorepo_json(cli: Cli, tmp_path: Path) -> None:
    cli.json("workspace", "register", "demo", str(EXAMPLE))
    snapshot = cli.json(
        "context",
        "instructions",
        "--workspace",
        "demo",
        "--target",
        "services/api/internal/parser/input.go",
    )
    assert [source["path"] for source in snapshot["sources"]] == [
        "AGENTS.md",
        "CLAUDE.md",
        ".prayu/instructions.md",
        ".prayu/rules/go/style.md",
        ".prayu/rules/testing.md",
        "services/api/AGENTS.override.md",
        "services/api/.claude/CLAUDE.md",
        "services/api/.prayu/rules/go/style.md",
        "services/api/internal/parser/AGENTS.md",
    ]
    assert [source["precedence"] for source in snapshot["sources"]] == [
        0, 1, 3, 10, 11, 200, 202, 210, 400
    ]  # fmt: skip
    ignored = {entry["path"]: entry for entry in snapshot["ignored"]}
    assert ignored[".prayu/rules/drafts/wip.md"]["reason"] == "ignore_file"
    assert ignored[".prayu/rules/drafts/wip.md"]["line"] == 2
    assert ignored["services/api/AGENTS.md"] == {
        "path": "services/api/AGENTS.md",
        "reason": "superseded",
        "superseded_by": "services/api/AGENTS.override.md",
    }
    claude = snapshot["sources"][1]
    assert claude["redacted"] is True
    assert "hunter2" not in claude["content"]
    assert {conflict["role"] for conflict in snapshot["conflicts"]} == {
        "agents",
        "prayu_rule:go/style.md",
    }

    # Same tree, another process: the same fingerprint.
    again = cli.json("context", "instructions", "--workspace", "demo", "--target",
                     "services/api/internal/parser/input.go")  # fmt: skip
    assert again["fingerprint"] == snapshot["fingerprint"]


def test_example_monorepo_table(cli: Cli) -> None:
    cli.json("workspace", "register", "demo", str(EXAMPLE))
    result = cli(
        "context", "instructions", "--workspace", "demo", "--target", "services/web/src/app.ts"
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "services/web/AGENTS.md" in out
    assert "Ignored" in out
    assert "blank override" in out
    assert "Redactions" in out
    assert "secret_assignment" in out
    assert "fingerprint " in out


def test_workspace_inferred_from_cwd(cli: Cli, workspace_root: Path) -> None:
    write_tree(workspace_root, {"AGENTS.md": "root\n", "pkg/AGENTS.md": "pkg\n"})
    cli.json("workspace", "register", "outer", str(workspace_root))
    cli.json("workspace", "register", "inner", str(workspace_root / "pkg"))
    body = cli.json("context", "instructions", "--target", "x.go", cwd=workspace_root / "pkg")
    assert body["workspace_id"] == "inner"
    assert [source["path"] for source in body["sources"]] == ["AGENTS.md"]
    body = cli.json("context", "instructions", "--target", "x.go", cwd=workspace_root)
    assert body["workspace_id"] == "outer"


def test_no_workspace_for_cwd_is_a_usage_error(cli: Cli, tmp_path: Path) -> None:
    body = cli.json("context", "instructions", "--target", "x.go", cwd=tmp_path, code=2)
    assert body["error"]["code"] == "workspace_required"
    assert "--workspace" in body["error"]["message"]


@pytest.mark.parametrize(
    ("files", "target", "code", "exit_code"),
    [
        ({"AGENTS.md": ""}, "x.go", "empty_source", 3),
        ({"AGENTS.md": b"\xff"}, "x.go", "invalid_utf8", 3),
        ({}, "/abs/x.go", "invalid_target", 3),
        ({}, "../x.go", "invalid_target", 3),
        ({}, "missing/x.go", "not_found", 5),
        ({".prayu/instructions.ignore": "../x\n"}, "x.go", "invalid_ignore", 3),
    ],
)
def test_fail_closed_errors_and_exit_codes(
    cli: Cli,
    workspace_root: Path,
    files: dict[str, str | bytes],
    target: str,
    code: str,
    exit_code: int,
) -> None:
    write_tree(workspace_root, files)
    cli.json("workspace", "register", "demo", str(workspace_root))
    result = cli("context", "instructions", "--workspace", "demo", "--target", target, "--json")
    assert result.returncode == exit_code
    body = json.loads(result.stdout)
    assert set(body) == {"error"}
    assert body["error"]["code"] == code
    assert body["error"]["message"] in result.stderr
    human = cli("context", "instructions", "--workspace", "demo", "--target", target)
    assert human.returncode == exit_code
    assert human.stdout == ""
    assert f"error[{code}]" in human.stderr


def test_symlink_error_through_cli(cli: Cli, workspace_root: Path, tmp_path: Path) -> None:
    (tmp_path / "elsewhere.md").write_text("x\n")
    (workspace_root / "AGENTS.md").symlink_to(tmp_path / "elsewhere.md")
    cli.json("workspace", "register", "demo", str(workspace_root))
    body = cli.json("context", "instructions", "--workspace", "demo", "--target", "x", code=3)
    assert body["error"] == {
        "code": "symlink",
        "message": body["error"]["message"],
        "path": "AGENTS.md",
    }


def test_unregistered_workspace(cli: Cli) -> None:
    body = cli.json("context", "instructions", "--workspace", "ghost", "--target", "x", code=5)
    assert body["error"]["code"] == "not_registered"


def test_usage_errors(cli: Cli) -> None:
    # A real process: the exit code as the shell sees it (`python -m rutter` exits with
    # `main`'s), not only `main`'s return value.
    result = cli.subprocess("context", "instructions", "--json")
    assert result.returncode == 2
    assert json.loads(result.stdout)["error"]["code"] == "usage"
    result = cli.subprocess("no-such-command")
    assert result.returncode == 2
    assert result.stdout == ""
    result = cli.subprocess()
    assert result.returncode == 2
    assert "workspace" in result.stdout  # the help text


def test_database_url_option(cli: Cli, tmp_path: Path, workspace_root: Path) -> None:
    url = f"sqlite:///{tmp_path / 'elsewhere.db'}"
    cli.json("--database-url", url, "workspace", "register", "demo", str(workspace_root))
    assert (tmp_path / "elsewhere.db").exists()
    assert cli.json("workspace", "list") == {"machine_id": THIS_MACHINE, "workspaces": []}
    listed = cli.json("--database-url", url, "workspace", "list")
    assert [item["workspace_id"] for item in listed["workspaces"]] == ["demo"]


def test_markup_in_names_is_printed_verbatim(cli: Cli, workspace_root: Path) -> None:
    write_tree(workspace_root, {".prayu/rules/[bold]x.md": "a\n", ".prayu/rules/[/x].md": "b\n"})
    cli.json("workspace", "register", "demo", str(workspace_root))
    result = cli("context", "instructions", "--workspace", "demo", "--target", "f.go")
    assert result.returncode == 0, result.stderr
    assert "[bold]x.md" in result.stdout
    assert "[/x].md" in result.stdout
    help_text = cli("workspace", "register", "--help").stdout
    assert "[a-z0-9._-]" in help_text
