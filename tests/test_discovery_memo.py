"""`LevelMemo` (levels kept across passes) gives the answers of a fresh discovery after every
kind of change, on random real trees (the grammar of tests/test_discovery_properties.py):
files written (same size or not, blank, invalid), created, deleted and renamed (instruction
files, rules, the ignore file), links and directories made, each either reported to the memo
and the reader (as the language server does for what its watchers report) or, when the change
alters an identity, not reported at all."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from rutter_core.discovery.fsread import FileReader
from rutter_core.discovery.memo import LevelMemo
from rutter_core.discovery.shared import SharedLevels
from rutter_core.discovery.stack import Stack
from rutter_core.discovery.walk import discover_stack
from rutter_core.kernel.errors import RutterError
from tests.test_discovery_properties import (
    AGENTS,
    IGNORE_REL,
    OVERRIDE,
    TREE_BASE,
    Tree,
    build,
    future_clock,
    trees,
)

NAMES = (AGENTS, OVERRIDE, "CLAUDE.md", ".claude/CLAUDE.md", ".prayu/instructions.md",
         ".prayu/rules/n.md", ".prayu/rules/d/n.md", IGNORE_REL, "x.go")  # fmt: skip
BODIES = (b"new rule\n", b"", b"bad \xff\n", b"*.md\n", b"rules/\n")


@dataclass(frozen=True)
class Change:
    kind: str
    rel: str
    other: str = ""
    body: bytes = b""


def answer(root: Path, target: str, reader: FileReader, shared: SharedLevels | None) -> object:
    try:
        stack: Stack = discover_stack("memo", str(root), target, reader=reader, shared=shared)
    except RutterError as error:
        return ("error", error.code, error.path, error.message, error.details)
    return stack


def same_size(body: bytes) -> bytes:
    """Other bytes of the same length (so the size alone does not tell the change)."""
    return body[:-1] + (b"y" if body[-1:] != b"y" else b"z")


def targets_of(tree: Tree) -> list[str]:
    return sorted({".", *tree.dirs, tree.target})


def apply(root: Path, change: Change) -> list[str]:
    """Make the change on disk; returns the paths a watcher would report (and the directories
    whose entries changed, as the server invalidates them)."""
    path = root / change.rel
    reported = [str(path)]
    if change.kind == "write":
        if not path.is_file() or path.is_symlink():
            return []
        body = path.read_bytes()
        path.write_bytes(same_size(body) if change.body == b"same size" else change.body)
        return reported
    reported.append(str(path.parent))
    if change.kind == "create":
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_dir() and not path.is_symlink():
            return []
        if path.is_symlink() or path.exists():
            path.unlink()
        path.write_bytes(change.body)
    elif change.kind == "link":
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink() or path.is_file():
            path.unlink()
        elif path.exists():
            return []
        path.symlink_to(root.parent / "outside-target.md")
        (root.parent / "outside-target.md").write_bytes(b"outside\n")
    elif change.kind == "delete":
        if path.is_symlink() or path.is_file():
            path.unlink()
        elif path.is_dir():
            shutil.rmtree(path)
        else:
            return []
    elif change.kind == "rename":
        other = root / change.other
        if not (path.is_file() or path.is_symlink()) or other.is_dir():
            return []
        other.parent.mkdir(parents=True, exist_ok=True)
        path.replace(other)
        reported += [str(other), str(other.parent)]
    return reported


@st.composite
def changes(draw: st.DrawFn, tree: Tree) -> Change:
    levels = ["", *tree.dirs]
    existing = sorted(tree.nodes) + ([IGNORE_REL] if tree.ignore is not None else [])

    def somewhere() -> str:
        level = draw(st.sampled_from(levels))
        return "/".join(part for part in (level, draw(st.sampled_from(NAMES))) if part)

    kind = draw(st.sampled_from(["write", "create", "delete", "rename", "link"]))
    if kind == "write" and existing:
        body = draw(st.sampled_from([b"same size", *BODIES]))
        return Change("write", draw(st.sampled_from(existing)), body=body)
    if kind in ("delete", "rename") and existing:
        rel = draw(st.sampled_from(existing + list(tree.dirs)))
        return Change(kind, rel, other=somewhere())
    if kind == "link":
        return Change("link", somewhere())
    return Change("create", somewhere(), body=draw(st.sampled_from(BODIES)))


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(tree=trees(), data=st.data())
def test_kept_levels_answer_as_a_fresh_discovery_after_any_change(
    tree: Tree, data: st.DataObject
) -> None:
    with tempfile.TemporaryDirectory(dir=TREE_BASE) as tmp:
        root = build(Path(tmp).resolve(), tree)
        # Every entry looks old enough to keep: only identities and reports protect the memo.
        reader = FileReader(clock_ns=future_clock())
        memo = LevelMemo(clock_ns=future_clock())
        targets = targets_of(tree)
        first = [answer(root, target, reader, SharedLevels(memo)) for target in targets]
        assert first == [answer(root, target, FileReader(), None) for target in targets]
        for _ in range(data.draw(st.integers(1, 3), label="changes")):
            change = data.draw(changes(tree), label="change")
            reported = apply(root, change)
            same_identity = change.kind == "write" and change.body == b"same size"
            if same_identity or data.draw(st.booleans(), label="reported"):
                for path in reported:  # as the language server does for watched changes
                    reader.invalidate(path)
                    memo.invalidate(path)
                event(f"{change.kind}, reported")
            else:
                event(f"{change.kind}, not reported")
            kept = [answer(root, target, reader, SharedLevels(memo)) for target in targets]
            fresh = [answer(root, target, FileReader(), None) for target in targets]
            assert kept == fresh, change
        event("levels replayed" if memo.replayed else "nothing replayed")


def test_a_level_changed_moments_ago_is_not_kept(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "a").mkdir(parents=True)
    (root / AGENTS).write_text("root\n")
    memo = LevelMemo()  # the real clock: everything here was written just now
    answer(root, "a", FileReader(), SharedLevels(memo))
    assert len(memo) == 0
    old = LevelMemo(clock_ns=future_clock())
    answer(root, "a", FileReader(), SharedLevels(old))
    assert len(old) == 2
    answer(root, "a", FileReader(), SharedLevels(old))
    assert old.replayed == 2
    old.invalidate(str(root / "a" / "x.go"))  # a path in a/ forgets a/ and the root
    assert len(old) == 0
