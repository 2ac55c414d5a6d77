"""Human-readable output of `session fork|resume|tree|compare`. JSON output never passes
through here.

Titles and note text are people's and agents' words: escaped, so `[...]` in them is never
console markup.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.tree import Tree

from rutter_core.app.branches import (
    BranchedRun,
    ComparedNode,
    NodeComparison,
    SessionTree,
    TreeNode,
)

SHORT = 12


def _short(fingerprint: str | None) -> str:
    return "-" if fingerprint is None else fingerprint[:SHORT] + "…"


def render_branched(console: Console, branched: BranchedRun) -> None:
    verb = "Forked" if branched.kind == "fork" else "Resumed"
    mission = "new mission" if branched.kind == "fork" else "the same mission"
    lines = (
        f"{verb} node {branched.parent_node_id} (run {branched.source_run_id}) into run "
        f"{branched.run_id}",
        f"  {mission} {branched.mission_id}, session {branched.session_id}, thread "
        f"{branched.thread_id}, branch marker {branched.node_id}",
        f"  pinned revision {branched.revision}: the node's instructions, fingerprint "
        f"{branched.fingerprint}",
        f"  status {branched.status}, mode {branched.mode}, no profile; no authority carried "
        "over (approvals, grants, credentials, leases, processes, profiles)",
        f"  inherits: {', '.join(branched.inherits)}",
        *(
            (
                f"  not inherited: {', '.join(branched.not_inherited)} (pin them again on the new "
                "thread: rutter context pin add)",
            )
            if branched.not_inherited
            else ()
        ),
        f"  drift against the disk: rutter context instructions --run {branched.run_id}",
    )
    for line in lines:
        console.print(escape(line), highlight=False, soft_wrap=True)


def _drift_line(node: TreeNode) -> str | None:
    if node.error is not None:
        return f"refused: {node.error['code']} (nothing of it is shown)"
    drift = node.drift
    if drift is None:
        return None
    parts = []
    if drift.instructions is not None:
        if drift.instructions.live_error is not None:
            parts.append(f"instructions: discovery fails now ({drift.instructions.live_error})")
        else:
            parts.append("instructions: " + ("changed" if drift.instructions.changed else "same"))
    if drift.git is not None:
        changed = [
            what
            for what, flag in (
                ("branch", drift.git.branch_changed),
                ("HEAD", drift.git.head_changed),
            )
            if flag
        ]
        parts.append("git: " + (" and ".join(changed) + " changed" if changed else "same"))
    if drift.memory:
        counts = Counter(marker.state for marker in drift.memory)
        parts.append("memory: " + ", ".join(f"{n} {state}" for state, n in sorted(counts.items())))
    return " · ".join(parts) if parts else None


def _label(node: TreeNode, parent: TreeNode | None, asked_run: str) -> str:
    head = f"{node.kind} {node.node_id}"
    if node.projected:
        head += " (projected)"
    if node.title is not None:
        head += f' "{node.title}"'
    if node.fingerprint is not None:
        head += f" · fingerprint {_short(node.fingerprint)}"
    if node.compaction is not None:
        facts = node.compaction
        head += (
            f" · {facts.compacted_message_count} messages summarized"
            f" ({facts.unread_message_count} not read) by {facts.summarizer}"
        )
    if parent is None or parent.run_id != node.run_id:
        head += f" · run {node.run_id} ({node.run_status})"
    if node.run_id == asked_run and not node.projected:
        head += " ◀"
    drift = _drift_line(node)
    text = escape(head)
    if drift is not None:
        text += "\n[dim]drift: " + escape(drift) + "[/dim]"
    return text


def render_tree(console: Console, found: SessionTree) -> None:
    console.print(
        escape(
            f"Session tree of run {found.run_id} (session {found.session_id}) in workspace "
            f"{found.workspace_id}, drift as of {found.computed_at}; ◀ marks the run's nodes"
        ),
        highlight=False,
        soft_wrap=True,
    )
    by_id: dict[str, TreeNode] = {node.node_id: node for node in found.nodes}
    branches: dict[str, Tree] = {}
    tops: list[Tree] = []
    for node in found.nodes:  # parents come before their children
        parent = by_id.get(node.parent_node_id) if node.parent_node_id else None
        label = _label(node, parent, found.run_id)
        if parent is None:
            branch = Tree(label, guide_style="dim")
            tops.append(branch)
        else:
            branch = branches[parent.node_id].add(label)
        branches[node.node_id] = branch
    for top in tops:
        console.print(top, highlight=False)
    if found.truncated:
        console.print("More nodes are connected than listed (500 stored, 500 projected at most).")


def _branch(side: ComparedNode) -> str:
    if side.git is None:
        return "-" if side.git_reason is None else f"none ({side.git_reason})"
    return "(detached)" if side.git.branch is None else side.git.branch


def _head(side: ComparedNode) -> str:
    if side.git is None:
        return "-" if side.git_reason is None else f"none ({side.git_reason})"
    return side.git.head


def _pinned(side: ComparedNode) -> str:
    if side.instructions is None:
        return "-"
    return f"revision {side.instructions.revision}, {_short(side.instructions.fingerprint)}"


def _count(value: int | None) -> str:
    return "-" if value is None else str(value)


def render_comparison(console: Console, found: NodeComparison) -> None:
    a, b, same = found.a, found.b, found.same
    rows: Sequence[tuple[str, str, str, bool | None]] = (
        ("node", f"{a.kind} {a.node_id}", f"{b.kind} {b.node_id}", None),
        ("title", a.title or "-", b.title or "-", None),
        ("fingerprint", _short(a.fingerprint), _short(b.fingerprint), same.fingerprint),
        ("run", a.run_id, b.run_id, same.run),
        ("session", a.session_id, b.session_id, same.session),
        ("run status (now)", a.run_status, b.run_status, same.run_status),
        ("instructions", _pinned(a), _pinned(b), same.instructions),
        (
            "project configuration",
            _short(a.project_configuration_fingerprint),
            _short(b.project_configuration_fingerprint),
            same.project_configuration,
        ),
        ("git branch", _branch(a), _branch(b), same.git_branch),
        ("git HEAD", _head(a), _head(b), same.git_head),
        ("messages", _count(a.message_count), _count(b.message_count), same.message_count),
        ("memory references", _count(a.memory_references), _count(b.memory_references), None),
    )  # fmt: skip
    table = Table()
    table.add_column("", style="bold", no_wrap=True)
    table.add_column("A", overflow="fold")
    table.add_column("B", overflow="fold")
    table.add_column("same", no_wrap=True)
    for name, left, right, equal in rows:
        table.add_row(name, escape(left), escape(right), "" if equal is None else _yes(equal))
    console.print(table)
    memory = found.memory
    console.print(
        f"Memory references from A to B: {len(memory.added)} added, {len(memory.removed)} "
        f"removed, {len(memory.changed)} changed, {memory.unchanged} unchanged",
        highlight=False,
    )
    for ref in memory.added:
        console.print(f"  + {ref.memory_id} v{ref.version}", highlight=False)
    for ref in memory.removed:
        console.print(f"  - {ref.memory_id} v{ref.version}", highlight=False)
    for change in memory.changed:
        console.print(
            f"  ~ {change.memory_id} v{change.a_version} → v{change.b_version}", highlight=False
        )


def _yes(equal: bool) -> str:
    return "yes" if equal else "[bold]no[/bold]"
