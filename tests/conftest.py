"""Shared fixtures: real directories, real files, a real store under a temporary RUTTER_HOME."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from rutter_core.discovery.fsread import FileReader
from rutter_core.store import Store, open_store
from tests.testing import SteppedClock, write_tree

__all__ = ["write_tree"]  # also importable from here, as it was


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
def stepped_clock(monkeypatch: pytest.MonkeyPatch) -> SteppedClock:
    """rutter's clock, moved on by the test (see `tests.testing.SteppedClock`)."""
    return SteppedClock(monkeypatch)


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
# of the run so recall and false positives show in the normal output, not only under `-s`. It
# travels on the test's report (a user property), which reaches this process from any worker.
REDACTION_FIGURES = "redaction_corpus"


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    del config
    for outcome in ("passed", "failed"):
        for report in terminalreporter.stats.get(outcome, []):
            for name, value in getattr(report, "user_properties", ()):
                if name == REDACTION_FIGURES and isinstance(value, list):
                    terminalreporter.write_sep("-", "redaction corpus")
                    for line in value:
                        terminalreporter.write_line(str(line))


SLOW_SUITES = {"test_neovim": pytest.mark.neovim, "postgres": pytest.mark.postgres}
"""Module name part → the marker its tests get, so `-m "not neovim"` leaves out the real-editor
suite (and `not postgres` the PostgreSQL one) without each module having to say so."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        module = item.path.stem
        for part, marker in SLOW_SUITES.items():
            if part in module:
                item.add_marker(marker)
