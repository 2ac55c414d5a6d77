"""What the person is asked before a fork or resume: what the new run takes from the node
and what it does not (docs/reference/continuity.md; `continuity.snapshot.INHERITS` and `Authority`).

Taken, and only this: the workspace; the instruction snapshot the node pins, as the new run's
revision 1 (not the files on disk: a later drift is shown and refreshed by confirmation as for
any run); and from a checkpoint its compaction summary, its carried messages and its memory
references (identity, version and digest, never bodies). Never taken: approvals, capability
grants, credentials, leases, processes, network authorization, the execution profile and the
mode: the new run starts in `ask` mode with no profile in a new session and thread, a fork
under a new mission and a resume under the node's mission.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from rutter_core.app.continuity import ContinuityNode
from rutter_core.app.models import Result

CANCEL: Final = "Cancel"
ACTIONS: Final = {"fork": "Fork", "resume": "Resume"}


class CancelledBranch(Result):
    """The answer when the person did not choose Fork (Resume): nothing was written."""

    node_id: str
    cancelled: Literal[True] = True


@dataclass(frozen=True, slots=True)
class Question:
    message: str
    action: str


def _plural(count: int, one: str, many: str | None = None) -> str:
    return f"{count} {one if count == 1 else (many or one + 's')}"


def _taken(node: ContinuityNode) -> list[str]:
    snapshot = node.snapshot
    if snapshot is None:
        return [
            "the workspace",
            f"the instructions run {node.run_id} pinned first (its revision 1), as the new "
            "run's revision 1",
            f"nothing else: a {node.kind} node records no messages, summary or memory",
        ]
    pinned = snapshot.instructions
    messages = snapshot.messages
    memory = snapshot.memory
    taken = [
        "the workspace",
        f"the instructions it pins (revision {pinned.revision} of run {pinned.run_id}, "
        f"fingerprint {pinned.fingerprint[:12]}) as the new run's revision 1, not the files "
        "on disk now",
    ]
    if snapshot.compaction_summary is not None:
        taken.append("its summary")
    taken.append(
        f"its last {_plural(len(messages.items), 'message')} (of {messages.total})"
        if messages.total
        else "its messages (none)"
    )
    taken.append(
        f"{_plural(len(memory.references), 'memory reference')} (IDs, versions and digests, "
        "not the memories' text"
        + (f"; {memory.total_active} were active" if memory.truncated else "")
        + ")"
    )
    return taken


def question(kind: Literal["fork", "resume"] | str, node: ContinuityNode) -> Question:
    """The message of the `window/showMessageRequest` before a fork or resume of `node`."""
    action = ACTIONS[kind]
    what = (
        f'checkpoint "{node.title}"'
        if node.kind == "checkpoint" and node.title is not None
        else f"{node.kind} node"
    )
    where = "a new mission" if kind == "fork" else "the node's mission"
    message = (
        f"rutter: {kind} from {what} ({node.node_id}, run {node.run_id}, {node.created_at})? "
        f"A new run starts under {where}, in a new session and thread. "
        f"It takes: {'; '.join(_taken(node))}. "
        "It does not take approvals, capability grants, credentials, leases, processes, "
        "network authorization, the execution profile or the mode: it starts in ask mode "
        "with no profile."
    )
    return Question(message=message, action=action)
