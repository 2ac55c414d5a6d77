"""`--targets-from` fed by git as people pipe it: quoted non-ASCII names (`git ls-files`),
NUL-separated names (`git ls-files -z`), and `--as AGENT` over a batch; real git, real
subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rutter_cli.targets import git_unquote
from tests.conftest import write_tree

TREE: dict[str, str | bytes] = {
    "AGENTS.md": "root rules\n",
    "GEMINI.md": "gemini rules\n",
    "docs/AGENTS.md": "docs rules\n",
    "docs/café.md": "",
    "docs/naïve notes.md": "",
    "docs/tab\there.md": "",
    "src/plain.py": "",
}


def run(
    home: Path, cwd: Path, *args: str, stdin: bytes = b""
) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUTTER_")}
    env["RUTTER_HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "rutter", *args],
        cwd=cwd, env=env, input=stdin, capture_output=True, timeout=120, check=False,
    )  # fmt: skip


def git(root: Path, *args: str) -> bytes:
    return subprocess.run(
        ["git", "-c", "core.quotePath=true", *args],
        cwd=root, capture_output=True, check=True, timeout=60,
    ).stdout  # fmt: skip


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    write_tree(root, TREE)
    git(root, "init", "-q")
    git(root, "add", "-A")
    registered = run(tmp_path / "home", tmp_path, "workspace", "register", "demo", str(root))
    assert registered.returncode == 0, registered.stderr
    return root


def json_lines(result: subprocess.CompletedProcess[bytes]) -> list[dict[str, Any]]:
    assert result.stdout.endswith(b"\n")
    return [json.loads(line) for line in result.stdout.decode("utf-8").splitlines()]


def test_git_ls_files_output_is_read_as_the_names_it_quotes(repo: Path) -> None:
    listing = git(repo, "ls-files")
    assert b'"docs/caf\\303\\251.md"' in listing  # git quoted it: the case under test
    assert b'"docs/tab\\there.md"' in listing
    result = run(repo.parent / "home", repo, "context", "instructions", "--targets-from", "-",
                 "--json", stdin=listing)  # fmt: skip
    assert result.returncode == 0, result.stderr
    answers = json_lines(result)
    targets = [answer["target_path"] for answer in answers]
    assert targets == sorted(TREE, key=lambda name: name.encode())
    by_target = {answer["target_path"]: answer for answer in answers}
    assert [s["path"] for s in by_target["docs/café.md"]["sources"]] == [
        "AGENTS.md",
        "docs/AGENTS.md",
    ]


def test_nul_separated_names_are_taken_as_they_are(repo: Path) -> None:
    listing = git(repo, "ls-files", "-z")
    assert "docs/naïve notes.md".encode() in listing  # -z never quotes
    result = run(repo.parent / "home", repo, "context", "instructions", "--targets-from", "-",
                 "-z", "--json", stdin=listing)  # fmt: skip
    assert result.returncode == 0, result.stderr
    targets = [answer["target_path"] for answer in json_lines(result)]
    assert targets == sorted(TREE, key=lambda name: name.encode())


def test_as_agent_over_a_batch_gives_one_view_per_target_in_order(repo: Path) -> None:
    stdin = b"src/plain.py\n../outside.md\ndocs/AGENTS.md\n"
    result = run(repo.parent / "home", repo, "context", "instructions", "--as", "gemini",
                 "--targets-from", "-", "--json", stdin=stdin)  # fmt: skip
    assert result.returncode == 3, result.stderr
    first, failure, third = json_lines(result)
    assert first["agent"] == "gemini"
    assert [s["path"] for s in first["sources"]] == ["GEMINI.md"]
    assert failure["target"] == "../outside.md"
    assert failure["line"] == 2
    assert failure["error"]["code"]
    assert third["agent"] == "gemini"
    single = run(repo.parent / "home", repo, "context", "instructions", "--as", "gemini",
                 "--target", "src/plain.py", "--json")  # fmt: skip
    assert json.loads(single.stdout) == first


def test_as_all_over_a_batch_for_people(repo: Path) -> None:
    result = run(repo.parent / "home", repo, "context", "instructions", "--as", "all",
                 "--targets-from", "-", stdin=b"src/plain.py\ndocs/AGENTS.md\n")  # fmt: skip
    assert result.returncode == 0, result.stderr
    text = result.stdout.decode()
    assert text.count("Gemini CLI would load") == 2
    assert "for src/plain.py" in text
    assert "for docs/AGENTS.md" in text


@pytest.mark.parametrize(
    ("args", "stdin", "wording"),
    [
        (("--targets-from", "-"), b'"docs/bad\\q.md"\n', "not a name as git quotes it"),
        (("--targets-from", "-"), b'"docs/\\30.md"\n', "not a name as git quotes it"),
        (("--targets-from", "-"), b'"a"b"\n', "not a name as git quotes it"),
        (("--targets-from", "-"), b'"docs/\\000.md"\n', "holds a NUL byte"),
        (("--targets-from", "-", "-z"), b"src/plain.py\0\xff\0", "entry 2"),
        (("--target", "src/plain.py", "-z"), b"", "-z goes with --targets-from"),
        (("--as", "codex", "--target", "x", "--diff"), b"", "--as AGENT goes"),
    ],
)
def test_bad_batches_are_usage_errors_naming_the_line(
    repo: Path, args: tuple[str, ...], stdin: bytes, wording: str
) -> None:
    result = run(repo.parent / "home", repo, "context", "instructions", *args, stdin=stdin)
    assert result.returncode == 2
    assert wording in result.stderr.decode()
    assert result.stdout == b""


@pytest.mark.parametrize(
    ("quoted", "name"),
    [
        (b"caf\\303\\251.py", "café.py".encode()),
        (b'a\\tb\\nc\\\\d\\"e', b'a\tb\nc\\d"e'),
        (b"\\a\\b\\v\\f\\r", b"\x07\x08\x0b\x0c\x0d"),
        (b"plain", b"plain"),
        (b"", b""),
    ],
)
def test_git_unquote_reverses_gits_quoting(quoted: bytes, name: bytes) -> None:
    assert git_unquote(quoted) == name


@pytest.mark.parametrize("body", [b"\\", b"\\x41", b"\\4", b"\\400"[:2], b"\\38", b'a"b'])
def test_git_unquote_refuses_what_git_never_writes(body: bytes) -> None:
    assert git_unquote(body) is None
