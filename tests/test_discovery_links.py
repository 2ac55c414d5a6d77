"""Links inside the workspace (docs/reference/discovery.md), with real files and real symbolic
links.

Accepted: a link (or a chain of up to 8) that stays in the root and ends at a regular file;
reported as `alias` when that file is already a source, else as a source with `link_target`;
git `core.symlinks=false` stubs with `link_stub`. Refused with `symlink`: out of the root,
dangling, to a directory, loops, 9 hops, through a linked directory; and a link swapped while
its file is read is `concurrent_modification`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rutter_core.discovery.fsread import FileReader
from rutter_core.discovery.snapshot import Snapshot
from rutter_core.discovery.walk import discover
from rutter_core.kernel.errors import RutterError
from tests.conftest import write_tree


def snap(root: Path, target: str = "x.go") -> Snapshot:
    return discover("links", str(root), target, reader=FileReader())


def refused(root: Path, code: str, target: str = "x.go") -> RutterError:
    with pytest.raises(RutterError) as caught:
        snap(root, target)
    assert caught.value.code == code, caught.value
    return caught.value


def sources(snapshot: Snapshot) -> dict[str, dict[str, Any]]:
    return {s.path: s.model_dump(exclude_none=True) for s in snapshot.sources}


def ignored(snapshot: Snapshot) -> dict[str, dict[str, Any]]:
    return {e.path: e.model_dump(exclude_none=True) for e in snapshot.ignored}


# -- accepted ---------------------------------------------------------------------------------


def test_claude_linked_to_agents_is_an_alias(workspace_root: Path) -> None:
    write_tree(workspace_root, {"AGENTS.md": "root rules\n"})
    (workspace_root / "CLAUDE.md").symlink_to("AGENTS.md")
    found = snap(workspace_root)
    assert list(sources(found)) == ["AGENTS.md"]
    assert ignored(found)["CLAUDE.md"] == {
        "path": "CLAUDE.md", "reason": "alias", "alias_of": "AGENTS.md",
    }  # fmt: skip
    assert found.to_json()["ignored"][0] == {
        "path": "CLAUDE.md", "reason": "alias", "alias_of": "AGENTS.md",
    }  # fmt: skip
    assert found.conflicts == []


def test_link_to_another_file_is_a_source_with_its_target(workspace_root: Path) -> None:
    write_tree(workspace_root, {"CONTRIBUTING.md": "contribute like this\n"})
    (workspace_root / "CLAUDE.md").symlink_to("CONTRIBUTING.md")
    found = snap(workspace_root)
    claude = sources(found)["CLAUDE.md"]
    assert claude["link_target"] == "CONTRIBUTING.md"
    assert claude["content"] == "contribute like this\n"
    assert claude["kind"] == "claude"
    assert claude["precedence"] == 1
    assert "link_stub" not in claude
    assert "a link to CONTRIBUTING.md" in claude["why_effective"]
    assert found.ignored == []


def test_absolute_link_inside_the_root_is_accepted(workspace_root: Path) -> None:
    write_tree(workspace_root, {"docs/guide.md": "guide\n"})
    (workspace_root / "CLAUDE.md").symlink_to(workspace_root / "docs" / "guide.md")
    assert sources(snap(workspace_root))["CLAUDE.md"]["link_target"] == "docs/guide.md"


def test_root_link_to_a_nested_source_is_an_alias_found_later(workspace_root: Path) -> None:
    write_tree(workspace_root, {"sub/AGENTS.md": "sub rules\n", "AGENTS.md": "root\n"})
    (workspace_root / "CLAUDE.md").symlink_to("sub/AGENTS.md")
    at_root = snap(workspace_root, "x.go")
    assert sources(at_root)["CLAUDE.md"]["link_target"] == "sub/AGENTS.md"
    below = snap(workspace_root, "sub/x.go")
    assert list(sources(below)) == ["AGENTS.md", "sub/AGENTS.md"]
    assert ignored(below)["CLAUDE.md"]["alias_of"] == "sub/AGENTS.md"
    assert [s.ordinal for s in below.sources] == [1, 2]


def test_chain_of_eight_links_is_accepted_nine_refused(workspace_root: Path) -> None:
    write_tree(workspace_root, {"chain/end.md": "the end\n"})
    previous = "end.md"
    for index in range(7):
        (workspace_root / "chain" / f"l{index}.md").symlink_to(previous)
        previous = f"l{index}.md"
    (workspace_root / "CLAUDE.md").symlink_to("chain/l6.md")  # CLAUDE.md + 7 more = 8 links
    assert sources(snap(workspace_root))["CLAUDE.md"]["link_target"] == "chain/end.md"
    (workspace_root / "CLAUDE.md").unlink()
    (workspace_root / "chain" / "l7.md").symlink_to("l6.md")
    (workspace_root / "CLAUDE.md").symlink_to("chain/l7.md")  # 9 links
    error = refused(workspace_root, "symlink")
    assert error.path == "CLAUDE.md"
    assert "more than 8 links" in error.message


def test_linked_rule_and_claude_dir(workspace_root: Path) -> None:
    write_tree(
        workspace_root,
        {".prayu/rules/real.md": "real rule\n", "shared/style.md": "style\n", ".claude/x": ""},
    )
    (workspace_root / ".prayu" / "rules" / "style.md").symlink_to("../../shared/style.md")
    (workspace_root / ".prayu" / "rules" / "again.md").symlink_to("real.md")
    (workspace_root / ".claude" / "CLAUDE.md").symlink_to("../shared/style.md")
    found = snap(workspace_root)
    got = sources(found)
    assert got[".prayu/rules/style.md"]["link_target"] == "shared/style.md"
    assert got[".claude/CLAUDE.md"]["link_target"] == "shared/style.md"
    # again.md sorts before real.md, which is a source all the same: again.md is its alias.
    assert ".prayu/rules/again.md" not in got
    assert ".prayu/rules/real.md" in got
    assert ignored(found)[".prayu/rules/again.md"]["alias_of"] == ".prayu/rules/real.md"


def test_ignored_link_is_never_followed(workspace_root: Path, tmp_path: Path) -> None:
    (workspace_root / "CLAUDE.md").symlink_to(tmp_path / "outside.md")
    write_tree(workspace_root, {".prayu/instructions.ignore": "CLAUDE.md\n", "AGENTS.md": "a\n"})
    assert ignored(snap(workspace_root))["CLAUDE.md"]["reason"] == "ignore_file"


def test_link_fields_are_in_the_fingerprint(workspace_root: Path) -> None:
    write_tree(workspace_root, {"CONTRIBUTING.md": "same\n", "OTHER.md": "same\n"})
    (workspace_root / "CLAUDE.md").symlink_to("CONTRIBUTING.md")
    first = snap(workspace_root).fingerprint
    (workspace_root / "CLAUDE.md").unlink()
    (workspace_root / "CLAUDE.md").symlink_to("OTHER.md")
    second = snap(workspace_root).fingerprint
    assert first != second  # same content, another link_target
    (workspace_root / "CLAUDE.md").unlink()
    (workspace_root / "CLAUDE.md").write_text("same\n")
    plain = snap(workspace_root)
    assert plain.fingerprint not in (first, second)
    assert "link_target" not in plain.to_json()["sources"][0]


def test_linked_target_walks_its_own_directory(workspace_root: Path) -> None:
    write_tree(
        workspace_root,
        {"AGENTS.md": "root\n", "a/AGENTS.md": "a\n", "b/AGENTS.md": "b\n", "b/real.go": "x"},
    )
    (workspace_root / "a" / "link.go").symlink_to("../b/real.go")
    found = snap(workspace_root, "a/link.go")
    assert found.target_path == "a/link.go"
    assert list(sources(found)) == ["AGENTS.md", "a/AGENTS.md"]


def test_linked_target_out_of_the_root_is_refused(workspace_root: Path, tmp_path: Path) -> None:
    (tmp_path / "outside.go").write_text("x")
    (workspace_root / "link.go").symlink_to(tmp_path / "outside.go")
    error = refused(workspace_root, "symlink", "link.go")
    assert error.path == "link.go"
    assert "outside the workspace" in error.message
    assert str(tmp_path) not in error.message


# -- git stubs (core.symlinks=false) ---------------------------------------------------------


def test_git_stub_is_treated_as_a_link(workspace_root: Path) -> None:
    write_tree(workspace_root, {"AGENTS.md": "root rules\n", "CLAUDE.md": "AGENTS.md"})
    found = snap(workspace_root)
    assert list(sources(found)) == ["AGENTS.md"]
    assert ignored(found)["CLAUDE.md"] == {
        "path": "CLAUDE.md", "reason": "alias", "alias_of": "AGENTS.md", "link_stub": True,
    }  # fmt: skip


def test_git_stub_to_another_file_is_a_source(workspace_root: Path) -> None:
    write_tree(workspace_root, {"CONTRIBUTING.md": "contribute\n", "CLAUDE.md": "CONTRIBUTING.md"})
    claude = sources(snap(workspace_root))["CLAUDE.md"]
    assert claude["link_target"] == "CONTRIBUTING.md"
    assert claude["link_stub"] is True
    assert claude["content"] == "contribute\n"


@pytest.mark.parametrize(
    "body", ["AGENTS.md\n", "see AGENTS.md", "MISSING.md", "../AGENTS.md", "notes.txt"]
)
def test_what_is_not_a_stub_is_delivered_as_text(workspace_root: Path, body: str) -> None:
    write_tree(workspace_root, {"AGENTS.md": "root\n", "notes.txt": "n", "CLAUDE.md": body})
    claude = sources(snap(workspace_root))["CLAUDE.md"]
    assert claude["content"] == body
    assert "link_target" not in claude


# -- refused ----------------------------------------------------------------------------------


def _link(rel: str, to: str | Path) -> Callable[[Path, Path], None]:
    def make(root: Path, tmp: Path) -> None:
        dest = to if isinstance(to, str) else tmp / to
        (root / rel).symlink_to(dest)

    return make


def _setup_through_linked_dir(root: Path, tmp: Path) -> None:
    write_tree(root, {"real/guide.md": "g\n"})
    (root / "linkdir").symlink_to("real", target_is_directory=True)
    (root / "CLAUDE.md").symlink_to("linkdir/guide.md")


def _setup_loop(root: Path, tmp: Path) -> None:
    (root / "a.md").symlink_to("b.md")
    (root / "b.md").symlink_to("a.md")
    (root / "CLAUDE.md").symlink_to("a.md")


def _setup_escape_and_back(root: Path, tmp: Path) -> None:
    write_tree(root, {"AGENTS.md": "a\n"})
    (root / "CLAUDE.md").symlink_to(f"../{root.name}/AGENTS.md")


def _setup_to_directory(root: Path, tmp: Path) -> None:
    (root / "docs").mkdir()
    (root / "CLAUDE.md").symlink_to("docs", target_is_directory=True)


def _setup_to_fifo(root: Path, tmp: Path) -> None:
    os.mkfifo(root / "pipe.md")
    (root / "CLAUDE.md").symlink_to("pipe.md")


REFUSED: list[tuple[str, Callable[[Path, Path], None], str]] = [
    ("outside", _link("CLAUDE.md", Path("outside.md")), "outside the workspace"),
    ("dangling", _link("CLAUDE.md", "missing.md"), "dangling"),
    ("dangling-dir", _link("CLAUDE.md", "nowhere/x.md"), "dangling"),
    ("to-directory", _setup_to_directory, "ends at a directory"),
    ("to-fifo", _setup_to_fifo, "not a regular file"),
    ("loop", _setup_loop, "loop"),
    ("self", _link("CLAUDE.md", "CLAUDE.md"), "loop"),
    ("through-linked-dir", _setup_through_linked_dir, "linked directory"),
    ("escape-and-back", _setup_escape_and_back, "outside the workspace"),
    ("to-root", _link("CLAUDE.md", "."), "ends at a directory"),
]


@pytest.mark.parametrize(
    ("setup", "why"), [case[1:] for case in REFUSED], ids=[case[0] for case in REFUSED]
)
def test_refused_links_fail_closed_naming_link_and_way_out(
    workspace_root: Path, tmp_path: Path, setup: Callable[[Path, Path], None], why: str
) -> None:
    (tmp_path / "outside.md").write_text("secret outside\n")
    setup(workspace_root, tmp_path)
    error = refused(workspace_root, "symlink")
    assert error.path == "CLAUDE.md"
    assert why in error.message
    assert error.message.startswith("CLAUDE.md is a link")
    assert ".prayu/instructions.ignore" in error.message
    assert "replace the link" not in error.message
    assert str(tmp_path) not in error.message  # never a path outside the workspace
    assert "secret outside" not in error.message


def test_linked_rules_directory_is_still_refused(workspace_root: Path) -> None:
    write_tree(workspace_root, {"shared/r.md": "r\n", ".prayu/rules/a.md": "a\n"})
    (workspace_root / ".prayu" / "rules" / "more").symlink_to(
        "../../shared", target_is_directory=True
    )
    assert refused(workspace_root, "symlink").path == ".prayu/rules/more"


def test_superseded_agents_link_out_of_the_root_is_still_refused(
    workspace_root: Path, tmp_path: Path
) -> None:
    write_tree(workspace_root, {"AGENTS.override.md": "override\n"})
    (workspace_root / "AGENTS.md").symlink_to(tmp_path / "elsewhere.md")
    (tmp_path / "elsewhere.md").write_text("x\n")
    assert refused(workspace_root, "symlink").path == "AGENTS.md"


def test_link_to_an_empty_file_is_empty_source_of_that_file(workspace_root: Path) -> None:
    write_tree(workspace_root, {"CONTRIBUTING.md": "  \n"})
    (workspace_root / "CLAUDE.md").symlink_to("CONTRIBUTING.md")
    assert refused(workspace_root, "empty_source").path == "CONTRIBUTING.md"


def test_link_to_an_oversized_file_is_too_large(workspace_root: Path) -> None:
    write_tree(workspace_root, {"big.md": "x" * (64 * 1024 + 1)})
    (workspace_root / "CLAUDE.md").symlink_to("big.md")
    assert refused(workspace_root, "too_large").path == "big.md"


# -- swapped during the read (through the read seam of test_discovery_races) --------------------


class _OnRead:
    """Runs `change` once, right after the first full read of the file at `path`."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, path: Path, change: Callable[[], None]):
        self.path = str(path)
        self.fds: set[int] = set()
        self.fired = False
        real_open, real_pread = os.open, os.pread

        def fake_open(file: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            fd = real_open(file, flags, *args, **kwargs)
            if os.fspath(file) == self.path:
                self.fds.add(fd)
            return fd

        def fake_pread(fd: int, length: int, offset: int) -> bytes:
            chunk = real_pread(fd, length, offset)
            if fd in self.fds and not chunk and not self.fired:
                self.fired = True
                change()
            return chunk

        monkeypatch.setattr(os, "open", fake_open)
        monkeypatch.setattr(os, "pread", fake_pread)


def test_link_swapped_to_outside_during_the_read_is_concurrent_modification(
    workspace_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(workspace_root, {"CONTRIBUTING.md": "inside\n"})
    (tmp_path / "outside.md").write_text("outside\n")
    link = workspace_root / "CLAUDE.md"
    link.symlink_to("CONTRIBUTING.md")

    def swap() -> None:
        link.unlink()
        link.symlink_to(tmp_path / "outside.md")

    hook = _OnRead(monkeypatch, workspace_root / "CONTRIBUTING.md", swap)
    error = refused(workspace_root, "concurrent_modification")
    assert hook.fired, "the swap was never injected: the read path changed, update the test"
    assert error.path == "CLAUDE.md"
    monkeypatch.undo()
    assert refused(workspace_root, "symlink").path == "CLAUDE.md"  # and now, plainly refused


def test_link_retargeted_inside_during_the_read_is_concurrent_modification(
    workspace_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(workspace_root, {"ONE.md": "one\n", "TWO.md": "two\n"})
    link = workspace_root / "CLAUDE.md"
    link.symlink_to("ONE.md")

    def swap() -> None:
        link.unlink()
        link.symlink_to("TWO.md")

    hook = _OnRead(monkeypatch, workspace_root / "ONE.md", swap)
    assert refused(workspace_root, "concurrent_modification").path == "CLAUDE.md"
    assert hook.fired


def test_final_file_replaced_by_a_link_during_the_read_is_refused(
    workspace_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(workspace_root, {"CONTRIBUTING.md": "inside\n"})
    (tmp_path / "outside.md").write_text("outside\n")
    (workspace_root / "CLAUDE.md").symlink_to("CONTRIBUTING.md")
    final = workspace_root / "CONTRIBUTING.md"

    def swap() -> None:
        final.unlink()
        final.symlink_to(tmp_path / "outside.md")

    hook = _OnRead(monkeypatch, final, swap)
    assert refused(workspace_root, "concurrent_modification").path == "CLAUDE.md"
    assert hook.fired


def test_absolute_link_climbing_out_through_dotdot_is_refused(workspace_root: Path) -> None:
    """`/root/sub/../../x` leaves the root on the way, though the text names a path whose
    lexical form is inside it only by accident of the workspace's own name."""
    write_tree(workspace_root, {"sub/a.md": "a\n", "AGENTS.md": "root\n"})
    (workspace_root / "CLAUDE.md").symlink_to(
        f"{workspace_root}/sub/../../{workspace_root.name}/AGENTS.md"
    )
    assert "outside the workspace" in refused(workspace_root, "symlink").message


def test_absolute_link_through_a_linked_directory_is_refused(workspace_root: Path) -> None:
    write_tree(workspace_root, {"real/guide.md": "g\n"})
    (workspace_root / "linkdir").symlink_to("real", target_is_directory=True)
    (workspace_root / "CLAUDE.md").symlink_to(f"{workspace_root}/linkdir/guide.md")
    assert "linked directory" in refused(workspace_root, "symlink").message


def test_linked_override_to_a_blank_file_falls_back(workspace_root: Path) -> None:
    write_tree(workspace_root, {"AGENTS.md": "agents\n", "blank.md": "\n"})
    (workspace_root / "AGENTS.override.md").symlink_to("blank.md")
    found = snap(workspace_root)
    assert list(sources(found)) == ["AGENTS.md"]
    assert ignored(found)["AGENTS.override.md"]["reason"] == "blank_override"


@pytest.mark.parametrize(
    "final",
    [".env", "config/.env.local", "prod.env", ".envrc", ".netrc", "keys/id_ed25519",
     "certs/server.pem", "deploy.key", ".git/config", "sub/.git/HEAD", "aws/credentials"],
)  # fmt: skip
def test_link_to_a_file_that_may_hold_secrets_is_refused(workspace_root: Path, final: str) -> None:
    """A repository can ship `CLAUDE.md -> .env` for a file that only exists on your machine."""
    write_tree(workspace_root, {final: "API_TOKEN=local-only-value\n", "AGENTS.md": "a\n"})
    (workspace_root / "CLAUDE.md").symlink_to(final)
    error = refused(workspace_root, "symlink")
    assert error.path == "CLAUDE.md"
    assert "may hold secrets" in error.message
    assert "local-only-value" not in error.message


def test_git_stub_naming_an_env_file_is_text_not_a_link(workspace_root: Path) -> None:
    write_tree(workspace_root, {".env": "API_TOKEN=x\n", "CLAUDE.md": ".env"})
    assert sources(snap(workspace_root))["CLAUDE.md"]["content"] == ".env"  # not .md: no stub
