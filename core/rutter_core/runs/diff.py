"""A run's pinned snapshot against the instructions on disk: what changed (the
`diff` of docs/reference/runs.md), and the inspection built from it."""

from __future__ import annotations

from typing import Any, Final

from rutter_core.discovery.snapshot import SOURCE_FINGERPRINT_EXCLUDES, Snapshot, Source
from rutter_core.kernel.errors import RutterError
from rutter_core.runs.model import (
    LiveFailure,
    PinnedRevision,
    RunInspection,
    RunRecord,
    SnapshotDiff,
)

# Fields of a source that describe where it sits in the stack rather than what it says; a
# difference only there is reported as `order_changed`, not as `changed`.
_POSITION_FIELDS: Final = frozenset({"ordinal", "precedence"})


def _compared(source: Source) -> dict[str, Any]:
    body = source.model_dump(mode="json", exclude_none=True)
    return {
        key: value
        for key, value in body.items()
        if key not in SOURCE_FINGERPRINT_EXCLUDES and key not in _POSITION_FIELDS
    }


def diff_snapshots(pinned: Snapshot | None, live: Snapshot | None) -> SnapshotDiff:
    """What changed from `pinned` (None: the run has no revision, compared as an empty
    snapshot) to `live` (None: live discovery failed, so there is nothing to compare and the
    diff is empty).

    - `added` / `removed`: source paths only in `live` / only in `pinned`, each in its order.
    - `changed`: paths in both whose fingerprinted fields differ (content digest, kind, size,
      redactions, ...), apart from their position (`ordinal`, `precedence`).
    - `order_changed`: the paths in both appear in another relative order.
    - `ignored_changed`: the ignored entries differ.
    - `requires_confirmation`: `live` exists and its fingerprint is not the pinned one (with
      no pinned snapshot, any live one).
    """
    from_fingerprint = None if pinned is None else pinned.fingerprint
    if live is None:
        return SnapshotDiff(
            from_fingerprint=from_fingerprint,
            to_fingerprint=None,
            added=(),
            removed=(),
            changed=(),
            order_changed=False,
            ignored_changed=False,
            requires_confirmation=False,
        )
    old = list(pinned.sources) if pinned is not None else []
    new = list(live.sources)
    old_by_path = {source.path: source for source in old}
    new_by_path = {source.path: source for source in new}
    added = tuple(source.path for source in new if source.path not in old_by_path)
    removed = tuple(source.path for source in old if source.path not in new_by_path)
    changed_fields: dict[str, tuple[str, ...]] = {}
    for source in new:
        before = old_by_path.get(source.path)
        if before is None:
            continue
        was, now = _compared(before), _compared(source)
        fields = tuple(
            sorted(key for key in was.keys() | now.keys() if was.get(key) != now.get(key))
        )
        if fields:
            changed_fields[source.path] = fields
    common_old = [source.path for source in old if source.path in new_by_path]
    common_new = [source.path for source in new if source.path in old_by_path]
    old_ignored = (
        [entry.model_dump(exclude_none=True) for entry in pinned.ignored] if pinned else []
    )
    new_ignored = [entry.model_dump(exclude_none=True) for entry in live.ignored]
    return SnapshotDiff(
        from_fingerprint=from_fingerprint,
        to_fingerprint=live.fingerprint,
        added=added,
        removed=removed,
        changed=tuple(changed_fields),
        order_changed=common_old != common_new,
        ignored_changed=old_ignored != new_ignored,
        requires_confirmation=live.fingerprint != from_fingerprint,
        changed_fields=changed_fields,
    )


def inspection_of(
    run: RunRecord, pinned: PinnedRevision | None, live: Snapshot | RutterError
) -> RunInspection:
    """`run`'s inspection: its latest revision `pinned` (None: it has none) against `live`,
    the snapshot discovery gives now or the error it failed closed with."""
    live_snapshot = live if isinstance(live, Snapshot) else None
    diff = diff_snapshots(None if pinned is None else pinned.snapshot, live_snapshot)
    return RunInspection(
        run_id=run.run_id,
        revision=None if pinned is None else pinned.revision,
        pinned=pinned,
        live=LiveFailure.of(live) if isinstance(live, RutterError) else live,
        stale=diff.requires_confirmation,
        diff=diff,
        run=run,
    )
