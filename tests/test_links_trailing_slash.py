"""A link whose target path ends in `/` (or `/.`) names a directory: the kernel refuses to
open it when it ends at a file (ENOTDIR), so discovery and the agent profiles refuse it too,
with the typed `symlink` error of every other link they cannot follow. Real trees, real links;
each case first checks that the kernel itself refuses the link."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from rutter_core.discovery.fsread import FileReader
from rutter_core.discovery.walk import discover
from rutter_core.kernel.errors import RutterError
from rutter_core.profiles.engine import evaluate
from rutter_core.profiles.model import AgentName, load_profile
from tests.conftest import write_tree

BODY = "the rules the link would deliver\n"


def assert_kernel_refuses(link: Path) -> None:
    with pytest.raises(NotADirectoryError) as opened:
        link.read_text()
    assert opened.value.errno == errno.ENOTDIR


def assert_discovery_refuses(root: Path, link_rel: str, target: str = "x.go") -> None:
    with pytest.raises(RutterError) as caught:
        discover("slash", str(root), target, reader=FileReader())
    assert caught.value.code == "symlink", caught.value
    assert caught.value.path == link_rel
    assert BODY.strip() not in caught.value.message


@pytest.mark.parametrize("text", ["real.md/", "real.md/.", "./real.md//", "sub/../real.md/"])
def test_agents_md_linked_with_a_trailing_slash_is_refused(workspace_root: Path, text: str) -> None:
    write_tree(workspace_root, {"real.md": BODY, "sub/keep": ""})
    (workspace_root / "AGENTS.md").symlink_to(text)
    assert_kernel_refuses(workspace_root / "AGENTS.md")
    assert_discovery_refuses(workspace_root, "AGENTS.md")


def test_an_absolute_link_with_a_trailing_slash_is_refused(workspace_root: Path) -> None:
    write_tree(workspace_root, {"real.md": BODY})
    (workspace_root / "CLAUDE.md").symlink_to(f"{workspace_root / 'real.md'}/")
    assert_kernel_refuses(workspace_root / "CLAUDE.md")
    assert_discovery_refuses(workspace_root, "CLAUDE.md")


def test_a_trailing_slash_on_a_later_hop_of_a_chain_is_refused(workspace_root: Path) -> None:
    write_tree(workspace_root, {"real.md": BODY})
    (workspace_root / "hop.md").symlink_to("real.md/")
    (workspace_root / "AGENTS.md").symlink_to("hop.md")
    assert_kernel_refuses(workspace_root / "AGENTS.md")
    assert_discovery_refuses(workspace_root, "AGENTS.md")


def test_a_rule_linked_with_a_trailing_slash_is_refused(workspace_root: Path) -> None:
    write_tree(workspace_root, {"docs/style.md": BODY, ".prayu/rules/keep.md": "keep\n"})
    (workspace_root / ".prayu" / "rules" / "style.md").symlink_to("../../docs/style.md/")
    assert_kernel_refuses(workspace_root / ".prayu" / "rules" / "style.md")
    assert_discovery_refuses(workspace_root, ".prayu/rules/style.md")


def test_a_linked_target_with_a_trailing_slash_is_refused(workspace_root: Path) -> None:
    write_tree(workspace_root, {"AGENTS.md": "root\n", "b/real.go": "x"})
    (workspace_root / "link.go").symlink_to("b/real.go/")
    assert_kernel_refuses(workspace_root / "link.go")
    with pytest.raises(RutterError) as caught:
        discover("slash", str(workspace_root), "link.go", reader=FileReader())
    assert caught.value.code == "symlink"
    assert caught.value.path == "link.go"


def test_the_same_link_without_the_slash_is_still_followed(workspace_root: Path) -> None:
    write_tree(workspace_root, {"real.md": BODY})
    (workspace_root / "AGENTS.md").symlink_to("real.md")
    found = discover("slash", str(workspace_root), "x.go", reader=FileReader())
    assert [(s.path, s.link_target) for s in found.sources] == [("AGENTS.md", "real.md")]


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_agent_profiles_refuse_the_link_as_discovery_does(
    workspace_root: Path, agent: AgentName
) -> None:
    write_tree(workspace_root, {"real.md": BODY})
    name = "CLAUDE.md" if agent == "claude" else "AGENTS.md"
    (workspace_root / name).symlink_to("real.md/")
    assert_kernel_refuses(workspace_root / name)
    with pytest.raises(RutterError) as caught:
        evaluate(load_profile(agent), str(workspace_root), "x.go", FileReader())
    assert caught.value.code == "symlink", caught.value
    assert caught.value.path == name
