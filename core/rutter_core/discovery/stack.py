"""What the walk found for one target: the sources in precedence order, what was ignored, and
the conflicts between sources of one role (the nearer one wins)."""

from __future__ import annotations

from dataclasses import dataclass

from rutter_core.discovery.layout import PRAYU_DIR, PRAYU_RULES, join_rel, precedence
from rutter_core.discovery.snapshot import Conflict, IgnoredEntry, Limits, SourceKind
from rutter_core.discovery.sourcetext import SourceText


@dataclass(frozen=True, slots=True)
class StackSource:
    """A delivered source as the walk found it, before ordinals and explanations."""

    path: str
    kind: SourceKind
    scope: str
    """The level (directory) whose walk read it; `.` for the root."""
    depth: int
    slot: int
    text: SourceText
    notes: tuple[str, ...] = ()
    """Extra reasons (fallbacks, replacements), in the order they arose."""
    link_target: str | None = None
    """A link's final file (docs/reference/discovery.md), workspace-relative; None for a regular
    file."""
    link_stub: bool = False
    link_hops: tuple[str, ...] = ()
    """The other links a link's chain passes through (`Checked.link_hops`)."""

    @property
    def precedence(self) -> int:
        return precedence(self.depth, self.slot)

    @property
    def role(self) -> str:
        """What it competes for: sources of one role conflict, the nearer one wins."""
        if self.kind == "agents_override":
            return "agents"
        if self.kind == "prayu_rule":
            prefix = join_rel(self.scope, f"{PRAYU_DIR}/{PRAYU_RULES}/")
            return f"prayu_rule:{self.path[len(prefix) :]}"
        return self.kind


@dataclass(frozen=True, slots=True)
class Stack:
    """The result of discovery's walk for one target, frozen and typed: the sources in
    precedence order, what was ignored (and why), and the conflicts between sources.

    `discover` builds the snapshot from it; callers that need only which sources apply (the
    language server's index) use `discover_stack` and skip the snapshot. Cached source texts
    are the same objects while their files' identities hold, so stacks of an unchanged tree
    compare equal cheaply.
    """

    workspace_id: str
    workspace_root: str
    target: str
    """Canonical workspace-relative target."""
    target_dir: str
    """The deepest directory walked (the target itself when it is a directory)."""
    limits: Limits
    sources: tuple[StackSource, ...]
    ignored: tuple[IgnoredEntry, ...]
    conflicts: tuple[Conflict, ...]


def conflicts_of(sources: tuple[StackSource, ...]) -> tuple[Conflict, ...]:
    """Each source against the previous one of its role: both apply, the nearer one wins."""
    conflicts: list[Conflict] = []
    last_by_role: dict[str, StackSource] = {}
    for item in sources:
        role = item.role
        lower = last_by_role.get(role)
        if lower is not None:
            conflicts.append(
                Conflict(
                    role=role,
                    lower_precedence_path=lower.path,
                    higher_precedence_path=item.path,
                    resolution=(
                        f"both apply; {item.path} is nearer to the target and wins where "
                        "they conflict"
                    ),
                )
            )
        last_by_role[role] = item
    return tuple(conflicts)
