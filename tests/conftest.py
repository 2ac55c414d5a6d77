"""Shared fixtures: real directories, real files, a real store under a temporary RUTTER_HOME."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from rutter_core.discovery.fsread import FileReader
from rutter_core.store import Store, open_store


def write_tree(root: Path, files: Mapping[str, str | bytes]) -> None:
    """Create `files` (workspace-relative path → text or bytes) below `root`."""
    for rel, body in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(body, bytes):
            path.write_bytes(body)
        else:
            path.write_text(body, encoding="utf-8", newline="")


@pytest.fixture
def workspace_root(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root.resolve()


@pytest.fixture
def reader() -> FileReader:
    return FileReader()


@pytest.fixture
def rutter_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("RUTTER_HOME", str(home))
    monkeypatch.delenv("RUTTER_DATABASE_URL", raising=False)
    return home


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = open_store(f"sqlite:///{tmp_path / 'store.db'}")
    try:
        yield opened
    finally:
        opened.close()


NAMES_DESCRIPTORS = Path("/proc/self/fd").is_dir()
"""Whether `synced_files` can name the file behind a descriptor (Linux)."""


def synced_files(monkeypatch: pytest.MonkeyPatch, fail: bool = False) -> list[tuple[str, int]]:
    """Every `os.fsync` from here on, as (file name, its size then); each is made (a spy, the
    real call) unless `fail`: an EIO, which a healthy disk cannot be made to give on demand."""
    synced: list[tuple[str, int]] = []
    real_fsync = os.fsync

    def spy(fd: int) -> None:
        synced.append((Path(f"/proc/self/fd/{fd}").readlink().name, os.fstat(fd).st_size))
        if fail:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", spy)
    return synced


# What the redaction corpus test measured (tests/test_redaction_corpus.py), printed at the end
# of the run so recall and false positives show in the normal output, not only under `-s`.
REDACTION_FIGURES = pytest.StashKey[list[str]]()


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    figures = config.stash.get(REDACTION_FIGURES, None)
    if figures:
        terminalreporter.write_sep("-", "redaction corpus")
        for line in figures:
            terminalreporter.write_line(line)
