"""The wheels as they are published: each package built with `uv build --wheel` (offline, from
this checkout) into a temporary directory, and its METADATA read back as an installer reads it:
the package's own README as the Markdown description, its keywords and classifiers, its entry
points. Nothing is invented: a project URL appears only if `pyproject.toml` states one."""

from __future__ import annotations

import shutil
import subprocess
import tomllib
import zipfile
from email.message import Message
from email.parser import Parser
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGES = {"rutter-core": REPO / "core", "rutter": REPO / "server"}


def uv() -> str:
    """The uv `make sync` installs, else one on PATH."""
    local = REPO / ".tools" / "bin" / "uv"
    found = str(local) if local.is_file() else shutil.which("uv")
    if found is None:
        pytest.skip("uv is not installed (make sync installs it)")
    return found


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("wheels")
    built: dict[str, Path] = {}
    for name in PACKAGES:
        result = subprocess.run(
            [uv(), "build", "--wheel", "--offline", "--package", name, "--out-dir", str(out)],
            cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        [wheel] = out.glob(f"{name.replace('-', '_')}-*.whl")
        built[name] = wheel
    return built


def metadata(wheel: Path) -> tuple[Message, zipfile.ZipFile]:
    archive = zipfile.ZipFile(wheel)
    [name] = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
    return Parser().parsestr(archive.read(name).decode("utf-8")), archive


def project(name: str) -> dict[str, Any]:
    with (PACKAGES[name] / "pyproject.toml").open("rb") as handle:
        table: dict[str, Any] = tomllib.load(handle)["project"]
    return table


@pytest.mark.parametrize("name", sorted(PACKAGES))
def test_the_wheel_carries_its_readme_keywords_and_classifiers(
    wheels: dict[str, Path], name: str
) -> None:
    meta, _ = metadata(wheels[name])
    declared = project(name)
    assert (meta["Name"], meta["Version"]) == (name, declared["version"])
    assert meta["Requires-Python"] == ">=3.11"
    # The package's own README, as Markdown (a package index renders it).
    assert meta["Description-Content-Type"] == "text/markdown"
    readme = (PACKAGES[name] / "README.md").read_text(encoding="utf-8")
    body = meta.get_payload()
    assert isinstance(body, str)
    assert body.strip() == readme.strip()
    assert body.startswith(f"# {name}\n")
    classifiers = meta.get_all("Classifier") or []
    assert sorted(classifiers) == sorted(declared["classifiers"])
    assert "Intended Audience :: Developers" in classifiers
    assert "Programming Language :: Python :: 3.11" in classifiers
    assert "Typing :: Typed" in classifiers
    assert sorted(meta["Keywords"].split(",")) == sorted(declared["keywords"])
    # Only what the project states: no home page is declared, so none is published.
    assert meta.get_all("Project-URL") == (
        [f"{k}, {v}" for k, v in declared["urls"].items()] if "urls" in declared else None
    )


def test_the_servers_wheel_installs_both_commands_over_the_core(wheels: dict[str, Path]) -> None:
    meta, archive = metadata(wheels["rutter"])
    assert "rutter-core" in (meta.get_all("Requires-Dist") or [])
    [entry_points] = [n for n in archive.namelist() if n.endswith(".dist-info/entry_points.txt")]
    text = archive.read(entry_points).decode("utf-8")
    assert "rutter = rutter_cli.main:main" in text
    assert "rutter-lsp = rutter_lsp.serve:main" in text
    names = archive.namelist()
    for package in ("rutter_cli", "rutter_lsp", "rutter_mcp", "rutter_http"):
        assert f"{package}/py.typed" in names
    core, core_archive = metadata(wheels["rutter-core"])
    assert "rutter_core/py.typed" in core_archive.namelist()
    assert core["Name"] == "rutter-core"
