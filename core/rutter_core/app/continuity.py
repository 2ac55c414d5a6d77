"""Operations on session continuity: the threads there are, a thread's messages and notes,
checkpoints and reading a node. One params model per operation, and `ContinuityOperations`
(`Rutter(store, reader).continuity`).

The params are what a client may send; results are the documents of `rutter_core.continuity`.
Who acts (`actor`) and where a message comes from (`source`: "cli", "lsp", later "mcp", "http"
or "import:<agent>") are the surface's own facts: keyword arguments, never params a client could
set (an unknown field such as `source` is refused).

A checkpoint spans areas, so it is orchestrated here: the files are read first (the git
identity of the workspace and discovery for the run's target, the project configuration), then
one write transaction reads the run and its verified pinned revision (runs), the active
memories' references (memory) and the thread (continuity), and appends the node with its
snapshot. A memory deleted at the same moment is therefore wholly before or after the
checkpoint: referenced at the version it had, or not at all; its body is never read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from pydantic import Field, StrictBool, StrictInt, StrictStr

from rutter_core.app.models import NullMeansAbsent, Result, allowed, whole_number
from rutter_core.continuity.model import (
    DEFAULT_LIST_LIMIT,
    MAX_LIST_LIMIT,
    AddedMessage,
    Message,
    MessageList,
    Note,
    NoteKind,
    NoteList,
    Role,
    SupersededNote,
    ThreadList,
    ThreadSummary,
)
from rutter_core.continuity.service import (
    CheckpointBasis,
    add_message,
    add_note,
    append_checkpoint,
    checkpoint_label,
    continuity_revisions,
    edit_note,
    get_node,
    list_messages,
    list_notes,
    list_threads,
    mark_delivery,
    read_git_identity,
    supersede_note,
)
from rutter_core.continuity.snapshot import (
    SNAPSHOT_MEMORY_REFERENCES,
    ContinuityNode,
    ContinuitySnapshot,
    MemoryReference,
    PinnedInstructions,
    ProjectConfiguration,
    SnapshotMemory,
)
from rutter_core.kernel.actors import Actor, OperatorActor
from rutter_core.kernel.clock import now_rfc3339
from rutter_core.kernel.errors import ConflictError, RutterError
from rutter_core.memory.policy import normalize_references
from rutter_core.memory.service import active_references
from rutter_core.runs import service as runs
from rutter_core.runs.policy import not_pinned

if TYPE_CHECKING:
    from rutter_core.app.facade import Rutter
    from rutter_core.discovery.snapshot import Snapshot
    from rutter_core.runs.model import PinnedRevision, RunRecord

ThreadId = Annotated[StrictStr, Field(description="the thread's ID (thr_...)")]
NoteId = Annotated[StrictStr, Field(description="the note's ID (note_...)")]
# The continuity policy checks these (`invalid_version`, `invalid_limit`, `invalid_role`,
# `invalid_kind`, `invalid_position`); the schemas state the same sets and bounds.
NoteVersion = Annotated[
    StrictInt, whole_number(1), Field(description="the note's version as last read")
]
RoleName = Annotated[StrictStr, allowed(Role)]
NoteKindName = Annotated[StrictStr, allowed(NoteKind)]
ListLimit = Annotated[StrictInt, whole_number(1, MAX_LIST_LIMIT)]
Position = Annotated[StrictInt, whole_number(1)]


class ContinuityParams(NullMeansAbsent):
    """Base of the continuity params: a JSON `null` means the field was not given (clients
    send null for an option that is not set)."""


class AddMessageParams(ContinuityParams):
    thread_id: ThreadId
    role: RoleName = Field(description="user, assistant, tool or system")
    text: StrictStr = Field(description="the message (stored redacted; at most 64 KiB)")
    external_id: StrictStr | None = Field(
        None, description="the message's ID where it came from: adding it again adds nothing"
    )


class ListThreadsParams(ContinuityParams):
    workspace_id: StrictStr | None = Field(
        None, description="only this workspace's threads (default: every workspace's)"
    )


class ListMessagesParams(ContinuityParams):
    thread_id: ThreadId
    limit: ListLimit = Field(DEFAULT_LIST_LIMIT, description="at most this many (1-500)")
    before_seq: Position | None = Field(
        None, description="only messages before this position (to page back)"
    )


class AddNoteParams(ContinuityParams):
    thread_id: ThreadId
    kind: NoteKindName = Field(description="decision, summary or fact")
    text: StrictStr = Field(description="the note (stored redacted; at most 16 KiB)")
    references: tuple[StrictStr, ...] = Field(
        (),
        description="what the note points at: paths, URLs or other identifiers (at most 32; "
        "checked like a memory's references)",
    )


class ListNotesParams(ContinuityParams):
    thread_id: ThreadId
    all: StrictBool = Field(False, description="include superseded notes")


class EditNoteParams(ContinuityParams):
    note_id: NoteId
    version: NoteVersion
    text: StrictStr


class SupersedeNoteParams(ContinuityParams):
    note_id: NoteId
    version: NoteVersion
    text: StrictStr | None = Field(
        None, description="the text of a new note of the same kind that replaces it"
    )


class CheckpointParams(ContinuityParams):
    run_id: StrictStr = Field(description="the run's ID (run_...)")
    title: StrictStr = Field(description="one line, at most 256 bytes")
    summary: StrictStr | None = Field(None, description="what the checkpoint marks (16 KiB)")


class DeliveryCheckpointParams(CheckpointParams):
    """A checkpoint a person may mark as the run's delivery (a completion record that makes
    the thread's referenced decisions and summaries memory candidates). Agents' surfaces take
    `CheckpointParams`, without the mark."""

    delivery: StrictBool = Field(
        False, description="the checkpoint marks the run's delivery: a completion record"
    )


class ShowNodeParams(ContinuityParams):
    node_id: StrictStr = Field(description="the continuity node's ID (node_...)")


class RevisionsParams(ContinuityParams):
    workspace_ids: tuple[StrictStr, ...] = Field(description="the workspaces to tell about")


class ContinuityRevisions(Result):
    """Each workspace's continuity revision (`continuity.recent`): it changes whenever a
    node, message or note of the workspace is written, by any process."""

    revisions: dict[str, str]


class ContinuityOperations:
    def __init__(self, rutter: Rutter) -> None:
        self._rutter = rutter

    def add_message(self, params: AddMessageParams, *, source: str) -> AddedMessage:
        return add_message(
            self._rutter.store,
            params.thread_id,
            role=params.role,
            text=params.text,
            source=source,
            external_id=params.external_id,
        )

    def threads(self, params: ListThreadsParams) -> ThreadList:
        return list_threads(self._rutter.store, params.workspace_id)

    def messages(self, params: ListMessagesParams) -> MessageList:
        return list_messages(
            self._rutter.store, params.thread_id, limit=params.limit, before_seq=params.before_seq
        )

    def add_note(self, params: AddNoteParams, *, actor: OperatorActor) -> Note:
        # A note's references may become a memory's (experience candidates): the same rules.
        references = normalize_references(params.references)
        return add_note(
            self._rutter.store, params.thread_id, kind=params.kind, text=params.text,
            references=references, actor=actor,
        )  # fmt: skip

    def notes(self, params: ListNotesParams) -> NoteList:
        return list_notes(self._rutter.store, params.thread_id, include_superseded=params.all)

    def edit_note(self, params: EditNoteParams, *, actor: OperatorActor) -> Note:
        return edit_note(
            self._rutter.store, params.note_id, version=params.version, text=params.text,
            actor=actor,
        )  # fmt: skip

    def supersede_note(
        self, params: SupersedeNoteParams, *, actor: OperatorActor
    ) -> SupersededNote:
        return supersede_note(
            self._rutter.store, params.note_id, version=params.version, text=params.text,
            actor=actor,
        )  # fmt: skip

    def checkpoint(self, params: CheckpointParams, *, actor: Actor) -> ContinuityNode:
        """Append an immutable checkpoint node of the run (below its latest checkpoint, or its
        root) holding a `continuity_snapshot.v1`. A run with no pinned revision yet is
        `run_not_pinned`: a checkpoint always names the instructions a fork would pin."""
        label = checkpoint_label(params.title, params.summary)
        store = self._rutter.store
        with store.read() as conn:
            run = runs.load_run(conn, params.run_id)
            root = runs.workspace_root(conn, run, machine=self._rutter.machine_id)
        # The files, before the write lock: git's identity and discovery read the disk.
        git = read_git_identity(root).to_snapshot()
        live = runs.discover_live(run, root, self._rutter.reader)
        now = now_rfc3339()
        with store.write() as conn:
            run = runs.load_run(conn, params.run_id)
            if runs.workspace_root(conn, run, machine=self._rutter.machine_id) != root:
                raise ConflictError(
                    "conflict",
                    f"workspace {run.workspace_id!r} was moved while the checkpoint was taken; "
                    "nothing was appended, try again",
                    details={"workspace_id": run.workspace_id},
                )
            pinned = runs.latest_pinned(conn, run)
            if pinned is None:
                raise not_pinned(run.run_id)
            references, total = active_references(
                conn, workspace_id=run.workspace_id, now_text=now, limit=SNAPSHOT_MEMORY_REFERENCES
            )
            basis = CheckpointBasis(
                workspace_id=run.workspace_id,
                mission_id=run.mission_id,
                run_id=run.run_id,
                session_id=run.session_id,
                thread_id=run.thread_id,
                mode=run.mode,
                instructions=_pinned(run, pinned),
                project_configuration=_configuration(live, pinned),
                memory=SnapshotMemory(
                    total_active=total,
                    truncated=total > len(references),
                    references=tuple(
                        MemoryReference(
                            memory_id=ref.memory_id,
                            version=ref.version,
                            content_sha256=ref.content_sha256,
                        )
                        for ref in references
                    ),
                ),
                git=git,
            )
            node = append_checkpoint(conn, basis, label, actor=actor, now=now)
            if isinstance(params, DeliveryCheckpointParams) and params.delivery:
                mark_delivery(conn, node, actor=actor, now=now)
            return node

    def revisions(self, params: RevisionsParams) -> ContinuityRevisions:
        """One cheap read: what an editor polls to notice continuity changes of any process."""
        with self._rutter.store.read() as conn:
            return ContinuityRevisions(revisions=continuity_revisions(conn, params.workspace_ids))

    def node(self, params: ShowNodeParams) -> ContinuityNode:
        """A continuity node, its snapshot verified (`not_found`, `snapshot_tampered`)."""
        return get_node(self._rutter.store, params.node_id)


def _pinned(run: RunRecord, pinned: PinnedRevision) -> PinnedInstructions:
    return PinnedInstructions(
        run_id=run.run_id,
        revision=pinned.revision,
        fingerprint=pinned.fingerprint,
        target_path=run.target_path,
    )


def _configuration(live: Snapshot | RutterError, pinned: PinnedRevision) -> ProjectConfiguration:
    if isinstance(live, RutterError):
        return ProjectConfiguration(fingerprint=None, matches_pinned=False, reason=live.code)
    return ProjectConfiguration(
        fingerprint=live.fingerprint,
        matches_pinned=live.fingerprint == pinned.fingerprint,
        reason=None,
    )


__all__ = [
    "AddMessageParams",
    "AddNoteParams",
    "AddedMessage",
    "CheckpointParams",
    "ContinuityNode",
    "ContinuityOperations",
    "ContinuityRevisions",
    "ContinuitySnapshot",
    "DeliveryCheckpointParams",
    "EditNoteParams",
    "ListMessagesParams",
    "ListNotesParams",
    "ListThreadsParams",
    "Message",
    "MessageList",
    "Note",
    "NoteList",
    "RevisionsParams",
    "ShowNodeParams",
    "SupersedeNoteParams",
    "SupersededNote",
    "ThreadList",
    "ThreadSummary",
]
