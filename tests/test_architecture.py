"""Rules of docs/architecture.md that import-linter cannot see."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted(
    path for base in (ROOT / "core" / "rutter_core", ROOT / "server") for path in base.rglob("*.py")
)
MAX_LINES = 500
ONE_THING = "Why one module:"
"""A module over MAX_LINES says, in a docstring paragraph starting with this, why it is one
thing rather than several."""


def test_the_sources_are_found() -> None:
    assert len(SOURCES) > 40


def _lines(path: Path) -> int:
    return path.read_text(encoding="utf-8").count("\n")


LONG_SOURCES = [path for path in SOURCES if _lines(path) > MAX_LINES]
"""The modules over MAX_LINES: only these have a case below (a case for every module, returning
early for the short ones, would be a test that cannot fail)."""


@pytest.mark.parametrize("path", LONG_SOURCES, ids=lambda path: str(path.relative_to(ROOT)))
def test_a_long_module_says_why_it_is_one_thing(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    lines = text.count("\n")
    docstring = ast.get_docstring(ast.parse(text)) or ""
    assert ONE_THING in docstring, (
        f"{path.relative_to(ROOT)} has {lines} lines: split it, or say in its docstring "
        f"({ONE_THING!r}) why it is one thing"
    )


def _hint_fixes() -> set[str]:
    """Every `Hint("fix", ...)` core can raise, read from the source."""
    fixes = set()
    for path in (ROOT / "core" / "rutter_core").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "Hint"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                fixes.add(node.args[0].value)
    return fixes


def test_the_cli_words_every_hint_core_raises() -> None:
    # Core messages are surface-neutral; without a wording the CLI would print no remedy.
    from rutter_cli.errors import HINT_WORDING

    fixes = _hint_fixes()
    assert len(fixes) > 10
    assert sorted(fixes - set(HINT_WORDING)) == []


@pytest.mark.parametrize("package", ["core", "server"])
def test_each_distribution_describes_itself(package: Path | str) -> None:
    """A built wheel carries a description (its README) and keywords, not only a name."""
    import tomllib

    project = tomllib.loads((ROOT / package / "pyproject.toml").read_text("utf-8"))["project"]
    readme = ROOT / str(package) / project["readme"]
    assert readme.is_file()
    assert readme.read_text("utf-8").startswith("# rutter")
    assert project["keywords"]
    assert project["description"]
