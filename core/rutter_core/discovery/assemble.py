"""From a stack to its snapshot (docs/reference/discovery.md): ordinals, explanations
(`why_effective`), the fingerprint, and the reuse of a snapshot assembled earlier from an equal
stack."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from rutter_core.discovery.fsread import FileReader
from rutter_core.discovery.layout import (
    AGENTS_NAME,
    CLAUDE_DIR,
    CLAUDE_NAME,
    OVERRIDE_NAME,
    PRAYU_DIR,
    PRAYU_INSTRUCTIONS,
)
from rutter_core.discovery.snapshot import (
    AUTHORITY_JSON,
    PROTOCOL_VERSION,
    TRUST_CLASS,
    Snapshot,
    SourceKind,
    snapshot_fingerprint,
)
from rutter_core.discovery.stack import Stack, StackSource
from rutter_core.kernel.clock import rfc3339, utc_now

_KIND_LABELS: dict[SourceKind, str] = {
    "agents_override": OVERRIDE_NAME,
    "agents": AGENTS_NAME,
    "claude": CLAUDE_NAME,
    "claude_dir": f"{CLAUDE_DIR}/{CLAUDE_NAME}",
    "prayu_instructions": f"{PRAYU_DIR}/{PRAYU_INSTRUCTIONS}",
    "prayu_rule": "rule",
}


def snapshot_of(
    stack: Stack, *, reader: FileReader, now: Callable[[], datetime] = utc_now
) -> Snapshot:
    """The snapshot of a discovered stack, `loaded_at` now.

    A snapshot assembled earlier from an equal stack is reused (kept by `reader`): its sources
    keep the time their content was loaded; the snapshot says when it was checked.
    """
    loaded_at = rfc3339(now())
    key = ("snapshot", stack.workspace_id, stack.workspace_root, stack.target, stack.limits)
    previous = reader.recall(key, stack)
    if isinstance(previous, Snapshot):
        return previous.model_copy(update={"loaded_at": loaded_at})
    snapshot = _assemble(stack, loaded_at)
    reader.remember(key, stack, snapshot)
    return snapshot


def _label(item: StackSource) -> str:
    if item.kind == "prayu_rule":
        rule = item.role.removeprefix("prayu_rule:")
        if item.scope == ".":
            return f"workspace-root rule {rule}"
        return f"rule {rule} of {item.scope}"
    if item.scope == ".":
        return f"workspace-root {_KIND_LABELS[item.kind]}"
    return item.path


def _reach(item: StackSource, target: str, target_dir: str) -> str:
    depth = item.depth
    if item.scope != target_dir:
        return f"inherited by {target} (depth {depth})"
    if target == target_dir:
        if target == ".":
            return "applies to the whole workspace (depth 0)"
        return f"applies to {target} itself and everything below it (depth {depth})"
    return f"applies to {target} in its own directory (depth {depth})"


def _assemble(stack: Stack, loaded_at: str) -> Snapshot:
    target, target_dir = stack.target, stack.target_dir
    wins_over: dict[str, list[str]] = {}
    loses_to: dict[str, list[str]] = {}
    for conflict in stack.conflicts:
        lower, higher = conflict.lower_precedence_path, conflict.higher_precedence_path
        wins_over.setdefault(higher, []).append(lower)
        loses_to.setdefault(lower, []).append(higher)

    # Built as plain JSON first: the fingerprint is taken from exactly what is emitted, and
    # one validation of the whole document is much cheaper than a model per source.
    sources: list[dict[str, Any]] = []
    for index, item in enumerate(stack.sources):
        why = [_label(item), _reach(item, target, target_dir), *item.notes]
        if item.link_target is not None:
            how = "a git link stub naming" if item.link_stub else "a link to"
            why.insert(1, f"{how} {item.link_target}, whose content it delivers")
        if item.kind == "claude_dir":
            why.append(f"its scope is {item.scope}, the directory holding .claude/")
        why.extend(f"overrides {rel} where they conflict" for rel in wins_over.get(item.path, []))
        why.extend(
            f"{rel} is nearer to the target and wins where they conflict"
            for rel in loses_to.get(item.path, [])
        )
        text = item.text
        source: dict[str, Any] = {
            "ordinal": index + 1,
            "path": item.path,
            "kind": item.kind,
            "scope": item.scope,
            "depth": item.depth,
            "precedence": item.precedence,
            "bytes": text.raw_bytes,
            "content": text.content,
            "content_sha256": text.content_sha256,
            "loaded_at": loaded_at,
            "trust": TRUST_CLASS,
            "applicable_to": [target],
            "why_effective": "; ".join(why),
            "redacted": text.redaction.redacted,
            "redactions": [
                {"kind": kind, "count": count} for kind, count in text.redaction.counts()
            ],
            "authority": AUTHORITY_JSON,
        }
        if item.link_target is not None:  # absent otherwise: link-free fingerprints unchanged
            source["link_target"] = item.link_target
            if item.link_stub:
                source["link_stub"] = True
        sources.append(source)
    document: dict[str, Any] = {
        "protocol_version": PROTOCOL_VERSION,
        "workspace_id": stack.workspace_id,
        "target_path": target,
        "fingerprint": "",
        "loaded_at": loaded_at,
        "limits": stack.limits.model_dump(),
        "sources": sources,
        "ignored": [entry.model_dump(exclude_none=True) for entry in stack.ignored],
        "conflicts": [conflict.model_dump() for conflict in stack.conflicts],
    }
    document["fingerprint"] = snapshot_fingerprint(document)
    return Snapshot.model_validate(document)
