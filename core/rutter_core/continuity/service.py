"""Session continuity's entry point: every continuity operation the app layer calls, in one
place, as each area's `service` is for its area.

The operations live in the modules that own them (`threads`, `sessions`, `nodes`, `messages`,
`notes`, `checkpoints`, `branches`, `recent`, `lineage`, `removal`, `indexing`, `compare`,
`git`, `git_remote`, `policy`; the tables in `repo`); the app layer imports them from here, and
continuity's models from `model`, `snapshot` and `tree` (the session tree's shapes and its
builder over facts the app gathers). An import contract keeps it so: an app module that imports
another continuity module breaks `make lint`. Pins, compaction and transcript import are
packages of their own, each with its `service`. The runs area creates a run's thread, session
and first node through `threads`, `sessions` and `nodes` themselves: the one insert path of
every run, kept to the modules it needs (a cold `rutter run create` imports no checkpoint,
compare or redaction code).

Every function takes the caller's `Connection`, so an operation that spans areas (a run's
creation, a checkpoint, a fork, a workspace's removal) is one transaction.
"""

from __future__ import annotations

from rutter_core.continuity.branches import (
    BranchedRun,
    PinnedRef,
    branch_origin,
    branchable_node,
    inherited,
    keyed_branch,
    pinned_of,
    record_keyed_branch,
    refuse_projected,
    require_pinned_match,
)
from rutter_core.continuity.checkpoints import (
    CheckpointBasis,
    append_checkpoint,
    checkpoint_label,
    get_node,
    mark_delivery,
    read_node,
)
from rutter_core.continuity.compare import (
    ComparedNode,
    NodeComparison,
    PinnedFingerprint,
    compare,
    compared,
)
from rutter_core.continuity.git import GitIdentity, read_git_identity
from rutter_core.continuity.git_remote import read_origin_url
from rutter_core.continuity.indexing import index_existing
from rutter_core.continuity.lineage import lineage_threads
from rutter_core.continuity.messages import add_message, list_messages
from rutter_core.continuity.nodes import BranchKind, BranchPoint, add_branch_marker, add_root_node
from rutter_core.continuity.notes import add_note, edit_note, list_notes, supersede_note
from rutter_core.continuity.policy import require_external_id, require_thread_id
from rutter_core.continuity.recent import (
    DEFAULT_RECENT,
    MAX_RECENT,
    StoredNode,
    recent_nodes,
)
from rutter_core.continuity.recent import revisions as continuity_revisions
from rutter_core.continuity.removal import (
    count_sessions,
    count_threads_without_session,
    remove_sessions_and_threads,
    remove_thread_contents,
)
from rutter_core.continuity.sessions import close_session, open_session
from rutter_core.continuity.thread_list import list_threads
from rutter_core.continuity.threads import require_continuable_thread, runs_of_thread, start_thread

__all__ = [
    "DEFAULT_RECENT",
    "MAX_RECENT",
    "BranchKind",
    "BranchPoint",
    "BranchedRun",
    "CheckpointBasis",
    "ComparedNode",
    "GitIdentity",
    "NodeComparison",
    "PinnedFingerprint",
    "PinnedRef",
    "StoredNode",
    "add_branch_marker",
    "add_message",
    "add_note",
    "add_root_node",
    "append_checkpoint",
    "branch_origin",
    "branchable_node",
    "checkpoint_label",
    "close_session",
    "compare",
    "compared",
    "continuity_revisions",
    "count_sessions",
    "count_threads_without_session",
    "edit_note",
    "get_node",
    "index_existing",
    "inherited",
    "keyed_branch",
    "lineage_threads",
    "list_messages",
    "list_notes",
    "list_threads",
    "mark_delivery",
    "open_session",
    "pinned_of",
    "read_git_identity",
    "read_node",
    "read_origin_url",
    "recent_nodes",
    "record_keyed_branch",
    "refuse_projected",
    "remove_sessions_and_threads",
    "remove_thread_contents",
    "require_continuable_thread",
    "require_external_id",
    "require_pinned_match",
    "require_thread_id",
    "runs_of_thread",
    "start_thread",
    "supersede_note",
]
