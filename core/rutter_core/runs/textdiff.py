"""The text of a run's drift, for review before a confirmed refresh: one unified diff per source
that changed (pinned → live), and added or removed sources whole (`rutter context instructions
--run RUN --diff`).

Both sides are the snapshots' contents, which discovery has already redacted
(docs/reference/redaction.md), so a review never shows a secret the snapshot would not. Built with
`difflib`; lines keep their endings, and a last line without one is marked as `diff` marks it.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Final

from rutter_core.discovery.snapshot import Snapshot
from rutter_core.runs.model import RunInspection

NO_FILE: Final = "/dev/null"
_NO_NEWLINE: Final = "\\ No newline at end of file\n"


def source_diffs(inspection: RunInspection) -> dict[str, str]:
    """Unified diff text per path, pinned → live: changed sources, then added, then removed
    (each in the drift's order). Empty when live discovery failed or nothing drifted. A
    changed source whose text is the same (only its kind or place changed) has an empty text.
    """
    live = inspection.live_snapshot
    if live is None:
        return {}
    pinned: Snapshot | None = None if inspection.pinned is None else inspection.pinned.snapshot
    old = {source.path: source.content for source in (pinned.sources if pinned else ())}
    new = {source.path: source.content for source in live.sources}
    label = "pinned" if inspection.revision is None else f"pinned revision {inspection.revision}"
    diff = inspection.diff
    texts: dict[str, str] = {}
    for path in diff.changed:
        texts[path] = unified(old[path], new[path], f"a/{path}\t({label})", f"b/{path}\t(live)")
    for path in diff.added:
        texts[path] = unified("", new[path], NO_FILE, f"b/{path}\t(live)")
    for path in diff.removed:
        texts[path] = unified(old[path], "", f"a/{path}\t({label})", NO_FILE)
    return texts


def unified(before: str, after: str, from_label: str, to_label: str) -> str:
    """`diff -u`'s text of `before` → `after` (empty when they are equal)."""
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=from_label,
        tofile=to_label,
        lineterm="\n",
    )
    return "".join(_marked(lines))


def _marked(lines: Iterable[str]) -> Iterable[str]:
    for line in lines:
        if line.endswith("\n"):
            yield line
        else:
            yield line + "\n"
            yield _NO_NEWLINE
