"""The editor's index asks discovery, never re-implements it: one file's refusals and its
classification are discovery's own (`discovery.checks`, `discovery.layout`)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from rutter_core.discovery.fsread import FileReader
from rutter_core.discovery.snapshot import Limits
from rutter_core.discovery.walk import discover
from rutter_core.kernel.errors import RutterError
from rutter_lsp.index.analysis import ErrorInfo, check_file
from rutter_lsp.index.paths import Folder, classify, uri_of_path
from tests.conftest import write_tree

SMALL = Limits(max_file_bytes=120)


def folder_of(root: Path) -> Folder:
    return Folder(uri_of_path(str(root)), str(root), "ws", "demo", str(root))


def make_symlink(path: Path) -> None:
    (path.parent / "elsewhere.md").write_text("real\n")
    path.symlink_to("../../elsewhere.md")  # out of the workspace: a link 5.6 refuses


def make_link_to_blank(path: Path) -> None:
    (path.parent / "blank.md").write_text(" \n")
    path.symlink_to("blank.md")  # followed (inside the root); the file it ends at is refused


def make_directory(path: Path) -> None:
    path.mkdir()
    (path / "inside.md").write_text("x\n")


def make_fifo(path: Path) -> None:
    os.mkfifo(path)


def writes(body: bytes) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        path.write_bytes(body)

    return write


@pytest.mark.parametrize(
    ("rel", "make", "code"),
    [
        ("a/CLAUDE.md", make_symlink, "symlink"),
        ("a/CLAUDE.md", make_link_to_blank, "empty_source"),
        ("a/CLAUDE.md", make_directory, "not_regular_file"),
        ("a/.prayu/instructions.md", make_fifo, "not_regular_file"),
        ("a/AGENTS.md", writes(b"ok\x00"), "nul_byte"),
        ("a/.claude/CLAUDE.md", writes(b"caf\xe9\n"), "invalid_utf8"),
        ("a/AGENTS.md", writes(b" \n\t\n"), "empty_source"),
        ("a/.prayu/rules/x.md", writes(b"x" * 121), "too_large"),
        # Within the raw bound, over it once each key is replaced by its longer marker.
        ("a/CLAUDE.md", writes(b"AKIAQ3ZJ7WLD5MRT2XKF\n" * 5), "too_large"),
    ],
)
def test_one_files_refusal_is_the_one_discovery_reports(
    workspace_root: Path, rel: str, make: Callable[[Path], None], code: str
) -> None:
    write_tree(workspace_root, {"AGENTS.md": "root\n", "a/b.go": ""})
    path = workspace_root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    make(path)
    with pytest.raises(RutterError) as raised:
        discover("demo", str(workspace_root), "a/b.go", reader=FileReader(), limits=SMALL)
    assert raised.value.code == code
    file = classify(rel)
    assert file is not None
    found = check_file(folder_of(workspace_root), file, FileReader(), limits=SMALL)
    assert found == ErrorInfo.of(raised.value)


def test_files_discovery_delivers_or_skips_are_fine(workspace_root: Path) -> None:
    write_tree(
        workspace_root,
        {
            "AGENTS.md": "root\n",
            "a/AGENTS.override.md": "  \n",  # blank: skipped, AGENTS.md is used instead
            "a/AGENTS.md": "a\n",
            "a/.prayu/rules/r.md": "rule\n",
            ".prayu/instructions.ignore": "a/CLAUDE.md\n",
            "a/CLAUDE.md": "",  # empty, but excluded by the ignore file
            "a/b.go": "",
        },
    )
    snapshot = discover("demo", str(workspace_root), "a/b.go", reader=FileReader())
    assert [s.path for s in snapshot.sources] == ["AGENTS.md", "a/AGENTS.md", "a/.prayu/rules/r.md"]
    folder = folder_of(workspace_root)
    for rel in ("a/AGENTS.override.md", "a/AGENTS.md", "a/.prayu/rules/r.md", "a/CLAUDE.md"):
        file = classify(rel)
        assert file is not None
        assert check_file(folder, file, FileReader()) is None, rel
