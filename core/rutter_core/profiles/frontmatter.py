"""The front matter of a rule file: the block between a first line `---` and the next `---`.

Agents' front matter is YAML in name only: Cursor writes `globs: src/**/*.ts, *.md` unquoted
(which YAML would refuse), Copilot quotes, Claude Code lists. This reads what they write, and
nothing more: `key: value` lines, `- item` lines under a key, `[a, b]` lists, quotes removed,
`true`/`false` as booleans. What it cannot read is left out, never an error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

MAX_FRONT_MATTER_LINES: Final = 200


@dataclass(frozen=True, slots=True)
class FrontMatter:
    values: dict[str, object] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    """The 0-based line of each key in the file (for diagnostics)."""
    present: bool = False

    def get(self, key: str) -> object:
        return self.values.get(key)

    def flag(self, key: str) -> bool:
        value = self.values.get(key)
        return value is True


def _scalar(text: str) -> object:
    value = text.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    lowered = value.lower()
    if lowered == "true":
        return True
    if lowered == "false":
        return False
    if value.startswith("[") and value.endswith("]"):
        inner = value[1:-1]
        return [item for item in (_scalar(part) for part in inner.split(",")) if item != ""]
    return value


def parse_front_matter(text: str) -> FrontMatter:
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return FrontMatter()
    values: dict[str, object] = {}
    where: dict[str, int] = {}
    current: str | None = None
    for number, line in enumerate(lines[1:MAX_FRONT_MATTER_LINES], start=1):
        stripped = line.strip()
        if stripped == "---":
            return FrontMatter(values, where, True)
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("- ") or stripped == "-":
            if current is not None:
                item = _scalar(stripped[1:])
                existing = values.get(current)
                if isinstance(existing, list):
                    existing.append(item)
                else:
                    values[current] = [item]
            continue
        key, colon, rest = stripped.partition(":")
        if not colon or line[:1].isspace():
            continue
        current = key.strip()
        where[current] = number
        values[current] = _scalar(rest) if rest.strip() else []
    return FrontMatter()  # never closed: not front matter


def body_start(text: str) -> int:
    """The character offset where the body starts (after the front matter, if any)."""
    if not text.startswith("---"):
        return 0
    end = text.find("\n---", 3)
    if end < 0:
        return 0
    newline = text.find("\n", end + 4)
    return len(text) if newline < 0 else newline + 1
