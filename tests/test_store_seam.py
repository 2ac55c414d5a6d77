"""Only `rutter_core/store/dialects/` names a database engine (docs/architecture.md).

Read by the syntax tree, not by grep: documentation (docstrings, comments, `# pragma: no cover`)
may mention an engine; code may not. Outside the store, code must not use an engine's names,
modules, SQL or URL schemes; inside the store (outside its dialects) it must not mention one
at all. `lint-imports` holds the same line for imports of the drivers.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = [ROOT / "core" / "rutter_core", ROOT / "server"]
STORE = ROOT / "core" / "rutter_core" / "store"
DIALECTS = STORE / "dialects"

ENGINE_WORD = re.compile(r"sqlite|pragma|postgres|psycopg|mysql", re.IGNORECASE)
# What code that depends on an engine writes: its SQL, its catalog, its URL schemes.
ENGINE_CODE = re.compile(
    r"\bPRAGMA\b|\bBEGIN\s+IMMEDIATE\b|\bsqlite_\w+|\browid\b|"
    r"\b(?:sqlite|postgres(?:ql)?|mysql)(?:\+\w+)?://",
    re.IGNORECASE,
)


def _documentation(tree: ast.AST) -> set[int]:
    """The ids of string constants that are documentation: every bare string statement."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    }


def _names_and_strings(tree: ast.AST) -> Iterator[tuple[int, str, bool]]:
    """(line, text, is_identifier) for each identifier and non-documentation string."""
    documentation = _documentation(tree)
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Name):
            yield line, node.id, True
        elif isinstance(node, ast.Attribute):
            yield line, node.attr, True
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield line, node.name, True
        elif isinstance(node, ast.arg | ast.keyword) and node.arg is not None:
            yield line, node.arg, True
        elif isinstance(node, ast.alias):
            yield line, node.name, True
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            yield line, node.module, True
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in documentation
        ):
            yield line, node.value, False


def _offences(source: str, *, strict: bool) -> list[tuple[int, str]]:
    """(line, text) of each engine name in code; `strict` also refuses prose in strings."""
    found = []
    for line, text, is_identifier in sorted(_names_and_strings(ast.parse(source))):
        named = ENGINE_WORD.search(text) if is_identifier or strict else None
        written = None if is_identifier else ENGINE_CODE.search(text)
        if named or written:
            found.append((line, text))
    return found


def test_no_code_outside_the_dialects_names_a_database_engine() -> None:
    offences = [
        f"{path.relative_to(ROOT)}:{line}: {text[:80]!r}"
        for source in SOURCES
        for path in sorted(source.rglob("*.py"))
        if not path.is_relative_to(DIALECTS)
        for line, text in _offences(
            path.read_text(encoding="utf-8"), strict=path.is_relative_to(STORE)
        )
    ]
    assert offences == []


SAMPLE = (
    '"""Runs on SQLite (prose is fine)."""\n'
    "import sqlite3  # pragma: no cover\n"
    "def is_sqlite(): ...\n"
    'QUERY = "PRAGMA data_version"\n'
    'URL = "postgresql+psycopg://h/db"\n'
    'HELP = "the default store is SQLite"\n'
    "def f(x):\n"
    '    """A docstring may say BEGIN IMMEDIATE."""\n'
    '    return x.execute("BEGIN IMMEDIATE")\n'
)


def test_the_check_sees_engine_code_and_not_documentation() -> None:
    assert _offences(SAMPLE, strict=False) == [
        (2, "sqlite3"),
        (3, "is_sqlite"),
        (4, "PRAGMA data_version"),
        (5, "postgresql+psycopg://h/db"),
        (9, "BEGIN IMMEDIATE"),
    ]
    assert (6, "the default store is SQLite") in _offences(SAMPLE, strict=True)


def test_tests_reach_a_store_file_only_through_the_helper_that_checks_the_engine() -> None:
    # `sqlite3.connect(store.engine.url.database)` on a PostgreSQL store opens the database's
    # name as a new, empty file in the working directory, and the check passes on nothing;
    # `tests.testing.sqlite_file` fails such a test at once (and the `postgres_url` fixture
    # fails one that left such a file behind).
    tests = ROOT / "tests"
    allowed = {tests / "testing.py", tests / "conftest.py"}
    found = [
        f"{path.name}:{number}"
        for path in sorted(tests.glob("*.py"))
        if path not in allowed and path != Path(__file__)
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "url.database" in line
    ]
    assert found == []
