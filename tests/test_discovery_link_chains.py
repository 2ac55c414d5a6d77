"""A chain of links that ends at one regular file delivers its text once, every other link of
it an alias, as langfuse's `CLAUDE.md -> AGENTS.md -> .agents/AGENTS.md` (real trees)."""

from __future__ import annotations

from pathlib import Path

from rutter_core.discovery.fsread import FileReader
from rutter_core.discovery.snapshot import Snapshot
from rutter_core.discovery.walk import discover
from tests.conftest import write_tree


def snap(root: Path, target: str = "src/x.py") -> Snapshot:
    return discover("chains", str(root), target, reader=FileReader())


def test_a_chain_through_the_root_delivers_its_end_once(workspace_root: Path) -> None:
    write_tree(workspace_root, {".agents/AGENTS.md": "real rules\n", "src/x.py": ""})
    (workspace_root / "AGENTS.md").symlink_to(".agents/AGENTS.md")
    (workspace_root / "CLAUDE.md").symlink_to("AGENTS.md")
    found = snap(workspace_root)
    assert [(s.path, s.link_target) for s in found.sources] == [("AGENTS.md", ".agents/AGENTS.md")]
    assert [e.model_dump(exclude_none=True) for e in found.ignored] == [
        {"path": "CLAUDE.md", "reason": "alias", "alias_of": "AGENTS.md"}
    ]
    assert found.sources[0].content == "real rules\n"


def test_every_link_of_a_longer_chain_is_an_alias_of_the_one_delivered(
    workspace_root: Path,
) -> None:
    write_tree(workspace_root, {"docs/agents/rules.md": "rules\n", "src/x.py": ""})
    (workspace_root / "docs/agents/AGENTS.md").symlink_to("rules.md")
    (workspace_root / "AGENTS.md").symlink_to("docs/agents/AGENTS.md")
    (workspace_root / "CLAUDE.md").symlink_to("AGENTS.md")
    (workspace_root / ".claude").mkdir()
    (workspace_root / ".claude/CLAUDE.md").symlink_to("../CLAUDE.md")
    found = snap(workspace_root)
    assert [s.path for s in found.sources] == ["AGENTS.md"]
    assert found.sources[0].link_target == "docs/agents/rules.md"
    assert {e.path: e.alias_of for e in found.ignored} == {
        "CLAUDE.md": "AGENTS.md",
        ".claude/CLAUDE.md": "AGENTS.md",
    }


def test_a_chain_through_a_source_delivered_later_is_its_alias(workspace_root: Path) -> None:
    """The root's CLAUDE.md reaches the nested AGENTS.md through a link on the way, and that
    AGENTS.md is delivered for the target later in the walk."""
    write_tree(workspace_root, {"svc/real.md": "service\n", "svc/src/x.py": ""})
    (workspace_root / "svc/AGENTS.md").symlink_to("real.md")
    (workspace_root / "CLAUDE.md").symlink_to("svc/AGENTS.md")
    found = snap(workspace_root, "svc/src/x.py")
    assert [s.path for s in found.sources] == ["svc/AGENTS.md"]
    assert {e.path: e.alias_of for e in found.ignored} == {"CLAUDE.md": "svc/AGENTS.md"}


def test_two_links_to_one_file_outside_the_walk_are_both_delivered(
    workspace_root: Path,
) -> None:
    """Links that reach one file by separate ways (neither passes through the other) are two
    sources, as before: each has its own place in the order."""
    write_tree(workspace_root, {"shared/rules.md": "shared\n", "src/x.py": ""})
    (workspace_root / "AGENTS.md").symlink_to("shared/rules.md")
    (workspace_root / "src/AGENTS.md").symlink_to("../shared/rules.md")
    found = snap(workspace_root)
    assert [s.path for s in found.sources] == ["AGENTS.md", "src/AGENTS.md"]
    assert found.ignored == []


def test_links_to_different_files_are_both_delivered(workspace_root: Path) -> None:
    write_tree(workspace_root, {"a.md": "a\n", "b.md": "b\n", "src/x.py": ""})
    (workspace_root / "AGENTS.md").symlink_to("a.md")
    (workspace_root / "CLAUDE.md").symlink_to("b.md")
    found = snap(workspace_root)
    assert [(s.path, s.link_target) for s in found.sources] == [
        ("AGENTS.md", "a.md"),
        ("CLAUDE.md", "b.md"),
    ]
    assert found.ignored == []
