"""Rules of docs/architecture.md that import-linter cannot see."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted(
    path
    for base in (ROOT / "core" / "rutter_core", ROOT / "surfaces")
    for path in base.rglob("*.py")
)
MAX_LINES = 500
ONE_THING = "Why one module:"
"""A module over MAX_LINES says, in a docstring paragraph starting with this, why it is one
thing rather than several."""


def test_the_sources_are_found() -> None:
    assert len(SOURCES) > 40


@pytest.mark.parametrize("path", SOURCES, ids=lambda path: str(path.relative_to(ROOT)))
def test_a_long_module_says_why_it_is_one_thing(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    lines = text.count("\n")
    if lines <= MAX_LINES:
        return
    docstring = ast.get_docstring(ast.parse(text)) or ""
    assert ONE_THING in docstring, (
        f"{path.relative_to(ROOT)} has {lines} lines: split it, or say in its docstring "
        f"({ONE_THING!r}) why it is one thing"
    )
