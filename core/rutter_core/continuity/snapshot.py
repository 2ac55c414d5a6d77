"""`continuity_snapshot.v1`: what a checkpoint node holds, and the node as every surface shows
it (docs/reference/continuity.md).

A snapshot is bounded and redacted: the checkpoint's title and summary (redacted), the latest
summary of the thread, its most recent messages with their provenance (each text cut at
`SNAPSHOT_MESSAGE_BYTES`), references to the active memories (ID, version, content digest: never
a body), the run's pinned instructions (run, revision, fingerprint: enough to pin the very same
snapshot again from the append-only ledger), the project configuration fingerprint, the git
identity of the workspace, what a fork or resume takes (`inherits`) and an authority projection
that is all false by type.

`fingerprint` is the JCS SHA-256 of the document without `fingerprint` and `created_at`, the one
time in it: the same state checkpointed twice has the same fingerprint.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import Field

from rutter_core.continuity.git import GitReason
from rutter_core.continuity.model import ContinuityDocument, Role
from rutter_core.discovery.fingerprint import fingerprint
from rutter_core.kernel.actors import CREATED_BY_PERSON

PROTOCOL_VERSION: Final = "continuity_snapshot.v1"
CHECKPOINT_KIND: Final = "checkpoint"
UNFINGERPRINTED: Final = frozenset({"fingerprint", "created_at"})

SNAPSHOT_MESSAGES: Final = 20
"""The most recent messages a snapshot carries."""
SNAPSHOT_MESSAGE_BYTES: Final = 16 * 1024
"""Each carried message's text is cut at this many UTF-8 bytes (`text_truncated`)."""
SNAPSHOT_MEMORY_REFERENCES: Final = 200
MAX_TITLE_BYTES: Final = 256
MAX_SUMMARY_BYTES: Final = 16 * 1024

Inherited = Literal[
    "workspace",
    "pinned_instructions",
    "compaction_summary",
    "messages",
    "memory_references",
    "pins",
]
INHERITS: Final[tuple[Inherited, ...]] = (
    "workspace",
    "pinned_instructions",
    "compaction_summary",
    "messages",
    "memory_references",
)
"""Exactly what a fork or a resume of a node takes from it; nothing else carries over. Not the
mode: `auto` and `full` waive approvals, so a forked or resumed run starts in the default
`ask`, like its profile (none), whatever the source run had."""

ProjectConfigurationBasis = Literal["live_instructions"]


SummarySource = Literal["summary_note", "compaction", "imported_compaction"]
SUMMARY_SOURCES: Final[dict[str, SummarySource]] = {
    "note": "summary_note",
    "compaction": "compaction",
    "imported": "imported_compaction",
}
"""`continuity.compaction.latest`'s sources, as a snapshot names them."""


class SnapshotSummary(ContinuityDocument):
    """The latest summary of the thread when the checkpoint was taken: of rutter's last
    compaction (`compaction`) and a compaction summary an imported transcript carried
    (`imported_compaction`), the one standing for the later message; when there is neither,
    the thread's active `summary` note written or edited last (`summary_note`). `note_id` is
    the ID of where it came from: a `cmp_`, `msg_` or `note_` ID (the field keeps its first
    name so that checkpoints stored before compactions existed still verify)."""

    source: SummarySource = "summary_note"
    note_id: str
    version: int
    text: str
    redacted: bool


class SnapshotMessage(ContinuityDocument):
    """A carried message with its provenance; `bytes` is its whole text's size."""

    message_id: str
    seq: int
    role: Role
    source: str
    external_id: str | None
    text: str
    redacted: bool
    text_truncated: bool
    bytes: int


class SnapshotMessages(ContinuityDocument):
    total: int
    """How many messages the thread had: `items` are the last of them, oldest first."""
    items: tuple[SnapshotMessage, ...]


class MemoryReference(ContinuityDocument):
    """An active memory as the checkpoint saw it: identity, version and content digest."""

    memory_id: str
    version: int
    content_sha256: str


class SnapshotMemory(ContinuityDocument):
    total_active: int
    """Active memories of the local user and the run's workspace at the checkpoint."""
    truncated: bool
    references: tuple[MemoryReference, ...]
    """User memories first, then the workspace's, each by ID; at most 200."""


class PinnedInstructions(ContinuityDocument):
    """The run's pinned instruction revision: a fork pins this exact revision (read from the
    append-only ledger and checked against `fingerprint`) as revision 1 of its run."""

    run_id: str
    revision: int
    fingerprint: str
    target_path: str


class ProjectConfiguration(ContinuityDocument):
    """The project's configuration as rutter reads it: the fingerprint of the instruction
    snapshot that discovery yields for the run's target at the checkpoint (the instruction and
    `.prayu/` files on disk), null with the discovery error's code when it fails closed."""

    basis: ProjectConfigurationBasis = "live_instructions"
    fingerprint: str | None
    matches_pinned: bool
    reason: str | None


class SnapshotGit(ContinuityDocument):
    branch: str | None
    head: str = Field(pattern=r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
    """The full object ID: 40 hex digits (SHA-1) or 64 (SHA-256)."""


class Authority(ContinuityDocument):
    """What a snapshot can grant: nothing, by type (a `true` anywhere fails validation)."""

    approvals: Literal[False] = False
    capability_grants: Literal[False] = False
    credentials: Literal[False] = False
    debug_sessions: Literal[False] = False
    execution_leases: Literal[False] = False
    network_authorization: Literal[False] = False
    processes: Literal[False] = False
    terminal_leases: Literal[False] = False
    execution_profiles: Literal[False] = False


class ContinuitySnapshot(ContinuityDocument):
    protocol_version: Literal["continuity_snapshot.v1"] = PROTOCOL_VERSION
    fingerprint: str
    created_at: str
    workspace_id: str
    mission_id: str
    run_id: str
    session_id: str
    thread_id: str
    mode: str
    title: str
    summary: str | None
    redacted: bool
    """A secret was cut out of the title or the summary."""
    compaction_summary: SnapshotSummary | None
    messages: SnapshotMessages
    memory: SnapshotMemory
    instructions: PinnedInstructions
    project_configuration: ProjectConfiguration
    git: SnapshotGit | None
    """The workspace's git identity: the branch (null when detached) and the full HEAD."""
    git_reason: GitReason | None
    """Why `git` is null (`continuity.git`): `not_a_git_work_tree`, `unborn_branch`, ..."""
    inherits: tuple[Inherited, ...] = INHERITS
    authority: Authority = Field(default_factory=Authority)


def snapshot_fingerprint(document: dict[str, Any]) -> str:
    """The JCS SHA-256 of a snapshot document without its fingerprint and its time."""
    return fingerprint(document, exclude=UNFINGERPRINTED)


class ContinuityNode(ContinuityDocument):
    """A continuity node (`session_continuity_node.v1`) and, for a checkpoint, its verified
    snapshot."""

    protocol_version: Literal["session_continuity_node.v1"] = "session_continuity_node.v1"
    node_id: str
    parent_node_id: str | None
    kind: str
    run_id: str
    session_id: str
    thread_id: str
    title: str | None
    created_by: str
    created_by_person: str | None = Field(description=CREATED_BY_PERSON)
    created_at: str
    snapshot: ContinuitySnapshot | None


__all__ = [
    "CHECKPOINT_KIND",
    "INHERITS",
    "MAX_SUMMARY_BYTES",
    "MAX_TITLE_BYTES",
    "PROTOCOL_VERSION",
    "SNAPSHOT_MEMORY_REFERENCES",
    "SNAPSHOT_MESSAGES",
    "SNAPSHOT_MESSAGE_BYTES",
    "SUMMARY_SOURCES",
    "Authority",
    "ContinuityNode",
    "ContinuitySnapshot",
    "Inherited",
    "MemoryReference",
    "PinnedInstructions",
    "ProjectConfiguration",
    "SnapshotGit",
    "SnapshotMemory",
    "SnapshotMessage",
    "SnapshotMessages",
    "SnapshotSummary",
    "SummarySource",
    "snapshot_fingerprint",
]
