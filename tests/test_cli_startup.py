"""What a CLI call imports: only the invoked group, and no store, redaction or network client
where the command does not need them (issue 12). Real subprocesses; counts, never timings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer

from rutter_cli.main import GROUPS, ROOT_HELP, build_app, main, run
from tests.conftest import write_tree
from tests.testing import THIS_MACHINE

# Runs the real entry point in a fresh interpreter, then reports what is imported.
PROBE = """
import contextlib, gc, io, json, sys
from rutter_cli.main import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = main(sys.argv[1:])
# A module `rutter_core.kernel.deferred` stands in for is not imported (yet): left out.
modules = sorted(name for name, m in sys.modules.items() if type(m).__name__ != "_Deferred")
collector = {"enabled": gc.isenabled(), "frozen": gc.get_freeze_count()}
print(json.dumps({"code": code, "out": out.getvalue(), "modules": modules, **collector}))
"""

HEAVY = ("sqlalchemy", "pydantic", "detect_secrets", "requests", "urllib3", "rich")
"""Packages some commands need and others must not pay for."""


def probe_report(home: Path, cwd: Path, *args: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUTTER_")}
    env["RUTTER_HOME"] = str(home)
    result = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    report: dict[str, Any] = json.loads(result.stdout.splitlines()[-1])
    return report


def probe(home: Path, cwd: Path, *args: str) -> tuple[int, str, set[str]]:
    report = probe_report(home, cwd, *args)
    return report["code"], report["out"], set(report["modules"])


def imported(modules: set[str], *packages: str) -> dict[str, int]:
    """How many modules of each package are imported (a count per package, zeros left out)."""
    counts = {
        package: sum(1 for name in modules if name == package or name.startswith(f"{package}."))
        for package in packages
    }
    return {package: count for package, count in counts.items() if count}


@pytest.mark.parametrize("args", [["--help"], []])
def test_help_imports_no_typer_no_store_no_models_no_redaction_no_rich(
    tmp_path: Path, args: list[str]
) -> None:
    code, out, modules = probe(tmp_path / "home", tmp_path, *args)
    assert code == (0 if args else 2)  # `rutter` alone is a usage error that shows the help
    assert all(name in out for name in GROUPS)
    assert imported(modules, *HEAVY, "typer", "rutter_core.store", "rutter_core.app") == {}
    # Only the root: no group module was imported to list the groups.
    assert sorted(name for name in modules if name.startswith("rutter_cli.")) == [
        "rutter_cli.errors", "rutter_cli.main",
    ]  # fmt: skip


@pytest.mark.parametrize("columns", ["40", "80", "200"])
@pytest.mark.parametrize("args", [["--help"], []])
def test_root_help_without_typer_is_the_help_typer_prints(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    columns: str,
    args: list[str],
) -> None:
    """`main` prints the root's help with click alone; `run` builds the typer tree as every
    other command does: the same text and exit code, at any terminal width."""
    monkeypatch.setenv("COLUMNS", columns)
    code = main(args)
    printed = capsys.readouterr()
    typer_code = run(args)
    from_typer = capsys.readouterr()
    assert (code, printed.out, printed.err) == (typer_code, from_typer.out, from_typer.err)
    assert printed.out.startswith("Usage: rutter [OPTIONS] COMMAND [ARGS]...")
    assert all(f"  {name} " in printed.out for name in [*GROUPS, "serve", "mcp"])


def test_workspace_list_imports_the_store_but_no_discovery(tmp_path: Path) -> None:
    code, out, modules = probe(tmp_path / "home", tmp_path, "workspace", "list", "--json")
    assert code == 0
    assert json.loads(out) == {"machine_id": THIS_MACHINE, "workspaces": []}
    assert imported(modules, "sqlalchemy", "rutter_core.store")  # it does need the store
    assert imported(modules, "detect_secrets", "requests", "urllib3", "rutter_core.discovery") == {}
    assert imported(modules, "rutter_cli.runs", "rutter_cli.session", "rutter_cli.memory") == {}


def test_a_command_keeps_what_it_built_out_of_the_collector(tmp_path: Path) -> None:
    """`main` pauses the cyclic collector while it builds the tree (the imports), then freezes
    what exists and resumes it: the collector runs again, over what the command creates."""
    report = probe_report(tmp_path / "home", tmp_path, "workspace", "list", "--json")
    assert report["code"] == 0
    assert report["enabled"] is True
    assert report["frozen"] > 10_000  # the modules, the models, typer's tree
    helped = probe_report(tmp_path / "home", tmp_path, "--help")  # no tree built
    assert (helped["enabled"], helped["frozen"]) == (True, 0)


def test_instructions_redact_without_the_network_client(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write_tree(root, {"AGENTS.md": "token = 'abcd1234efgh'\n", "src/a.go": ""})
    home = tmp_path / "home"
    code, _, _ = probe(home, tmp_path, "workspace", "register", "demo", str(root))
    assert code == 0
    args = ("context", "instructions", "--target", "src/a.go", "--json")
    code, out, modules = probe(home, root, *args)
    assert code == 0
    assert json.loads(out)["sources"][0]["redacted"] is True  # detect-secrets' rules did run
    # detect-secrets' patterns are read from its files: neither it nor its network client loads.
    assert imported(modules, "detect_secrets", "requests", "urllib3") == {}
    assert imported(modules, "rutter_core.runs", "rutter_core.continuity", "rutter_cli.runs") == {}


@pytest.mark.parametrize("name", sorted(GROUPS))
def test_each_group_listed_by_its_own_help(name: str) -> None:
    """The root lists groups without importing them: the help it shows is the group's own."""
    built = typer.main.get_command(build_app([name]))
    assert isinstance(built, typer.core.TyperGroup)
    assert built.help == ROOT_HELP
    group = built.commands[name]
    assert group.help == GROUPS[name].help
    assert isinstance(group, typer.core.TyperGroup)
    assert group.commands  # the real one, built


def test_building_twice_builds_the_same_tree() -> None:
    """A process may build the tree more than once (tests, `main` called twice): groups that
    are assembled from several modules are not assembled twice."""

    def registered(name: str) -> list[str | None]:
        [group] = [g for g in build_app([name]).registered_groups if g.name == name]
        assert group.typer_instance is not None
        commands = [command.name for command in group.typer_instance.registered_commands]
        return commands + [sub.name for sub in group.typer_instance.registered_groups]

    for name in GROUPS:
        first = registered(name)
        assert first
        assert len(set(first)) == len(first), name
        assert registered(name) == first, name


def test_a_group_not_invoked_is_listed_but_not_built() -> None:
    built = typer.main.get_command(build_app(["--database-url", "workspace", "run", "list"]))
    assert isinstance(built, typer.core.TyperGroup)
    # `workspace` is the option's value here: the command is `run`.
    assert built.commands["run"].commands  # type: ignore[attr-defined]
    assert not built.commands["workspace"].commands  # type: ignore[attr-defined]


@pytest.mark.parametrize("args", [["--help"], []])
def test_root_help_to_a_closed_pipe_exits_1_quietly(tmp_path: Path, args: list[str]) -> None:
    """A reader that went away (`rutter --help | head -0`): exit 1, no traceback, as `run`."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # closed before the child writes: its write fails with EPIPE
    try:
        result = subprocess.run(
            [sys.executable, "-m", "rutter", *args],
            cwd=tmp_path, stdout=write_end, stderr=subprocess.PIPE, timeout=120, check=False,
        )  # fmt: skip
    finally:
        os.close(write_end)
    assert (result.returncode, result.stderr) == (1, b"")


def test_a_compaction_without_a_model_loads_no_http_client(tmp_path: Path) -> None:
    """The model summarizers' HTTP client is imported when one is called, not before."""
    missing = ("session", "compact", "thr_01ARZ3NDEKTSV4RRFFQ69G5FAV", "--json")
    code, out, modules = probe(tmp_path / "home", tmp_path, *missing)
    assert code == 5
    assert json.loads(out)["error"]["code"] == "thread_not_found"
    assert imported(modules, "rutter_core.continuity.compaction.endpoints")  # it was reached
    assert imported(modules, "httpx2", "httpcore2", "anyio") == {}
