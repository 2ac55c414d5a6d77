"""What a refusal tells the person to do is something that helps: a target that is a link is
not fixed by the ignore file (it excludes instruction files, not targets), and a file over the
size bound can be left out with it (real trees)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rutter_core.discovery.fsread import FileReader
from rutter_core.discovery.walk import discover
from rutter_core.kernel.errors import RutterError
from tests.conftest import write_tree


def refusal(root: Path, target: str) -> RutterError:
    with pytest.raises(RutterError) as caught:
        discover("remedies", str(root), target, reader=FileReader())
    return caught.value


@pytest.mark.parametrize(
    ("link", "points_to"),
    [("outside.md", "../elsewhere.md"), ("dangling.md", "gone.md"), ("dir.md", "sub")],
)
def test_a_linked_target_is_never_sent_to_the_ignore_file(
    tmp_path: Path, link: str, points_to: str
) -> None:
    root = tmp_path / "ws"
    write_tree(root, {"AGENTS.md": "rules\n", "sub/AGENTS.md": "sub\n"})
    (tmp_path / "elsewhere.md").write_text("outside\n")
    (root / link).symlink_to(points_to)
    error = refusal(root, link)
    assert error.code == "symlink"
    assert error.path == link
    assert "instructions.ignore" not in error.message
    assert error.message.endswith(
        "Give the target by its real path, or point the link at a regular file inside the workspace"
    )


def test_a_linked_instruction_file_still_names_the_ignore_file(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    write_tree(root, {"x.go": ""})
    (tmp_path / "elsewhere.md").write_text("outside\n")
    (root / "CLAUDE.md").symlink_to("../elsewhere.md")
    error = refusal(root, "x.go")
    assert error.code == "symlink"
    assert error.message.endswith("or exclude CLAUDE.md in .prayu/instructions.ignore")


SECRETS = 'password = "S3cr3tPa55"\n' * 40
"""Short secrets: each marker is longer than what it replaces, so redaction grows the text."""


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("x" * 70_000, id="over the bound as read"),
        pytest.param(SECRETS + "y" * (65_500 - len(SECRETS)), id="over the bound once redacted"),
    ],
)
def test_too_large_names_the_ignore_file_as_a_way_out(tmp_path: Path, text: str) -> None:
    root = tmp_path / "ws"
    write_tree(root, {"big/AGENTS.md": text, "big/x.go": ""})
    error = refusal(root, "big/x.go")
    assert error.code == "too_large"
    assert error.path == "big/AGENTS.md"
    assert error.details["limit"] == 65_536
    assert error.message.endswith(
        "or exclude big/AGENTS.md in .prayu/instructions.ignore to leave it out of what rutter "
        "delivers"
    )
    write_tree(root, {".prayu/instructions.ignore": "big/AGENTS.md\n"})
    found = discover("remedies", str(root), "big/x.go", reader=FileReader())
    assert [entry.path for entry in found.ignored] == ["big/AGENTS.md"]
