"""Every file of the repository explains itself or points into it: none cites a document that
is not in the repository (the product's reference is docs/reference/). A citation of the old
outside document by section number, or by name, fails here with the file and line."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Words may be split by a line break and a comment marker (`#`, `*`, `//`, `--`).
_GAP = r"(?:\s|#|\*(?!/)|//|--)+"
OUTSIDE_CITATIONS = re.compile(
    "|".join(
        (
            rf"\bcontract{_GAP}(?:sections?{_GAP})?§?\d",  # "contract section 5.3", "contract 8"
            rf"\bcontract{_GAP}sections?\b",
            r"\bthe contract's\b",
            r"\bCONTRACT\.md\b",
            r"\bseed-context",
            r"\bthe seed's\b",
        )
    ),
    re.IGNORECASE,
)


def tracked_text_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    return [ROOT / name.decode() for name in listed if name]


def citations(text: str) -> list[int]:
    """The line numbers where `text` cites the outside document."""
    return [text.count("\n", 0, match.start()) + 1 for match in OUTSIDE_CITATIONS.finditer(text)]


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("see contract section 5.3 here", [1]),
        ("a\n(contract 8)", [2]),
        ("# the error document (contract\n# section 7)", [1]),
        (" * as in contract\n *   sections 5.5, 5.6", [1]),
        ("the contract's rule", [1]),
        ("see CONTRACT.md", [1]),
        ("the seed's audit", [1]),
        ("import-linter contracts in pyproject.toml; an import contract forbids it", []),
        ("docs/reference/discovery.md, section 5", []),
    ],
)
def test_the_pattern_finds_each_form_of_citation(text: str, lines: list[int]) -> None:
    assert citations(text) == lines


def test_no_file_cites_a_document_outside_the_repository() -> None:
    found: list[str] = []
    files = tracked_text_files()
    assert any(path.name == "architecture.md" for path in files)  # the listing is real
    for path in files:
        if path == Path(__file__).resolve() or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # binary (images)
        found += [f"{path.relative_to(ROOT)}:{line}" for line in citations(text)]
    assert found == [], "cite docs/reference/ instead: " + ", ".join(found)


def test_every_reference_page_a_file_cites_exists() -> None:
    cited: set[str] = set()
    for path in tracked_text_files():
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        cited.update(re.findall(r"reference/([a-z-]+\.md)", text))
    assert "discovery.md" in cited  # the code does point into the reference
    missing = sorted(page for page in cited if not (ROOT / "docs/reference" / page).is_file())
    assert missing == []
