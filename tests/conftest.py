"""Shared fixtures: real directories, real files, a real store under a temporary RUTTER_HOME."""

from __future__ import annotations

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
