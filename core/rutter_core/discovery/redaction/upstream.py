"""detect-secrets' patterns, read from its installed plugin files without importing them.

Importing any `detect_secrets.plugins.*` module runs the package's `__init__`, which loads its
whole scanner and `requests` (about 0.2 s of a cold CLI call) for nothing we use: we need the
plugins' compiled regexes and the keyword list, not their verification over the network. So
the plugin sources are parsed with `ast` and only literal `re.compile("...", flags=re.X)`
entries of a class's `denylist` (and the keyword module's `DENYLIST` tuple) are taken. A test
compares every pattern taken here with the imported plugin's own, so an upgrade that changes a
pattern is followed and one that changes the shape fails loudly (`UpstreamChanged`).
"""

from __future__ import annotations

import ast
import importlib.util
import re
from functools import cache
from pathlib import Path
from typing import Final, NamedTuple

_FLAGS: Final = {"IGNORECASE": re.IGNORECASE, "I": re.IGNORECASE, "VERBOSE": re.VERBOSE,
                 "X": re.VERBOSE, "MULTILINE": re.MULTILINE, "M": re.MULTILINE}  # fmt: skip


class Source(NamedTuple):
    """A plugin's regex as written (compiled only when a rule first needs it)."""

    pattern: str
    flags: int


class UpstreamChanged(RuntimeError):
    """detect-secrets is missing, or a plugin no longer has the shape read here."""


@cache
def _plugins_dir() -> Path:
    spec = importlib.util.find_spec("detect_secrets")  # finds it; does not run its __init__
    if spec is None or not spec.submodule_search_locations:
        raise UpstreamChanged("detect-secrets is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "plugins"


@cache
def _source(module: str) -> str:
    path = _plugins_dir() / f"{module}.py"
    try:
        return path.read_text(encoding="utf-8")
    except OSError as error:
        raise UpstreamChanged(f"cannot read detect-secrets plugin {module}") from error


@cache
def _tree(module: str, head: str) -> ast.Module:
    """The top-level statement of `module` that starts with `head`, parsed on its own (parsing
    the whole keyword plugin would cost more than everything else here)."""
    source = _source(module)
    start = source.find("\n" + head)
    if start < 0:
        raise UpstreamChanged(f"detect-secrets {module} has no {head.strip()}")
    lines = source[start + 1 :].splitlines(keepends=True)
    end = 1
    while end < len(lines) and (not lines[end].strip() or lines[end][0] in " \t)#"):
        end += 1
    try:
        return ast.parse("".join(lines[:end]))
    except SyntaxError as error:
        raise UpstreamChanged(f"cannot parse detect-secrets {module}.{head.strip()}") from error


def _flags(node: ast.expr) -> int:
    if isinstance(node, ast.Attribute) and node.attr in _FLAGS:
        return _FLAGS[node.attr]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _flags(node.left) | _flags(node.right)
    raise ValueError("flags are not a plain re flag")


def _compiled(node: ast.expr) -> Source | None:
    """`re.compile('literal', flags=...)`, or None for anything computed."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "compile"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return None
    flags = 0
    try:
        for extra in node.args[1:]:
            flags |= _flags(extra)
        for keyword in node.keywords:
            if keyword.arg == "flags":
                flags |= _flags(keyword.value)
    except ValueError:
        return None
    return Source(node.args[0].value, flags)


def denylist(module: str, detector: str) -> tuple[Source | None, ...]:
    """The plugin's `denylist`, one entry per pattern (None where it is not a literal)."""
    for node in _tree(module, f"class {detector}(").body:
        if isinstance(node, ast.ClassDef) and node.name == detector:
            for statement in node.body:
                if (
                    isinstance(statement, ast.Assign)
                    and any(
                        isinstance(t, ast.Name) and t.id == "denylist" for t in statement.targets
                    )
                    and isinstance(statement.value, ast.List | ast.Tuple)
                ):
                    return tuple(_compiled(element) for element in statement.value.elts)
    raise UpstreamChanged(f"detect-secrets {module}.{detector} has no denylist")


def pattern(module: str, detector: str, index: int) -> Source:
    patterns = denylist(module, detector)
    if index >= len(patterns) or (found := patterns[index]) is None:
        raise UpstreamChanged(f"detect-secrets {detector}.denylist[{index}] is not a literal")
    return found


def literal_patterns(module: str, detector: str) -> tuple[Source, ...]:
    return tuple(found for found in denylist(module, detector) if found is not None)


def keywords() -> tuple[str, ...]:
    """The KeywordDetector's `DENYLIST` (`api_?key`, `password`, ...)."""
    for node in _tree("keyword", "DENYLIST = ").body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "DENYLIST" for t in node.targets)
            and isinstance(node.value, ast.Tuple | ast.List)
        ):
            words = ast.literal_eval(node.value)
            if all(isinstance(word, str) for word in words):
                return tuple(words)
    raise UpstreamChanged("detect-secrets keyword.DENYLIST is not a tuple of strings")
