"""A repository built like pydantic-ai (root `CLAUDE.md -> AGENTS.md`, nested AGENTS.md files,
`CLAUDE.md -> CONTRIBUTING.md` in another directory), as a real git repository, and the same
repository cloned with `core.symlinks=false` (git writes each link as a stub file). Every file
of each gets an answer from the real CLI, with the links reported as aliases and link targets.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write_tree
from tests.testing import Cli

FILES = {
    "AGENTS.md": "# pydantic-ai\nRun `make test` before you push.\n",
    "CONTRIBUTING.md": "Contributions: open an issue first.\n",
    "pydantic_ai_slim/AGENTS.md": "slim package rules\n",
    "pydantic_ai_slim/pydantic_ai/AGENTS.md": "core package rules\n",
    "pydantic_ai_slim/pydantic_ai/models/AGENTS.md": "model adapters rules\n",
    "pydantic_ai_slim/pydantic_ai/models/openai.py": "x = 1\n",
    "docs/AGENTS.md": "docs rules\n",
    "clai/CONTRIBUTING.md": "clai contributions\n",
    "clai/clai.py": "x = 1\n",
}
LINKS = {"CLAUDE.md": "AGENTS.md", "clai/CLAUDE.md": "CONTRIBUTING.md"}


def git(*args: str, cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.invalid", GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.invalid", GIT_CONFIG_NOSYSTEM="1", HOME=str(cwd),
    )  # fmt: skip
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout


@pytest.fixture
def repos(tmp_path: Path) -> tuple[Path, Path]:
    origin = tmp_path / "pydantic-ai"
    origin.mkdir()
    write_tree(origin, FILES)
    for rel, to in LINKS.items():
        (origin / rel).symlink_to(to)
    git("init", "-q", "-b", "main", cwd=origin)
    git("add", "-A", cwd=origin)
    git("commit", "-q", "-m", "initial", cwd=origin)
    stubbed = tmp_path / "stubbed"
    git("-c", "core.symlinks=false", "clone", "-q", str(origin), str(stubbed), cwd=tmp_path)
    return origin.resolve(), stubbed.resolve()


def answer(cli: Cli, root: Path, rel: str) -> dict[str, Any]:
    """The CLI's answer for `rel`, typed as a person in that file's directory would."""
    here = (root / rel).parent
    result = cli("context", "instructions", "--target", Path(rel).name, "--json", cwd=here)
    assert result.returncode == 0, (rel, result.stdout, result.stderr)
    found: dict[str, Any] = json.loads(result.stdout)
    assert found["target_path"] == rel
    return found


def check_repository(cli: Cli, root: Path, workspace_id: str, *, stub: bool) -> None:
    cli.json("workspace", "register", workspace_id, str(root))
    files = git("ls-files", cwd=root).split()
    assert set(files) == set(FILES) | set(LINKS)
    for rel in files:
        found = answer(cli, root, rel)
        paths = [source["path"] for source in found["sources"]]
        ignored = {entry["path"]: entry for entry in found["ignored"]}
        assert paths[0] == "AGENTS.md", rel
        assert "CLAUDE.md" not in paths
        alias = {"path": "CLAUDE.md", "reason": "alias", "alias_of": "AGENTS.md"}
        assert ignored["CLAUDE.md"] == ({**alias, "link_stub": True} if stub else alias)
        for source in found["sources"]:
            assert source["content"] == FILES[source.get("link_target", source["path"])]
        if rel.startswith("clai/"):
            clai = found["sources"][-1]
            assert clai["path"] == "clai/CLAUDE.md"
            assert clai["link_target"] == "clai/CONTRIBUTING.md"
            assert clai.get("link_stub", False) is stub
        if rel.startswith("pydantic_ai_slim/pydantic_ai/models/"):
            assert paths == [
                "AGENTS.md",
                "pydantic_ai_slim/AGENTS.md",
                "pydantic_ai_slim/pydantic_ai/AGENTS.md",
                "pydantic_ai_slim/pydantic_ai/models/AGENTS.md",
            ]


def test_pydantic_ai_like_repository_answers_every_file(
    tmp_path: Path, repos: tuple[Path, Path]
) -> None:
    origin, _ = repos
    assert (origin / "CLAUDE.md").is_symlink()
    check_repository(Cli(tmp_path / "home", tmp_path), origin, "pai", stub=False)


def test_clone_without_symlinks_answers_every_file_with_stubs(
    tmp_path: Path, repos: tuple[Path, Path]
) -> None:
    _, stubbed = repos
    claude = stubbed / "CLAUDE.md"
    assert not claude.is_symlink()
    assert claude.read_bytes() == b"AGENTS.md"  # what git writes for a link here
    assert (stubbed / "clai" / "CLAUDE.md").read_bytes() == b"CONTRIBUTING.md"
    check_repository(Cli(tmp_path / "home", tmp_path), stubbed, "pai-stubs", stub=True)


def test_cli_table_shows_link_and_alias(tmp_path: Path, repos: tuple[Path, Path]) -> None:
    origin, _ = repos
    cli = Cli(tmp_path / "home", tmp_path)
    cli.json("workspace", "register", "pai", str(origin))
    shown = cli("context", "instructions", "--target", "clai/clai.py", cwd=origin)
    assert shown.returncode == 0, shown.stderr
    assert "clai/CLAUDE.md → clai/CONTRIBUTING.md" in shown.stdout
    assert "CLAUDE.md: alias of AGENTS.md (a link to it; not delivered twice)" in shown.stdout


def test_refused_link_through_the_cli_names_link_and_way_out(
    tmp_path: Path, workspace_root: Path
) -> None:
    cli = Cli(tmp_path / "home", tmp_path)
    (tmp_path / "elsewhere.md").write_text("outside\n")
    (workspace_root / "CLAUDE.md").symlink_to(tmp_path / "elsewhere.md")
    cli.json("workspace", "register", "demo", str(workspace_root))
    failed = cli("context", "instructions", "--target", "x.go", "--json", cwd=workspace_root)
    assert failed.returncode == 3
    error = json.loads(failed.stdout)["error"]
    assert error["code"] == "symlink"
    assert error["path"] == "CLAUDE.md"
    assert "outside the workspace" in error["message"]
    assert str(tmp_path) not in error["message"]
    assert ".prayu/instructions.ignore" in error["message"]


def test_run_pins_a_linked_source_and_drifts_when_its_file_changes(
    tmp_path: Path, repos: tuple[Path, Path]
) -> None:
    origin, _ = repos
    cli = Cli(tmp_path / "home", tmp_path)
    cli.json("workspace", "register", "pai", str(origin))
    created = cli.json("run", "create", "--goal", "g", "--target", "clai.py", cwd=origin / "clai")
    (origin / "clai" / "CONTRIBUTING.md").write_text("clai contributions, revised\n")
    review = cli.json("context", "instructions", "--run", created["run_id"])
    assert review["stale"] is True
    assert review["diff"]["changed"] == ["clai/CLAUDE.md"]
    [pinned] = [s for s in review["pinned"]["sources"] if s["path"] == "clai/CLAUDE.md"]
    [live] = [s for s in review["live"]["sources"] if s["path"] == "clai/CLAUDE.md"]
    assert (pinned["link_target"], live["link_target"]) == ("clai/CONTRIBUTING.md",) * 2
    assert pinned["content"] == FILES["clai/CONTRIBUTING.md"]
    assert live["content"] == "clai contributions, revised\n"
