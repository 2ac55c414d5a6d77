"""`rutter context instructions --targets-from FILE|-`: many targets in one process, as a real
subprocess against real files (issue 12)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write_tree

TREE: dict[str, str | bytes] = {
    "AGENTS.md": "root rules\n",
    "a/AGENTS.md": "a rules\n",
    "a/b/x.go": "",
    "a/b/y.go": "",
    "c/z.go": "",
    "bad/CLAUDE.md": b"\xff\xfe not utf-8\n",
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


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    write_tree(root, TREE)
    result = run(tmp_path / "home", tmp_path, "workspace", "register", "demo", str(root))
    assert result.returncode == 0, result.stderr
    return root


def lines_of(result: subprocess.CompletedProcess[bytes]) -> list[dict[str, Any]]:
    text = result.stdout.decode("utf-8")
    assert text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


def single(home: Path, cwd: Path, target: str) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(
        run(home, cwd, "context", "instructions", "--target", target, "--json").stdout
    )
    return found


def test_one_json_line_per_target_equal_to_the_single_answers(repo: Path) -> None:
    home = repo.parent / "home"
    listing = repo.parent / "targets.txt"
    listing.write_bytes(b"a/b/x.go\r\na/b/y.go\n\nc/z.go\n.\n")
    result = run(home, repo, "context", "instructions", "--targets-from", str(listing), "--json")
    assert result.returncode == 0, result.stderr
    answers = lines_of(result)
    assert [answer["target_path"] for answer in answers] == ["a/b/x.go", "a/b/y.go", "c/z.go", "."]
    for answer in answers:
        alone = single(home, repo, answer["target_path"])
        assert answer["fingerprint"] == alone["fingerprint"]
        assert {**answer, "loaded_at": ""} == {
            **alone, "loaded_at": "", "sources": answer["sources"],
        }  # fmt: skip
        assert [(s["path"], s["content"]) for s in answer["sources"]] == [
            (s["path"], s["content"]) for s in alone["sources"]
        ]
    assert [s["path"] for s in answers[0]["sources"]] == ["AGENTS.md", "a/AGENTS.md"]
    assert [s["path"] for s in answers[2]["sources"]] == ["AGENTS.md"]


def test_errors_per_target_and_the_worst_exit_code(repo: Path) -> None:
    home = repo.parent / "home"
    stdin = b"c/z.go\nmissing/dir/f.go\nbad/f.go\n../out\na/b/x.go\n"
    result = run(
        home, repo, "context", "instructions", "--targets-from", "-", "--json", stdin=stdin
    )
    answers = lines_of(result)
    assert len(answers) == 5
    assert answers[0]["target_path"] == "c/z.go"
    assert answers[4]["target_path"] == "a/b/x.go"  # later targets still answered
    failed = {answer["target"]: answer for answer in answers[1:4]}
    assert {target: (a["line"], a["error"]["code"]) for target, a in failed.items()} == {
        "missing/dir/f.go": (2, "not_found"),
        "bad/f.go": (3, "invalid_utf8"),
        "../out": (4, "invalid_target"),
    }
    assert failed["bad/f.go"]["error"]["path"] == "bad/CLAUDE.md"
    assert "not utf-8" not in result.stdout.decode()  # the file's content is never echoed
    # rejected (3) is worse than not found (5); each failure is on stderr with its target
    assert result.returncode == 3
    stderr = result.stderr.decode()
    assert "error[not_found]: missing/dir/f.go:" in stderr
    assert "error[invalid_utf8]: bad/f.go:" in stderr

    only_missing = run(home, repo, "context", "instructions", "--targets-from", "-", "--json",
                       stdin=b"missing/x.go/y\n")  # fmt: skip
    assert only_missing.returncode == 5
    assert lines_of(only_missing)[0]["error"]["code"] == "not_found"


def test_tables_without_json(repo: Path) -> None:
    home = repo.parent / "home"
    result = run(home, repo, "context", "instructions", "--targets-from", "-",
                 stdin=b"a/b/x.go\nc/z.go\n")  # fmt: skip
    assert result.returncode == 0, result.stderr
    text = result.stdout.decode()
    assert text.count("Effective instructions for") == 2
    assert "a/AGENTS.md" in text


def test_a_change_between_batches_is_seen(repo: Path) -> None:
    home = repo.parent / "home"
    args = ("context", "instructions", "--targets-from", "-", "--json")
    before = lines_of(run(home, repo, *args, stdin=b"a/b/x.go\nc/z.go\n"))
    (repo / "AGENTS.md").write_text("root rules, changed\n", encoding="utf-8")
    after = lines_of(run(home, repo, *args, stdin=b"a/b/x.go\nc/z.go\n"))
    for old, new in zip(before, after, strict=True):
        assert old["fingerprint"] != new["fingerprint"]
        assert new["sources"][0]["content"] == "root rules, changed\n"


@pytest.mark.parametrize(
    ("args", "stdin"),
    [
        (("--targets-from", "-", "--target", "c/z.go"), b"a/b/x.go\n"),
        (("--targets-from", "-", "--run", "run_x"), b"a/b/x.go\n"),
        (("--targets-from", "-", "--confirm"), b"a/b/x.go\n"),
        (("--targets-from", "no-such-file.txt"), b""),
        (("--targets-from", "-"), b"a/b/x.go\n\xff\n"),
    ],
)
def test_usage_errors_answer_nothing(repo: Path, args: tuple[str, ...], stdin: bytes) -> None:
    home = repo.parent / "home"
    result = run(home, repo, "context", "instructions", *args, "--json", stdin=stdin)
    assert result.returncode == 2
    assert json.loads(result.stdout)["error"]["code"] == "usage"


def test_workspace_failure_is_one_error_document(repo: Path, tmp_path: Path) -> None:
    home = repo.parent / "home"
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    result = run(home, outside, "context", "instructions", "--targets-from", "-", "--json",
                 stdin=b"a/b/x.go\n")  # fmt: skip
    assert result.returncode == 2
    assert json.loads(result.stdout)["error"]["code"] == "workspace_required"
    ghost = run(home, repo, "context", "instructions", "--targets-from", "-", "--workspace",
                "ghost", "--json", stdin=b"a/b/x.go\n")  # fmt: skip
    assert ghost.returncode == 5
    assert json.loads(ghost.stdout)["error"]["code"] == "not_registered"


TRICKY_TEXT = [
    "plain ASCII rules\n",
    "é ü 中文 🎉 ∑ — non-ASCII as it is\n",
    'quotes " and \\ backslashes, a / slash, </script>\n',
    "control characters \x01 \x1b[31m \x7f and \t tabs \r\n",
    "line and paragraph separators \u2028 \u2029, a BOM-like \ufeff inside\n",
    "token = 'abcd1234efgh'\npassword: hunter2hunter2\n",  # redacted, with counts
]


@pytest.mark.parametrize("text", TRICKY_TEXT)
def test_a_json_line_is_the_compact_encoding_of_the_document(tmp_path: Path, text: str) -> None:
    """`Snapshot.to_json_line` (what a batch prints) is exactly the compact `json.dumps` of
    `to_json()`: same keys in the same order, non-ASCII as it is, the same escapes."""
    from rutter_core.discovery.fsread import FileReader
    from rutter_core.discovery.walk import discover

    root = tmp_path / "répertoire"
    write_tree(
        root,
        {
            "AGENTS.md": text,
            "sous dossier/AGENTS.md": f"nested {text}",
            "sous dossier/AGENTS.override.md": f"override {text}",  # supersedes: ignored
            ".prayu/rules/règle.md": text,
            "docs/guide «1».md": f"guide {text}",
            "sous dossier/ß.go": "",
        },
    )
    (root / "sous dossier" / "CLAUDE.md").symlink_to(root / "docs" / "guide «1».md")
    snapshot = discover("demo", str(root.resolve()), "sous dossier/ß.go", reader=FileReader())
    assert snapshot.ignored
    assert snapshot.conflicts
    assert any(source.link_target for source in snapshot.sources)
    encoded = json.dumps(snapshot.to_json(), ensure_ascii=False, separators=(",", ":"))
    assert snapshot.to_json_line() == encoded
